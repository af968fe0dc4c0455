/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The identity types TraceBufferV2 and the ring drainer share: the IDs of
// ringtrace/ids.h (one definition for the project), the trusted
// ClientIdentity and ChunkID ordering. Its own target
// (//src/tracing/service/trace_buffer_v2:types), so a component that only
// names chunks and producers does not depend on the whole buffer.

#ifndef SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TRACE_BUFFER_V2_TYPES_H_
#define SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TRACE_BUFFER_V2_TYPES_H_

#include <stdint.h>

#include "ringtrace/ids.h"

namespace ringtrace {
namespace trace_buffer {

using ::ringtrace::BufferID;
using ::ringtrace::ChunkID;  // Compared modulo 2^32 (see ChunkIdLess()).
using ::ringtrace::ProducerID;
using ::ringtrace::WriterID;

// Trusted identity of the producer, supplied by the service (never by the
// producer itself).
struct ClientIdentity {
  int32_t uid = 0;
  int32_t pid = 0;
};

// ChunkID ordering modulo 2^32: true if |a| precedes |b| (the two are less
// than 2^31 apart, which holds for the chunks one buffer can hold).
inline bool ChunkIdLess(ChunkID a, ChunkID b) {
  return static_cast<int32_t>(a - b) < 0;
}

}  // namespace trace_buffer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TRACE_BUFFER_V2_TYPES_H_
