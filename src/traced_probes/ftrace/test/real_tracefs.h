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

#include <sched.h>

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

// Keeps the calling thread on the first CPU it may use while it lives, then
// gives it back its affinity. The sched tests record this thread's switches
// there: on the 2-vCPU development VM (kernel 6.18) the kernel records no
// sched_switch from the idle task on CPU 1 (none of 16 in a text trace of
// `taskset -c 1` sleeps, while CPU 0 had them), so a thread woken there
// would have switches out with no switch in, which trace_processor reports
// as mismatched_sched_switch_tids. That is the kernel's data, not ours.
class PinToFirstCpu {
 public:
  PinToFirstCpu();
  ~PinToFirstCpu();
  PinToFirstCpu(const PinToFirstCpu&) = delete;
  PinToFirstCpu& operator=(const PinToFirstCpu&) = delete;
  bool ok() const { return ok_; }
  // The CPU it keeps the thread on (valid when ok()).
  int cpu() const { return cpu_; }

 private:
  cpu_set_t saved_;
  bool ok_ = false;
  int cpu_ = -1;
};

}  // namespace test
}  // namespace ftrace
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_FTRACE_TEST_REAL_TRACEFS_H_
