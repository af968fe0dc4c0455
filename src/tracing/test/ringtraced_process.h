/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Starting the ringtraced binary for the end-to-end tests.

#ifndef SRC_TRACING_TEST_RINGTRACED_PROCESS_H_
#define SRC_TRACING_TEST_RINGTRACED_PROCESS_H_

#include <string>

#include "src/base/test/subprocess.h"

namespace ringtrace {
namespace test {

// Starts |service| (a ringtraced command line) and waits, up to
// |timeout_ms|, until it accepts connections on |socket| (a probe that
// connects and closes at once: a plain disconnect for the service). Returns
// "" once it listens, else why not (it could not start, it exited early, with
// its output, or it never listened).
std::string StartRingtraced(base::Subprocess* service,
                            const std::string& socket,
                            int timeout_ms);

}  // namespace test
}  // namespace ringtrace

#endif  // SRC_TRACING_TEST_RINGTRACED_PROCESS_H_
