/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Subprocess: a child process a test starts and controls, either
//   - one of our binaries (Start(): posix_spawn of argv, its stdout and
//     stderr captured in a file, output() reads it; set_stdout_fd() sends
//     stdout elsewhere), or
//   - a forked copy of the test running a function (Fork(): the child runs
//     the body and _exit()s with its result, never returning into gtest; it
//     dies with the parent, PR_SET_PDEATHSIG).
// Both are waited for with a deadline (Wait(), Ended()), and a child still
// running when the Subprocess is destroyed is killed (SIGKILL) and reaped,
// so a failing test never leaves processes behind or hangs.
//
// Thread model: one thread.

#ifndef SRC_BASE_TEST_SUBPROCESS_H_
#define SRC_BASE_TEST_SUBPROCESS_H_

#include <stdint.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace ringtrace {
namespace base {

// The directory of the running executable: where GN puts the binaries the
// end-to-end tests start.
std::string ExecutableDir();

// The number of threads of this process (/proc/self/status), 0 if unknown.
uint32_t ThreadsInThisProcess();

class Subprocess {
 public:
  // Exit status of a forked child whose parent was gone when it started.
  static constexpr int kOrphanedExitCode = 70;

  // For Fork().
  Subprocess() = default;
  // For Start(): argv[0] is the path of the executable.
  explicit Subprocess(std::vector<std::string> argv);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  // Before Start(): the child's stdout is |fd| (dup2()ed; the caller keeps
  // it and closes its copy when it wants) instead of the captured output,
  // which then holds only stderr. For a test that reads stdout apart, as a
  // pipe.
  void set_stdout_fd(int fd) { stdout_fd_ = fd; }

  // Spawns argv. False (with |*error|) if it could not be started.
  bool Start(std::string* error);
  // Forks a child that runs |body| and _exit()s with its result. Returns
  // false if this process has other threads (a child of a multi-threaded
  // process may inherit a lock held by a thread that does not exist in it;
  // TSan's own background thread is allowed) or if fork() failed. Never
  // returns in the child.
  bool Fork(const std::function<int()>& body);

  // Waits up to |timeout_ms| for the child to exit. True if it did (now or
  // before); false on timeout or if no child was started.
  bool Wait(int timeout_ms);
  // Non-blocking: true once the child ended, or if none was started.
  bool Ended() { return !running() || Wait(0); }
  // SIGKILL, then reap (a killed child always ends, so this cannot block).
  // The child must be running.
  void Kill();
  // Sends |sig| to the running child.
  void Signal(int sig);
  // Sends SIGSTOP and waits (up to |timeout_ms|) until the kernel reports
  // the child stopped: kill() returns before the stop takes effect, and a
  // test that relies on a frozen process must not race its last steps.
  bool StopAndWait(int timeout_ms);

  pid_t pid() const { return pid_; }
  // Started and not reaped yet.
  bool running() const { return pid_ > 0 && !exited_; }
  // Its exit status, or 128 + signal if a signal ended it; -1 before.
  int exit_code() const { return exit_code_; }
  bool ExitedOk() const;
  bool KilledBy(int sig) const;
  // "exited with N" / "killed by signal N", for failure messages.
  std::string DescribeStatus() const;
  // Everything a Start()ed child wrote to stdout and stderr so far.
  std::string output() const;

 private:
  void Reaped(int status);

  std::vector<std::string> argv_;
  std::string output_path_;
  int stdout_fd_ = -1;  // -1: stdout goes into the captured output
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = 0;  // waitpid's
  int exit_code_ = -1;
};

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_TEST_SUBPROCESS_H_
