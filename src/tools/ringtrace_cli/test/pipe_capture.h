/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. PipeCapture: a pipe whose read end a thread drains into a
// string until every copy of the write end is closed, so that a writer (the
// code under test, or a child process given write_fd() as its stdout) never
// blocks on a full pipe, whatever it writes.
//
// Thread model: one test thread; the reader thread only touches the read
// end and the bytes, which Finish() hands over after joining it.

#ifndef SRC_TOOLS_RINGTRACE_CLI_TEST_PIPE_CAPTURE_H_
#define SRC_TOOLS_RINGTRACE_CLI_TEST_PIPE_CAPTURE_H_

#include <string>
#include <thread>

#include "src/base/scoped_fd.h"

namespace ringtrace {
namespace cli {

class PipeCapture {
 public:
  // Both ends are O_CLOEXEC: a child gets the write end only where it is
  // dup2()ed (posix_spawn's adddup2 clears the flag on the copy).
  PipeCapture();
  // Finish()es.
  ~PipeCapture();
  PipeCapture(const PipeCapture&) = delete;
  PipeCapture& operator=(const PipeCapture&) = delete;

  // False if the pipe could not be made.
  bool ok() const { return read_.valid(); }
  // -1 once closed.
  int write_fd() const { return write_.get(); }
  // Closes this process's write end (a child keeps its own copy).
  void CloseWriteEnd() { write_.reset(); }
  // Closes the write end, waits for the end of the data and returns it.
  // Blocks until every other copy of the write end is closed too.
  std::string Finish();

 private:
  base::ScopedFd read_;
  base::ScopedFd write_;
  std::thread reader_;
  std::string bytes_;
};

}  // namespace cli
}  // namespace ringtrace

#endif  // SRC_TOOLS_RINGTRACE_CLI_TEST_PIPE_CAPTURE_H_
