/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Helpers shared by every *_benchmark.cc.
//
// tools/test runs ringtrace_benchmarks with BENCHMARK_FUNCTIONAL_TEST_ONLY=1:
// every benchmark then runs one iteration (see benchmark_main.cc) so CI checks
// that each benchmark still works without paying for measurements. Benchmarks
// with expensive untimed setup (e.g. filling a 128 MiB buffer) should consult
// IsBenchmarkFunctionalOnly() and shrink that setup.

#ifndef SRC_BASE_TEST_BENCHMARK_UTILS_H_
#define SRC_BASE_TEST_BENCHMARK_UTILS_H_

#include <stdlib.h>
#include <string.h>

namespace ringtrace {
namespace bench {

inline bool IsBenchmarkFunctionalOnly() {
  const char* env = getenv("BENCHMARK_FUNCTIONAL_TEST_ONLY");
  return env && *env && strcmp(env, "0") != 0;
}

}  // namespace bench
}  // namespace ringtrace

#endif  // SRC_BASE_TEST_BENCHMARK_UTILS_H_
