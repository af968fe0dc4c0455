/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The identity types TraceBufferV2 and the ring drainer share: the IDs of
// ringtrace/ids.h (one definition for the project), the trusted
// ClientIdentity (src/base/client_identity.h, the one definition the socket
// layer fills) and ChunkID ordering. Its own target
// (//src/tracing/service/trace_buffer_v2:types), so a component that only
// names chunks and producers does not depend on the whole buffer.

#ifndef SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TRACE_BUFFER_V2_TYPES_H_
#define SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TRACE_BUFFER_V2_TYPES_H_

#include <stdint.h>

#include "ringtrace/ids.h"
#include "src/base/client_identity.h"

namespace ringtrace {
namespace trace_buffer {

using ::ringtrace::BufferID;
using ::ringtrace::ChunkID;  // Compared modulo 2^32 (see ChunkIdLess()).
using ::ringtrace::ProducerID;
using ::ringtrace::WriterID;

// Trusted identity of the producer, supplied by the service from the
// kernel (never by the producer itself).
using ::ringtrace::base::ClientIdentity;

// A sequence's key: {ProducerID, WriterID} in 32 bits, the producer in the
// high half. The one encoding of the pair for every table keyed by
// sequence (the buffer's sequences, the drainer's ChunkID counters, the
// exporter's sequence ids, the sink's per-writer state).
class SequenceKey {
 public:
  constexpr SequenceKey(ProducerID producer, WriterID writer)
      : value_((static_cast<uint32_t>(producer) << 16) | writer) {}
  static constexpr SequenceKey FromValue(uint32_t value) {
    return SequenceKey(static_cast<ProducerID>(value >> 16),
                       static_cast<WriterID>(value & 0xffffu));
  }
  constexpr uint32_t value() const { return value_; }
  constexpr ProducerID producer() const {
    return static_cast<ProducerID>(value_ >> 16);
  }
  constexpr WriterID writer() const {
    return static_cast<WriterID>(value_ & 0xffffu);
  }
  constexpr bool operator==(SequenceKey o) const { return value_ == o.value_; }
  constexpr bool operator!=(SequenceKey o) const { return value_ != o.value_; }

 private:
  uint32_t value_;
};

// ChunkID ordering modulo 2^32: true if |a| precedes |b| (the two are less
// than 2^31 apart, which holds for the chunks one buffer can hold).
inline bool ChunkIdLess(ChunkID a, ChunkID b) {
  return static_cast<int32_t>(a - b) < 0;
}

}  // namespace trace_buffer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TRACE_BUFFER_V2_TYPES_H_
