/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/status.h"

#include <stdarg.h>
#include <stdio.h>

#include <algorithm>
#include <string>

namespace ringtrace {
namespace base {

Status ErrStatus(const char* fmt, ...) {
  // Most messages fit the stack buffer; a longer one (a config error listing
  // several problems) is formatted again at its size, up to kMaxSize.
  constexpr size_t kMaxSize = 64 * 1024;
  char buf[512];
  va_list args;
  va_start(args, fmt);
  va_list again;
  va_copy(again, args);
  const int n = vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  if (n < 0 || static_cast<size_t>(n) < sizeof(buf)) {
    va_end(again);
    return Status(std::string(n < 0 ? "(unformattable error message)" : buf));
  }
  std::string big(std::min(static_cast<size_t>(n), kMaxSize) + 1, '\0');
  vsnprintf(&big[0], big.size(), fmt, again);
  va_end(again);
  big.resize(big.size() - 1);
  return Status(std::move(big));
}

}  // namespace base
}  // namespace ringtrace
