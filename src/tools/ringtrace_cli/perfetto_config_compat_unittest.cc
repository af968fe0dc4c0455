/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// docs/cli.md, "Perfetto configs": a table of Perfetto-style text configs
// (test/configs/*.pbtx) and what ringtrace does with each. This test reads
// that table from the doc itself and holds every row to it, so the doc
// cannot drift from the code:
//   - each config is loaded as `ringtrace --txt -c FILE` loads it
//     (LoadTraceConfig: the file, the text parser, the service's rules);
//   - "refused": loading fails, and the error holds each `quoted` text of
//     the row's message cell (the CLI prints it and exits 2);
//   - "accepted": the real ServiceCore starts the session with one
//     connected app like ringtrace_example_app (producer "app", data
//     source track_event, categories "example", "io" and "example.detail"
//     tagged "slow"), and the start warnings the CLI would print are none
//     (the row quotes nothing);
//   - "accepted, warned": the same, and the warnings hold each `quoted`
//     text of the message cell.
// Every config of the directory has exactly one row, and every row a
// config.

#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "src/base/test/subprocess.h"
#include "src/tools/ringtrace_cli/cli_options.h"
#include "src/tools/ringtrace_cli/load_config.h"
#include "src/tracing/service/traced/test/sessions_fixture.h"

namespace ringtrace {
namespace cli {
namespace {

// The table's header row, exactly.
constexpr char kTableHeader[] =
    "| Perfetto config | test config | ringtrace | message |";

enum class Verdict { kAccepted, kWarned, kRefused };

struct Row {
  size_t line = 0;  // 1-based, in docs/cli.md
  std::string description;
  std::string file;
  Verdict verdict = Verdict::kAccepted;
  // The `quoted` texts of the message cell.
  std::vector<std::string> messages;
};

std::string DocPath() {
  return base::ExecutableDir() + "/" + RINGTRACE_CLI_DOC_FROM_BINARY;
}

std::string ConfigsDir() {
  return base::ExecutableDir() + "/" + RINGTRACE_COMPAT_CONFIGS_FROM_BINARY;
}

bool ReadWhole(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::stringstream bytes;
  bytes << in.rdbuf();
  *text = bytes.str();
  return true;
}

std::string Trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(' ');
  if (begin == std::string::npos)
    return "";
  const size_t end = s.find_last_not_of(' ');
  return s.substr(begin, end - begin + 1);
}

// The cells of a "| a | b |" row, trimmed.
std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> cells;
  size_t start = 1;  // past the leading '|'
  for (;;) {
    const size_t bar = line.find('|', start);
    if (bar == std::string::npos)
      break;
    cells.push_back(Trim(line.substr(start, bar - start)));
    start = bar + 1;
  }
  return cells;
}

// The texts between pairs of backticks.
std::vector<std::string> Quoted(const std::string& cell) {
  std::vector<std::string> texts;
  size_t pos = 0;
  for (;;) {
    const size_t open = cell.find('`', pos);
    if (open == std::string::npos)
      break;
    const size_t close = cell.find('`', open + 1);
    if (close == std::string::npos)
      break;
    texts.push_back(cell.substr(open + 1, close - open - 1));
    pos = close + 1;
  }
  return texts;
}

// Reads the table out of |doc|; "" on success, else what is wrong.
std::string ParseTable(const std::string& doc, std::vector<Row>* rows) {
  std::istringstream lines(doc);
  std::string line;
  size_t number = 0;
  bool in_table = false;
  bool separator_seen = false;
  while (std::getline(lines, line)) {
    ++number;
    if (!in_table) {
      in_table = line == kTableHeader;
      continue;
    }
    if (!separator_seen) {
      if (line.compare(0, 4, "|---") != 0)
        return "line " + std::to_string(number) + ": no |---| row";
      separator_seen = true;
      continue;
    }
    if (line.empty() || line[0] != '|')
      break;
    const std::vector<std::string> cells = Cells(line);
    if (cells.size() != 4)
      return "line " + std::to_string(number) + ": not 4 cells";
    Row row;
    row.line = number;
    row.description = cells[0];
    const std::vector<std::string> file = Quoted(cells[1]);
    if (file.size() != 1)
      return "line " + std::to_string(number) + ": no `file.pbtx`";
    row.file = file[0];
    if (cells[2] == "accepted") {
      row.verdict = Verdict::kAccepted;
    } else if (cells[2] == "accepted, warned") {
      row.verdict = Verdict::kWarned;
    } else if (cells[2] == "refused") {
      row.verdict = Verdict::kRefused;
    } else {
      return "line " + std::to_string(number) + ": verdict '" + cells[2] +
             "' is not accepted, accepted, warned or refused";
    }
    row.messages = Quoted(cells[3]);
    // A `quoted` message is a claim the test checks: an accepted row has
    // none to make (its cell may say in words what happens later).
    if (row.verdict != Verdict::kAccepted && row.messages.empty())
      return "line " + std::to_string(number) + ": no `message` to check";
    if (row.verdict == Verdict::kAccepted && !row.messages.empty())
      return "line " + std::to_string(number) +
             ": an accepted row prints nothing to quote";
    rows->push_back(row);
  }
  if (!in_table)
    return std::string("no table with the header ") + kTableHeader;
  return "";
}

std::vector<std::string> ConfigFiles() {
  std::vector<std::string> files;
  DIR* d = opendir(ConfigsDir().c_str());
  if (!d)
    return files;
  while (const dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name.size() > 5 && name.substr(name.size() - 5) == ".pbtx")
      files.push_back(name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<Row> DocRows() {
  std::string doc;
  EXPECT_TRUE(ReadWhole(DocPath(), &doc)) << DocPath();
  std::vector<Row> rows;
  const std::string error = ParseTable(doc, &rows);
  EXPECT_EQ(error, "") << DocPath();
  return rows;
}

class PerfettoConfigCompatTest : public traced::test::SessionsFixture {
 protected:
  void SetUp() override {
    SessionsFixture::SetUp();
    // ringtrace_example_app's producer, as the service sees it.
    const trace_buffer::ProducerID id =
        AddProducer("app", {"track_event"}, &app_);
    ipc::DataSourceCategoriesMsg categories;
    categories.data_source = "track_event";
    categories.categories = {{"example", "Frames", {}},
                             {"io", "Reads", {}},
                             {"example.detail", "Checksums", {"slow"}}};
    ASSERT_TRUE(core_->producers()->DeclareCategories(id, categories).ok());
  }

  // Loads the config of |row| as the CLI does and, when accepted, starts
  // it; |index| names its trace file.
  void CheckRow(const Row& row, size_t index) {
    SCOPED_TRACE("docs/cli.md:" + std::to_string(row.line) + ": " + row.file);
    CliOptions options;
    options.txt = true;
    options.config_path = ConfigsDir() + "/" + row.file;
    options.out_path = "unused.pftrace";
    perfetto::protos::TraceConfig config;
    const base::Status loaded = LoadTraceConfig(options, &config);
    if (row.verdict == Verdict::kRefused) {
      ASSERT_FALSE(loaded.ok()) << "accepted, the doc says refused";
      for (const std::string& text : row.messages)
        EXPECT_THAT(loaded.message(), ::testing::HasSubstr(text));
      return;
    }
    ASSERT_TRUE(loaded.ok()) << loaded.message();
    traced::SessionId id = 0;
    const base::Status started = core_->sessions()->StartSession(
        config, traced::test::OpenOut(dir_.File("t" + std::to_string(index))),
        /*consumer_uid=*/200, /*consumer_id=*/7, now_, &id);
    ASSERT_TRUE(started.ok()) << started.message();
    const std::vector<std::string> warnings =
        core_->sessions()->StartWarnings(id);
    core_->sessions()->AbortSession(id);
    std::string all;
    for (const std::string& w : warnings)
      all += "warning: " + w + "\n";
    if (row.verdict == Verdict::kAccepted) {
      EXPECT_THAT(warnings, ::testing::IsEmpty()) << all;
      return;
    }
    EXPECT_THAT(warnings, ::testing::Not(::testing::IsEmpty()));
    for (const std::string& text : row.messages)
      EXPECT_THAT(all, ::testing::HasSubstr(text));
  }

  std::unique_ptr<traced::test::ProducerSide> app_;
};

TEST_F(PerfettoConfigCompatTest, EveryConfigHasOneRowAndEveryRowAConfig) {
  const std::vector<Row> rows = DocRows();
  const std::vector<std::string> files = ConfigFiles();
  ASSERT_FALSE(files.empty()) << ConfigsDir();
  std::map<std::string, size_t> rows_per_file;
  for (const Row& row : rows)
    ++rows_per_file[row.file];
  for (const std::string& file : files)
    EXPECT_EQ(rows_per_file[file], 1u) << file << " in " << DocPath();
  for (const auto& [file, count] : rows_per_file) {
    EXPECT_TRUE(std::find(files.begin(), files.end(), file) != files.end())
        << file << ": a row of " << DocPath() << " without a config in "
        << ConfigsDir();
  }
}

TEST_F(PerfettoConfigCompatTest, EveryRowOfTheDocTableHolds) {
  const std::vector<Row> rows = DocRows();
  ASSERT_FALSE(rows.empty());
  for (size_t i = 0; i < rows.size(); i++)
    CheckRow(rows[i], i);
}

// The table parser itself: a malformed row is an error, not a row less.
TEST(PerfettoConfigCompatTableTest, MalformedRowsAreErrors) {
  const std::string header =
      std::string(kTableHeader) + "\n|---|---|---|---|\n";
  std::vector<Row> rows;
  EXPECT_EQ(ParseTable(header + "| a | `a.pbtx` | accepted | |\n"
                                "| b | `b.pbtx` | refused | `no` |\n\ntext\n",
                       &rows),
            "");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].file, "b.pbtx");
  EXPECT_EQ(rows[1].verdict, Verdict::kRefused);
  EXPECT_EQ(rows[1].messages, std::vector<std::string>{"no"});
  EXPECT_EQ(rows[1].line, 4u);
  rows.clear();
  EXPECT_NE(ParseTable(header + "| a | `a.pbtx` | maybe | |\n", &rows), "");
  EXPECT_NE(ParseTable(header + "| a | a.pbtx | accepted | |\n", &rows), "");
  EXPECT_NE(ParseTable(header + "| a | `a.pbtx` | refused | no |\n", &rows),
            "");
  EXPECT_NE(ParseTable(header + "| a | `a.pbtx` | accepted |\n", &rows), "");
  EXPECT_NE(ParseTable(header + "| a | `a.pbtx` | accepted | `x` |\n", &rows),
            "");
  EXPECT_NE(ParseTable("no table\n", &rows), "");
}

}  // namespace
}  // namespace cli
}  // namespace ringtrace
