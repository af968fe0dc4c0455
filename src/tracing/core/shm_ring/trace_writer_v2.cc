/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/shm_ring/trace_writer_v2.h"

namespace ringtrace {
namespace shm_ring {

namespace {
constexpr uint32_t kWireFixed64 = 1;
constexpr uint32_t kWireLengthDelimited = 2;
constexpr uint32_t kWireStartGroup = 3;
constexpr uint32_t kWireEndGroup = 4;
constexpr uint32_t kWireFixed32 = 5;

inline uint8_t* PutFixed(uint64_t v, size_t n, uint8_t* p) {
  for (size_t i = 0; i < n; i++)
    *p++ = static_cast<uint8_t>(v >> (8 * i));  // little-endian
  return p;
}
}  // namespace

// ---------------------------------------------------------------------------
// Message.
// ---------------------------------------------------------------------------

void Message::Reset(TraceWriterV2* writer,
                    uint32_t depth,
                    uint32_t field_id,
                    bool enabled) {
  writer_ = writer;
  nested_ = nullptr;
  depth_ = depth;
  field_id_ = field_id;
  enabled_ = enabled;
  finalized_ = false;
}

void Message::AppendFixed32(uint32_t field_id, uint32_t value) {
  if (RT_UNLIKELY(!enabled_))
    return;
  RT_DCHECK(!finalized_);
  FinalizeNested();
  uint8_t buf[5 + 4];
  uint8_t* p = internal::EncodeVarInt((field_id << 3) | kWireFixed32, buf);
  p = PutFixed(value, 4, p);
  writer_->WriteBytes(buf, static_cast<size_t>(p - buf));
}

void Message::AppendFixed64(uint32_t field_id, uint64_t value) {
  if (RT_UNLIKELY(!enabled_))
    return;
  RT_DCHECK(!finalized_);
  FinalizeNested();
  uint8_t buf[5 + 8];
  uint8_t* p = internal::EncodeVarInt((field_id << 3) | kWireFixed64, buf);
  p = PutFixed(value, 8, p);
  writer_->WriteBytes(buf, static_cast<size_t>(p - buf));
}

void Message::AppendBytes(uint32_t field_id, const void* data, size_t size) {
  if (RT_UNLIKELY(!enabled_))
    return;
  RT_DCHECK(!finalized_);
  FinalizeNested();
  uint8_t buf[internal::kMaxTagAndVarIntSize];
  uint8_t* p =
      internal::EncodeVarInt((field_id << 3) | kWireLengthDelimited, buf);
  p = internal::EncodeVarInt(size, p);
  writer_->WriteBytes(buf, static_cast<size_t>(p - buf));
  writer_->WriteBytes(static_cast<const uint8_t*>(data), size);
}

Message* Message::BeginNestedMessage(uint32_t field_id) {
  if (RT_UNLIKELY(!enabled_)) {
    writer_->stats_.nesting_overflows++;
    return this;  // the sink swallows everything below it
  }
  RT_DCHECK(!finalized_);
  FinalizeNested();
  Message* child = writer_->AllocateNested(depth_ + 1, field_id);
  if (child->enabled_) {
    uint8_t buf[5];
    uint8_t* p = internal::EncodeVarInt((field_id << 3) | kWireStartGroup, buf);
    writer_->WriteBytes(buf, static_cast<size_t>(p - buf));
    nested_ = child;
  }
  return child;
}

void Message::Finalize() {
  if (finalized_)
    return;
  FinalizeNested();
  finalized_ = true;
  if (!enabled_ || depth_ == 0)
    return;  // the packet itself has no end tag
  uint8_t buf[5];
  uint8_t* p = internal::EncodeVarInt((field_id_ << 3) | kWireEndGroup, buf);
  writer_->WriteBytes(buf, static_cast<size_t>(p - buf));
}

// ---------------------------------------------------------------------------
// TraceWriterV2.
// ---------------------------------------------------------------------------

TraceWriterV2::TraceWriterV2(const RingView& ring, const Options& options)
    : ring_writer_(ring, options) {}

TraceWriterV2::~TraceWriterV2() {
  if (packet_open_)
    FinishTracePacket();
  Flush();
}

Message* TraceWriterV2::AllocateNested(uint32_t depth, uint32_t field_id) {
  if (depth > kMaxNestingDepth) {
    stats_.nesting_overflows++;
    sink_.Reset(this, depth, field_id, /*enabled=*/false);
    return &sink_;
  }
  Message* m = &messages_[depth];
  m->Reset(this, depth, field_id, /*enabled=*/true);
  return m;
}

TraceWriterV2::TracePacketHandle TraceWriterV2::NewTracePacket() {
  if (packet_open_)
    FinishTracePacket();
  packet_open_ = true;
  messages_[0].Reset(this, 0, 0, /*enabled=*/true);
  if (RT_LIKELY(ring_writer_.BeginPacket(&span_))) {
    discarding_ = false;
  } else {
    EnterDiscardMode();
  }
  return TracePacketHandle(this);
}

void TraceWriterV2::FinishTracePacket() {
  RT_DCHECK(packet_open_);
  if (!packet_open_)
    return;
  messages_[0].Finalize();
  packet_open_ = false;
  if (RT_UNLIKELY(discarding_)) {
    stats_.bytes_dropped += static_cast<uint64_t>(span_.wptr - discard_);
    discarding_ = false;
    span_ = RingWriter::Span();
    return;
  }
  ring_writer_.EndPacket(span_.wptr);
  span_ = RingWriter::Span();
  stats_.packets_written++;
}

void TraceWriterV2::EnterDiscardMode() {
  // The packet (or its rest) is lost; RingWriter recorded the loss, so the
  // next chunk carries data-loss. Swallow the rest of the packet privately.
  discarding_ = true;
  stats_.packets_dropped++;
  span_.wptr = discard_;
  span_.end = discard_ + kDiscardSize;
}

void TraceWriterV2::WriteBytesSlow(const uint8_t* data, size_t n) {
  // Bounded: every iteration copies at least one byte, or replaces a full
  // span with a fresh, non-empty one (a new chunk or the discard buffer).
  while (n > 0) {
    const size_t room = static_cast<size_t>(span_.end - span_.wptr);
    if (room == 0) {
      if (discarding_) {
        stats_.bytes_dropped += kDiscardSize;
        span_.wptr = discard_;
        continue;
      }
      if (!ring_writer_.ContinuePacket(&span_))
        EnterDiscardMode();
      continue;
    }
    const size_t chunk = room < n ? room : n;
    memcpy(span_.wptr, data, chunk);
    span_.wptr += chunk;
    data += chunk;
    n -= chunk;
  }
}

void TraceWriterV2::Flush() {
  if (packet_open_ && !discarding_) {
    if (!ring_writer_.Flush(&span_))
      EnterDiscardMode();  // the open packet was lost while relocating it
    return;
  }
  ring_writer_.Flush(nullptr);
}

TraceWriterV2Stats TraceWriterV2::stats() const {
  TraceWriterV2Stats s = stats_;
  const RingWriterStats& r = ring_writer_.stats();
  s.bytes_written = r.payload_bytes;
  s.bytes_dropped += r.dropped_suffix_bytes;
  s.relocations = r.relocations;
  s.burned_positions = r.burned_positions;
  return s;
}

}  // namespace shm_ring
}  // namespace ringtrace
