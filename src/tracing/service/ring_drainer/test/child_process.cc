/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/test/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ringtrace {
namespace ring_drainer {
namespace test {

char ProcessState(pid_t pid) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  // "pid (comm) state ...": comm may contain anything but ends at the last
  // ')'.
  const char* p = strrchr(buf, ')');
  return p != nullptr && p[1] == ' ' ? p[2] : 0;
}

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace
