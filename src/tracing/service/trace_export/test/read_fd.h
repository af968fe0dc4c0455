/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. The whole content of a file the test wrote a trace into (a
// memfd), read from offset 0 whatever the fd's own offset.

#ifndef SRC_TRACING_SERVICE_TRACE_EXPORT_TEST_READ_FD_H_
#define SRC_TRACING_SERVICE_TRACE_EXPORT_TEST_READ_FD_H_

#include <sys/types.h>
#include <unistd.h>

#include <string>

namespace ringtrace {
namespace test {

inline std::string ReadWholeFd(int fd) {
  std::string bytes;
  char buf[65536];
  for (off_t off = 0;;) {
    const ssize_t r = pread(fd, buf, sizeof(buf), off);
    if (r <= 0)
      break;
    bytes.append(buf, static_cast<size_t>(r));
    off += r;
  }
  return bytes;
}

}  // namespace test
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_EXPORT_TEST_READ_FD_H_
