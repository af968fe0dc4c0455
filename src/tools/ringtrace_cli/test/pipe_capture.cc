/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/test/pipe_capture.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

namespace ringtrace {
namespace cli {

PipeCapture::PipeCapture() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return;
  read_.reset(fds[0]);
  write_.reset(fds[1]);
  reader_ = std::thread([this] {
    char buf[64 * 1024];
    for (;;) {
      const ssize_t n = read(read_.get(), buf, sizeof(buf));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      bytes_.append(buf, static_cast<size_t>(n));
    }
  });
}

PipeCapture::~PipeCapture() {
  Finish();
}

std::string PipeCapture::Finish() {
  write_.reset();
  if (reader_.joinable())
    reader_.join();
  return bytes_;
}

}  // namespace cli
}  // namespace ringtrace
