/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/logging.h"

#include <stdarg.h>
#include <string.h>

namespace ringtrace {
namespace base {
namespace {

void VLog(const char* file, int line, const char* fmt, va_list args) {
  char buf[1024];
  vsnprintf(buf, sizeof(buf), fmt, args);
  fprintf(stderr, "[%s:%d] %s\n", FileBasename(file), line, buf);
}

}  // namespace

const char* FileBasename(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

void LogFatal(const char* file, int line, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  VLog(file, line, fmt, args);
  va_end(args);
  fflush(stderr);
  abort();
}

void LogMessage(const char* file, int line, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  VLog(file, line, fmt, args);
  va_end(args);
}

}  // namespace base
}  // namespace ringtrace
