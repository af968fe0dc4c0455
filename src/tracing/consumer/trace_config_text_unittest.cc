/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/consumer/trace_config_text.h"

#include <dirent.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "src/base/test/subprocess.h"
#include "src/base/test/temp_dir.h"

namespace ringtrace {
namespace consumer {
namespace {

using perfetto::protos::TraceConfig;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Parses |text| as "cfg.pbtx" and returns the error ("" on success).
std::string TextError(const std::string& text) {
  TraceConfig config;
  base::Status status = ParseTextTraceConfig(text, "cfg.pbtx", &config);
  return status.ok() ? "" : status.message();
}

TEST(TraceConfigTextTest, ParsesEverySupportedField) {
  const std::string text = R"(
    buffers { size_kb: 1024 fill_policy: DISCARD }
    buffers: { size_kb: 64 fill_policy: RING_BUFFER }
    data_sources {
      config {
        name: "track_event"
        target_buffer: 1
        track_event_config {
          enabled_categories: ["a", "b*"]
          disabled_categories: "b.debug"
        }
      }
      producer_name_filter: "app"
    }
    duration_ms: 5000
    write_into_file: true
    file_write_period_ms: 250
    max_file_size_bytes: 10000000000
    flush_period_ms: 100
    flush_timeout_ms: 200
    incremental_state_config { clear_period_ms: 300 }
    unique_session_name: "s1"
    data_source_stop_timeout_ms: 400
  )";
  TraceConfig config;
  ASSERT_TRUE(ParseTextTraceConfig(text, "cfg.pbtx", &config).ok());
  ASSERT_EQ(config.buffers_size(), 2);
  EXPECT_EQ(config.buffers(0).size_kb(), 1024u);
  EXPECT_EQ(config.buffers(0).fill_policy(),
            TraceConfig::BufferConfig::DISCARD);
  EXPECT_EQ(config.buffers(1).size_kb(), 64u);
  EXPECT_EQ(config.buffers(1).fill_policy(),
            TraceConfig::BufferConfig::RING_BUFFER);
  ASSERT_EQ(config.data_sources_size(), 1);
  const auto& source = config.data_sources(0);
  EXPECT_EQ(source.config().name(), "track_event");
  EXPECT_EQ(source.config().target_buffer(), 1u);
  EXPECT_THAT(source.config().track_event_config().enabled_categories(),
              ::testing::ElementsAre("a", "b*"));
  EXPECT_THAT(source.config().track_event_config().disabled_categories(),
              ::testing::ElementsAre("b.debug"));
  EXPECT_THAT(source.producer_name_filter(), ::testing::ElementsAre("app"));
  EXPECT_EQ(config.duration_ms(), 5000u);
  EXPECT_TRUE(config.write_into_file());
  EXPECT_EQ(config.file_write_period_ms(), 250u);
  EXPECT_EQ(config.max_file_size_bytes(), 10000000000u);
  EXPECT_EQ(config.flush_period_ms(), 100u);
  EXPECT_EQ(config.flush_timeout_ms(), 200u);
  EXPECT_EQ(config.incremental_state_config().clear_period_ms(), 300u);
  EXPECT_EQ(config.unique_session_name(), "s1");
  EXPECT_EQ(config.data_source_stop_timeout_ms(), 400u);
}

TEST(TraceConfigTextTest, EmptyTextIsAnEmptyConfig) {
  TraceConfig config;
  config.set_duration_ms(7);  // cleared by the parse
  ASSERT_TRUE(ParseTextTraceConfig("# nothing\n", "cfg.pbtx", &config).ok());
  EXPECT_FALSE(config.has_duration_ms());
}

TEST(TraceConfigTextTest, UnknownFieldNamesFileLineColumnAndField) {
  // A Perfetto field ringtrace does not support, inside a nested message.
  const std::string error = TextError(
      "buffers {\n"
      "  size_kb: 1024\n"
      "}\n"
      "data_sources {\n"
      "  config {\n"
      "    name: \"linux.perf\"\n"
      "    perf_event_config { sampling_frequency: 100 }\n"
      "  }\n"
      "}\n");
  EXPECT_THAT(error, StartsWith("cfg.pbtx:7:5: "
                                "data_sources.config.perf_event_config: "));
  EXPECT_THAT(error, HasSubstr("no field named \"perf_event_config\""));
}

// Perfetto's system-wide configs name several sources ringtrace does not
// have: every unsupported field is named at once, each with its place.
TEST(TraceConfigTextTest, EveryUnknownFieldIsNamedTogether) {
  const std::string error = TextError(
      "buffers { size_kb: 1024 }\n"
      "data_sources { config {\n"
      "  name: \"linux.ftrace\"\n"
      "  ftrace_config { atrace_categories: \"gfx\" }\n"
      "} }\n"
      "data_sources { config {\n"
      "  name: \"android.power\"\n"
      "  android_power_config { battery_poll_ms: 1000 }\n"
      "} }\n"
      "data_sources { config {\n"
      "  name: \"track_event\"\n"
      "  track_event_config { enabled_categories: \"*\" }\n"
      "} }\n"
      "statsd_metadata { triggering_alert_id: 1 }\n");
  EXPECT_THAT(
      error,
      StartsWith("3 problems:\ncfg.pbtx:4:19: "
                 "data_sources.config.ftrace_config.atrace_categories: "));
  EXPECT_THAT(error, HasSubstr("\ncfg.pbtx:8:3: "
                               "data_sources.config.android_power_config: "));
  EXPECT_THAT(error, HasSubstr("\ncfg.pbtx:14:1: statsd_metadata: "));
  EXPECT_THAT(error, HasSubstr("no field named \"android_power_config\""));
}

TEST(TraceConfigTextTest, OneUnknownFieldIsOneLine) {
  const std::string error = TextError("duration_ms: 10\nbogus: 1\n");
  EXPECT_THAT(error, StartsWith("cfg.pbtx:2:1: bogus: "));
  EXPECT_EQ(error.find("problems"), std::string::npos) << error;
}

TEST(TraceConfigTextTest, UnknownFieldsAndASyntaxErrorAreAllNamed) {
  const std::string error = TextError(
      "bogus_one: 1\n"
      "bogus_two { x: 2 }\n"
      "duration_ms 10\n");
  EXPECT_THAT(error, StartsWith("3 problems:\ncfg.pbtx:1:1: bogus_one: "));
  EXPECT_THAT(error, HasSubstr("\ncfg.pbtx:2:1: bogus_two: "));
  EXPECT_THAT(error, HasSubstr("\ncfg.pbtx:3:"));
}

TEST(TraceConfigTextTest, ManyUnknownFieldsAreCut) {
  std::string text;
  for (size_t i = 0; i < kMaxConfigProblemsShown + 5; ++i)
    text += "bogus_" + std::to_string(i) + ": 1\n";
  const std::string error = TextError(text);
  EXPECT_THAT(error, StartsWith(std::to_string(kMaxConfigProblemsShown + 5) +
                                " problems:\n"));
  EXPECT_THAT(
      error, HasSubstr("bogus_" + std::to_string(kMaxConfigProblemsShown - 1)));
  EXPECT_EQ(
      error.find("bogus_" + std::to_string(kMaxConfigProblemsShown) + ":"),
      std::string::npos);
  EXPECT_THAT(error, EndsWith("\n... and more"));
}

TEST(TraceConfigTextTest, UnknownTopLevelField) {
  const std::string error = TextError(
      "duration_ms: 10\n"
      "\n"
      "  lockdown_mode: LOCKDOWN_SET\n");
  EXPECT_THAT(error, StartsWith("cfg.pbtx:3:3: lockdown_mode: "));
  EXPECT_THAT(error, HasSubstr("lockdown_mode"));
}

TEST(TraceConfigTextTest, BadEnumValue) {
  const std::string error = TextError(
      "buffers {\n"
      "  size_kb: 1024\n"
      "  fill_policy: OVERWRITE\n"
      "}\n");
  EXPECT_THAT(error, StartsWith("cfg.pbtx:3:16: buffers.fill_policy: "));
  EXPECT_THAT(error, HasSubstr("OVERWRITE"));
}

TEST(TraceConfigTextTest, WrongType) {
  const std::string error = TextError(
      "buffers {\n"
      "  size_kb: \"big\"\n"
      "}\n");
  EXPECT_THAT(error, StartsWith("cfg.pbtx:2:12: buffers.size_kb: "));
  EXPECT_THAT(error, HasSubstr("integer"));
}

TEST(TraceConfigTextTest, NumberOutOfRange) {
  const std::string error = TextError("duration_ms: 4294967296\n");
  EXPECT_THAT(error, StartsWith("cfg.pbtx:1:14: duration_ms: "));
  EXPECT_THAT(error, HasSubstr("out of range"));
}

TEST(TraceConfigTextTest, NegativeUnsigned) {
  const std::string error = TextError("\nflush_period_ms: -5\n");
  EXPECT_THAT(error, StartsWith("cfg.pbtx:2:"));
  EXPECT_THAT(error, HasSubstr("flush_period_ms: "));
}

TEST(TraceConfigTextTest, SyntaxErrorMissingColon) {
  const std::string error = TextError(
      "buffers {\n"
      "  size_kb 1024\n"
      "}\n");
  // "size_kb" without ':' is not read as a field name yet.
  EXPECT_THAT(error, StartsWith("cfg.pbtx:2:11: buffers: "));
  EXPECT_THAT(error, HasSubstr("\"1024\""));
}

TEST(TraceConfigTextTest, SyntaxErrorUnclosedBrace) {
  const std::string error = TextError(
      "buffers {\n"
      "  size_kb: 1024\n");
  // The parser notices at the end of the text, still inside "buffers".
  EXPECT_THAT(error, StartsWith("cfg.pbtx:3:1: buffers: "));
}

TEST(TraceConfigTextTest, FieldGivenTwice) {
  const std::string error = TextError(
      "duration_ms: 1\n"
      "duration_ms: 2\n");
  EXPECT_THAT(error, StartsWith("cfg.pbtx:2:"));
  EXPECT_THAT(error, HasSubstr("duration_ms"));
}

TEST(TraceConfigTextTest, FieldPathFollowsListsAndAngleBrackets) {
  const std::string text =
      "buffers: [{size_kb: 1}, {size_kb: x}]\n"    // line 0
      "data_sources < config < name: \"a\" > >\n"  // line 1
      "duration_ms: 5  # a comment: { not a field\n";
  EXPECT_EQ(TextFieldPathAt(text, 0, 0), "buffers");
  EXPECT_EQ(TextFieldPathAt(text, 0, 34), "buffers.size_kb");
  EXPECT_EQ(TextFieldPathAt(text, 0, 20), "buffers.size_kb");
  // Between the list's entries.
  EXPECT_EQ(TextFieldPathAt(text, 0, 22), "buffers");
  EXPECT_EQ(TextFieldPathAt(text, 1, 30), "data_sources.config.name");
  EXPECT_EQ(TextFieldPathAt(text, 1, 35), "data_sources");
  EXPECT_EQ(TextFieldPathAt(text, 1, 36), "");
  EXPECT_EQ(TextFieldPathAt(text, 2, 13), "duration_ms");
  // Past the value, in a comment whose ':' and '{' are not read.
  EXPECT_EQ(TextFieldPathAt(text, 2, 30), "");
  EXPECT_EQ(TextFieldPathAt("", 0, 0), "");
}

TEST(TraceConfigTextTest, BinaryRoundTrip) {
  TraceConfig in;
  in.add_buffers()->set_size_kb(4096);
  in.set_duration_ms(1234);
  in.add_data_sources()->mutable_config()->set_name("track_event");
  TraceConfig out;
  ASSERT_TRUE(
      ParseBinaryTraceConfig(in.SerializeAsString(), "cfg.pb", &out).ok());
  EXPECT_EQ(out.SerializeAsString(), in.SerializeAsString());
}

TEST(TraceConfigTextTest, BinaryRejectsTextWithAHint) {
  TraceConfig config;
  base::Status status =
      ParseBinaryTraceConfig("buffers { size_kb: 1 }\n", "cfg.pbtx", &config);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), StartsWith("cfg.pbtx: "));
  EXPECT_THAT(status.message(), HasSubstr("--txt"));
}

TEST(TraceConfigTextTest, BinaryRejectsUnknownFieldWithItsPath) {
  TraceConfig in;
  in.add_buffers()->set_size_kb(1);
  in.add_buffers()->set_size_kb(2);
  // Field 7 (Perfetto's BufferConfig.transfer_on_clone) in buffers[1].
  in.mutable_buffers(1)
      ->GetReflection()
      ->MutableUnknownFields(in.mutable_buffers(1))
      ->AddVarint(7, 1);
  TraceConfig out;
  base::Status status =
      ParseBinaryTraceConfig(in.SerializeAsString(), "cfg.pb", &out);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "cfg.pb: TraceConfig.buffers[1] has field number 7, which "
            "ringtrace does not support");
}

TEST(TraceConfigTextTest, BinaryRejectsUnknownTopLevelField) {
  // Field 5 (Perfetto's enable_extra_guardrails), varint 1.
  const std::string bytes("\x28\x01", 2);
  TraceConfig out;
  base::Status status = ParseBinaryTraceConfig(bytes, "cfg.pb", &out);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "cfg.pb: TraceConfig has field number 5, which ringtrace does "
            "not support");
}

TEST(TraceConfigTextTest, ReadConfigFileReadsAndLimits) {
  base::TempDir dir;
  const std::string path = dir.File("c.pbtx");
  {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "duration_ms: 3\n", 15), 15);
    close(fd);
  }
  std::string contents;
  ASSERT_TRUE(ReadConfigFile(path, &contents).ok());
  EXPECT_EQ(contents, "duration_ms: 3\n");

  base::Status missing = ReadConfigFile(dir.File("nope"), &contents);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.message(), HasSubstr("nope"));

  {
    const int fd = open(path.c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, static_cast<off_t>(kMaxConfigFileBytes) + 1), 0);
    close(fd);
  }
  base::Status too_big = ReadConfigFile(path, &contents);
  ASSERT_FALSE(too_big.ok());
  EXPECT_THAT(too_big.message(), HasSubstr("larger than"));
}

// Every config checked in under configs/ parses, so that the examples the
// docs point at never rot.
TEST(TraceConfigTextTest, EveryCheckedInConfigParses) {
  const std::string dir =
      base::ExecutableDir() + "/" + RINGTRACE_CONFIGS_DIR_FROM_BINARY;
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr) << dir;
  std::vector<std::string> files;
  while (const dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name.size() > 5 && name.substr(name.size() - 5) == ".pbtx")
      files.push_back(name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  ASSERT_THAT(files, ::testing::Contains("track_event.pbtx"));
  for (const std::string& name : files) {
    SCOPED_TRACE(name);
    std::string path = dir;
    path += "/";
    path += name;
    std::string text;
    ASSERT_TRUE(ReadConfigFile(path, &text).ok());
    TraceConfig config;
    base::Status status = ParseTextTraceConfig(text, name, &config);
    EXPECT_TRUE(status.ok()) << status.message();
    // A config that could start a session: a buffer and a data source.
    EXPECT_GE(config.buffers_size(), 1);
    EXPECT_GE(config.data_sources_size(), 1);
  }
}

}  // namespace
}  // namespace consumer
}  // namespace ringtrace
