/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// main() of ringtrace_benchmarks.
//
// Differences from benchmark_main:
// - With BENCHMARK_FUNCTIONAL_TEST_ONLY set, each benchmark runs a single
//   iteration (a tiny --benchmark_min_time: the first 1-iteration run already
//   exceeds it) unless the command line sets its own min_time.
// - The exit status is non-zero when any benchmark reported an error
//   (state.SkipWithError) or when no benchmark ran at all, so CI notices.

#include <benchmark/benchmark.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "src/base/test/benchmark_utils.h"

namespace {

class CountingReporter : public benchmark::ConsoleReporter {
 public:
  // Colours only on a terminal: CI logs stay free of escape codes.
  CountingReporter()
      : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      ++runs_;
      if (run.error_occurred) {
        ++errors_;
        fprintf(stderr, "BENCHMARK ERROR: %s: %s\n",
                run.benchmark_name().c_str(), run.error_message.c_str());
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  int runs() const { return runs_; }
  int errors() const { return errors_; }

 private:
  int runs_ = 0;
  int errors_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  bool has_min_time = false;
  bool list_only = false;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--benchmark_min_time", 20) == 0)
      has_min_time = true;
    if (strncmp(argv[i], "--benchmark_list_tests", 22) == 0)
      list_only = true;
  }
  static char kMinTime[] = "--benchmark_min_time=0.000000001";
  if (ringtrace::bench::IsBenchmarkFunctionalOnly() && !has_min_time)
    args.push_back(kMinTime);
  int new_argc = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&new_argc, args.data());
  if (benchmark::ReportUnrecognizedArguments(new_argc, args.data()))
    return 1;
  if (list_only) {
    benchmark::RunSpecifiedBenchmarks();
    return 0;
  }
  CountingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  if (reporter.errors() > 0) {
    fprintf(stderr, "%d benchmark(s) failed\n", reporter.errors());
    return 1;
  }
  if (reporter.runs() == 0) {
    fprintf(stderr, "no benchmark ran\n");
    return 1;
  }
  fprintf(stderr, "%d benchmark run(s), 0 errors\n", reporter.runs());
  return 0;
}
