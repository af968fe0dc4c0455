/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. What the end-to-end tests share: the fixture members (a private
// directory for the service's socket and trace file, the binaries' directory)
// and starting the ringtraced binary.

#ifndef SRC_TRACING_TEST_RINGTRACED_PROCESS_H_
#define SRC_TRACING_TEST_RINGTRACED_PROCESS_H_

#include <gtest/gtest.h>

#include <string>

#include "src/base/test/subprocess.h"
#include "src/base/test/temp_dir.h"

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

// Base of the end-to-end fixtures: a private directory (removed with its
// content) holding the service's socket (socket_) and trace file (trace_),
// and the directory of the binaries the tests start (bin_).
class EndToEndFixture : public ::testing::Test {
 protected:
  EndToEndFixture()
      : dir_(temp_dir_.path()),
        socket_(dir_ + "/traced.sock"),
        trace_(dir_ + "/trace.pftrace"),
        bin_(base::ExecutableDir()) {}

  base::TempDir temp_dir_{"ringtrace_e2e"};
  std::string dir_, socket_, trace_, bin_;
};

}  // namespace test
}  // namespace ringtrace

#endif  // SRC_TRACING_TEST_RINGTRACED_PROCESS_H_
