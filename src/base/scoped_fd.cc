/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/scoped_fd.h"

#include <unistd.h>

namespace ringtrace {
namespace base {

void ScopedFd::reset(int fd) {
  if (fd_ >= 0)
    close(fd_);
  fd_ = fd;
}

int ScopedFd::Close() {
  const int fd = release();
  return fd >= 0 ? close(fd) : 0;
}

}  // namespace base
}  // namespace ringtrace
