/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. The real kernel's tracefs for the tests that need one: found,
// or mounted when the test runs as root and nothing is mounted (the mount
// stays; it is what `mount -t tracefs nodev /sys/kernel/tracing` does).
//
//   std::string root, why;
//   if (!RealTracefs(&root, &why))
//     GTEST_SKIP() << why;

#ifndef SRC_TRACED_PROBES_FTRACE_TEST_REAL_TRACEFS_H_
#define SRC_TRACED_PROBES_FTRACE_TEST_REAL_TRACEFS_H_

#include <string>

namespace ringtrace {
namespace ftrace {
namespace test {

// The instance prefix of the tests (never the producer's).
constexpr const char kTestInstancePrefix[] = "ringtrace_test_";

// True with |*root| set when a usable tracefs exists (after mounting it if
// needed and allowed); false with |*why| saying what is missing and how to
// get it.
bool RealTracefs(std::string* root, std::string* why);

}  // namespace test
}  // namespace ftrace
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_FTRACE_TEST_REAL_TRACEFS_H_
