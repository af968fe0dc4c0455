/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Subprocess: runs one of our binaries (posix_spawn), its stdout
// and stderr captured in a file, and waits for it with a deadline. A child
// still running when the Subprocess is destroyed is killed (SIGKILL) and
// reaped, so a failing test never leaves processes behind.
//
// Thread model: one thread.

#ifndef SRC_TRACING_TEST_SUBPROCESS_H_
#define SRC_TRACING_TEST_SUBPROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace ringtrace {
namespace test {

// The directory of the running executable: where GN puts the binaries the
// end-to-end tests start.
std::string ExecutableDir();

class Subprocess {
 public:
  // argv[0] is the path of the executable.
  explicit Subprocess(std::vector<std::string> argv);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  // Starts the child. False (with |*error|) if it could not be started.
  bool Start(std::string* error);
  // Waits up to |timeout_ms| for the child to exit. True if it did; then
  // exit_code() is its exit status, or 128 + signal if a signal ended it.
  bool Wait(int timeout_ms);
  // Sends |sig| to the running child.
  void Signal(int sig);

  pid_t pid() const { return pid_; }
  int exit_code() const { return exit_code_; }
  // Everything the child wrote to stdout and stderr so far.
  std::string output() const;

 private:
  std::vector<std::string> argv_;
  std::string output_path_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
};

}  // namespace test
}  // namespace ringtrace

#endif  // SRC_TRACING_TEST_SUBPROCESS_H_
