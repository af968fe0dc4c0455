/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Status: the return type for failures a caller or a producer can cause.
// A Status is either ok() or carries a short human-readable message. It is
// cheap when ok (no allocation). Use RT_CHECK for our own invariants instead.

#ifndef INCLUDE_RINGTRACE_STATUS_H_
#define INCLUDE_RINGTRACE_STATUS_H_

#include <string>
#include <utility>

namespace ringtrace {
namespace base {

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }

  bool ok() const { return !error_; }
  const std::string& message() const { return message_; }

 private:
  friend Status ErrStatus(const char* fmt, ...);
  explicit Status(std::string msg) : error_(true), message_(std::move(msg)) {}

  bool error_ = false;
  std::string message_;
};

inline Status OkStatus() {
  return Status::Ok();
}

// printf-style error.
Status ErrStatus(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace base
}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_STATUS_H_
