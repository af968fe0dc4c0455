/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/user_limits.h"

namespace ringtrace {
namespace traced {
namespace {

uint64_t Scaled(uint64_t limit, uint32_t factor) {
  if (factor == 0 || limit == UserLimits::kUnlimited)
    return UserLimits::kUnlimited;
  if (limit > UserLimits::kUnlimited / factor)
    return UserLimits::kUnlimited;
  return limit * factor;
}

}  // namespace

base::Status UserLimits::Validate() const {
  if (max_producers == 0 || max_ring_bytes == 0 || max_consumers == 0 ||
      max_sessions == 0 || max_buffer_bytes == 0) {
    return base::ErrStatus("every per-user limit must be at least 1");
  }
  return base::OkStatus();
}

UserLimits UserLimits::For(uint32_t uid, uint32_t service_uid) const {
  if (uid != 0 && uid != service_uid)
    return *this;
  UserLimits out = *this;
  out.max_producers = Scaled(max_producers, privileged_factor);
  out.max_ring_bytes = Scaled(max_ring_bytes, privileged_factor);
  out.max_consumers = Scaled(max_consumers, privileged_factor);
  out.max_sessions = Scaled(max_sessions, privileged_factor);
  out.max_buffer_bytes = Scaled(max_buffer_bytes, privileged_factor);
  return out;
}

std::string UserLimitMessage(uint32_t uid,
                             const std::string& what,
                             uint64_t limit,
                             const char* flag) {
  return "uid " + std::to_string(uid) + ": " + what + " (per-user limit " +
         std::to_string(limit) + "; ringtraced --" + flag + ")";
}

}  // namespace traced
}  // namespace ringtrace
