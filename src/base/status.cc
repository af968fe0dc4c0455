/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/status.h"

#include <stdarg.h>
#include <stdio.h>

namespace ringtrace {
namespace base {

Status ErrStatus(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  return Status(std::string(buf));
}

}  // namespace base
}  // namespace ringtrace
