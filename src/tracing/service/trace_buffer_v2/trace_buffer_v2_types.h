/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Identity types of TraceBufferV2, shared by its internal headers. Include
// "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h" instead.

#ifndef SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TRACE_BUFFER_V2_TYPES_H_
#define SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TRACE_BUFFER_V2_TYPES_H_

#include <stdint.h>

namespace ringtrace {
namespace trace_buffer {

using ProducerID = uint16_t;
using WriterID = uint16_t;
using ChunkID = uint32_t;  // Compared modulo 2^32 (see ChunkIdLess()).
using BufferID = uint16_t;

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
