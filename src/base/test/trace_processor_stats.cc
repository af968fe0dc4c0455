/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/test/trace_processor_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <sstream>

#include "src/base/test/subprocess.h"

namespace ringtrace {
namespace test {

namespace {

constexpr int kTraceProcessorTimeoutMs = 120000;

// "abc" -> abc; anything else as it is.
std::string Unquote(const std::string& s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"')
    return s.substr(1, s.size() - 2);
  return s;
}

bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty())
    return false;
  char* end = nullptr;
  const long long v = strtoll(s.c_str(), &end, 10);
  if (*end != '\0')
    return false;
  *out = v;
  return true;
}

// One CSV row of the query below: "name",idx,"severity","source",value, idx
// being "[NULL]" for an unindexed stat. Names and severities hold no commas.
bool ParseRow(const std::string& line, TraceProcessorStat* stat) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  std::string field;
  while (std::getline(in, field, ','))
    fields.push_back(Unquote(field));
  if (fields.size() != 5)
    return false;
  stat->name = fields[0];
  if (fields[1] == "[NULL]")
    stat->idx = -1;
  else if (!ParseInt(fields[1], &stat->idx))
    return false;
  stat->severity = fields[2];
  stat->source = fields[3];
  return ParseInt(fields[4], &stat->value);
}

}  // namespace

std::string TraceProcessorShellPath() {
  const char* path = getenv("TRACE_PROCESSOR_SHELL");
  if (!path || !*path || access(path, X_OK) != 0)
    return "";
  return path;
}

bool RunTraceProcessorQuery(const std::string& tp,
                            const std::string& trace,
                            const std::string& scratch_dir,
                            const std::string& sql,
                            std::string* csv,
                            std::string* error) {
  const std::string query = scratch_dir + "/query.sql";
  FILE* f = fopen(query.c_str(), "w");
  if (!f) {
    *error = "cannot write " + query;
    return false;
  }
  fputs(sql.c_str(), f);
  fputc('\n', f);
  fclose(f);
  // Only stdout: the shell's progress and log lines go to stderr.
  base::Subprocess shell({"/bin/sh", "-c",
                          "exec \"$0\" -q \"$1\" \"$2\" 2>/dev/null", tp, query,
                          trace});
  if (!shell.Start(error))
    return false;
  if (!shell.Wait(kTraceProcessorTimeoutMs)) {
    *error = "trace_processor_shell did not finish";
    return false;
  }
  *csv = shell.output();
  if (!shell.ExitedOk()) {
    *error = "trace_processor_shell " + shell.DescribeStatus() + ":\n" + *csv;
    return false;
  }
  return true;
}

bool QueryNonZeroStats(const std::string& tp,
                       const std::string& trace,
                       const std::string& scratch_dir,
                       std::vector<TraceProcessorStat>* stats,
                       std::string* error) {
  stats->clear();
  std::string output;
  if (!RunTraceProcessorQuery(tp, trace, scratch_dir,
                              "select name, idx, severity, source, value "
                              "from stats where value != 0 order by name, "
                              "idx;",
                              &output, error)) {
    return false;
  }
  bool header = false;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("\"name\",", 0) == 0) {
      header = true;
      continue;
    }
    if (!header || line.empty() || line[0] != '"')
      continue;
    TraceProcessorStat stat;
    if (!ParseRow(line, &stat)) {
      *error = "unexpected row: " + line;
      return false;
    }
    stats->push_back(stat);
  }
  if (!header) {
    *error = "no stats table in the output:\n" + output;
    return false;
  }
  return true;
}

int64_t StatValue(const std::vector<TraceProcessorStat>& stats,
                  const std::string& name,
                  int64_t idx) {
  for (const TraceProcessorStat& s : stats) {
    if (s.name == name && s.idx == idx)
      return s.value;
  }
  return 0;
}

std::string Describe(const TraceProcessorStat& stat) {
  std::string out = stat.name;
  if (stat.idx >= 0)
    out += "[" + std::to_string(stat.idx) + "]";
  return out + " = " + std::to_string(stat.value) + " (" + stat.severity +
         ", " + stat.source + ")";
}

}  // namespace test
}  // namespace ringtrace
