/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Per-user shares of one ringtraced (docs/service.md, "Users share the
// service"). Every local user may reach the producer socket, so what one
// uid's peers hold at once is bounded below the service's totals: one user
// at their limit is refused with a message naming the limit and its flag,
// and nobody else notices. Root and the service's own uid may be given
// larger shares (privileged_factor).
//
// Who checks what (each in one place):
//   producers, ring bytes   ProducerTable::Admit (a ring is clamped to
//                           what is left of the uid's ring budget)
//   sessions, buffer bytes  SessionTable::Create
//   consumer connections    TracingService::AcceptConsumers
// A uid comes from the kernel (SO_PEERCRED), never from a message.

#ifndef SRC_TRACING_SERVICE_TRACED_USER_LIMITS_H_
#define SRC_TRACING_SERVICE_TRACED_USER_LIMITS_H_

#include <stdint.h>

#include <limits>
#include <string>

#include "ringtrace/status.h"

namespace ringtrace {
namespace traced {

// What one uid may hold at once. The defaults let a user run 32 apps with
// the default 1 MiB ring (or 8 with the largest, 16 MiB) and 8 sessions,
// while the service's totals (ServiceCore::Options: 256 producers, 2 GiB of
// rings, 32 sessions, 1 GiB of buffers) stay open to several times as many
// users at their limits.
struct UserLimits {
  static constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();

  uint64_t max_producers = 32;                      // connected at once
  uint64_t max_ring_bytes = uint64_t{128} << 20;    // their rings' bytes
  uint64_t max_consumers = 16;                      // consumer connections
  uint64_t max_sessions = 8;                        // consumer sessions
  uint64_t max_buffer_bytes = uint64_t{512} << 20;  // their sessions' buffers

  // Root and the service's own uid get this many times each limit; 0: no
  // per-user limit for them (only the service's totals).
  uint32_t privileged_factor = 1;

  // Each limit >= 1.
  base::Status Validate() const;
  // The limits of |uid| when the service runs as |service_uid|: these, or
  // scaled by privileged_factor for root and |service_uid| (saturating;
  // kUnlimited for factor 0).
  UserLimits For(uint32_t uid, uint32_t service_uid) const;
};

// "uid U: <what> (limit L; ringtraced --FLAG)" for a refusal message.
std::string UserLimitMessage(uint32_t uid,
                             const std::string& what,
                             uint64_t limit,
                             const char* flag);

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_USER_LIMITS_H_
