/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Perfetto's trace_processor_shell run on a trace file: its
// stats table, as trace_processor fills it from the trace (the TraceStats
// packet's fields become the traced_* stats) and from its own import. The
// Perfetto UI shows the stats of severity 'error' and 'data_loss' as "Trace
// health issues". trace_processor_shell is a tool of the workplace, not of
// the project: its path comes from $TRACE_PROCESSOR_SHELL, and the tests
// that need it skip without it.

#ifndef SRC_BASE_TEST_TRACE_PROCESSOR_STATS_H_
#define SRC_BASE_TEST_TRACE_PROCESSOR_STATS_H_

#include <stdint.h>

#include <string>
#include <vector>

namespace ringtrace {
namespace test {

// One row of trace_processor's stats table.
struct TraceProcessorStat {
  std::string name;
  int64_t idx = -1;  // -1: not an indexed stat
  std::string severity;
  std::string source;
  int64_t value = 0;
};

// $TRACE_PROCESSOR_SHELL if it names an executable file, else "".
std::string TraceProcessorShellPath();

// Loads |trace| into trace_processor_shell |tp| and returns every stat
// whose value is not 0 in |*stats|. |scratch_dir| holds the query file.
// False, with |*error|, if the shell failed or printed no stats table.
bool QueryNonZeroStats(const std::string& tp,
                       const std::string& trace,
                       const std::string& scratch_dir,
                       std::vector<TraceProcessorStat>* stats,
                       std::string* error);

// Runs |sql| on |trace| in trace_processor_shell |tp|; its CSV output
// (stdout: a header line per query, then rows) in |*csv|. |scratch_dir|
// holds the query file. False, with |*error|, if the shell failed.
bool RunTraceProcessorQuery(const std::string& tp,
                            const std::string& trace,
                            const std::string& scratch_dir,
                            const std::string& sql,
                            std::string* csv,
                            std::string* error);

// The value of stat |name| at |idx| (-1: the unindexed one) in |stats|; 0
// if it is not there (trace_processor's value for a stat never set).
int64_t StatValue(const std::vector<TraceProcessorStat>& stats,
                  const std::string& name,
                  int64_t idx = -1);

// "name[idx] = value (severity, source)".
std::string Describe(const TraceProcessorStat& stat);

}  // namespace test
}  // namespace ringtrace

#endif  // SRC_BASE_TEST_TRACE_PROCESSOR_STATS_H_
