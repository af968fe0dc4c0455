/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/trace_writer_v2.h"

#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/writer_loss_counters.h"

namespace ringtrace {
namespace shm_ring {

namespace {
using encoding::kWireFixed32;
using encoding::kWireFixed64;

// What refuse_ points at until AttachProducerControls().
const std::atomic<bool> kNeverRefuse{false};

inline uint8_t* PutFixed(uint64_t v, size_t n, uint8_t* p) {
  for (size_t i = 0; i < n; i++)
    *p++ = static_cast<uint8_t>(v >> (8 * i));  // little-endian
  return p;
}
}  // namespace

// ---------------------------------------------------------------------------
// Message.
// ---------------------------------------------------------------------------

void Message::AppendFixed32(uint32_t field_id, uint32_t value) {
  AppendFixed(field_id, kWireFixed32, value, 4);
}

void Message::AppendFixed64(uint32_t field_id, uint64_t value) {
  AppendFixed(field_id, kWireFixed64, value, 8);
}

// Tag and |size| little-endian bytes of |value|, written in one go.
void Message::AppendFixed(uint32_t field_id,
                          uint32_t wire_type,
                          uint64_t value,
                          size_t size) {
  if (RT_UNLIKELY(!enabled_))
    return;
  if (RT_UNLIKELY(!IsValidFieldId(field_id)))
    return OnInvalidFieldId(field_id);
  RT_DCHECK(!finalized_);
  FinalizeNested();
  uint8_t buf[encoding::kMaxTagSize + 8];
  uint8_t* p = encoding::EncodeVarInt((field_id << 3) | wire_type, buf);
  p = PutFixed(value, size, p);
  writer_->WriteBytes(buf, static_cast<size_t>(p - buf));
}

Message* Message::BeginNestedOverflow() {
  // Beyond kMaxNestingDepth (or below such a message): a sink that writes
  // nothing, not even the start-group tag, so the packet stays well-formed.
  writer_->stats_.nesting_overflows++;
  if (!enabled_)
    return this;
  FinalizeNested();
  Message* sink = &writer_->sink_;
  sink->Reset(writer_, depth_ + 1, 0, /*enabled=*/false);
  return sink;
}

void Message::OnInvalidFieldId(uint32_t field_id) {
  // A programming error (see trace_writer_v2.h); a counted no-op in release.
  RT_DCHECK(IsValidFieldId(field_id));
  writer_->stats_.invalid_field_ids++;
}

Message* Message::BeginNestedInvalid(uint32_t field_id) {
  OnInvalidFieldId(field_id);
  // Nothing is written, and this message's open nested message (if any)
  // stays open: the call is a no-op for the packet.
  Message* sink = &writer_->sink_;
  sink->Reset(writer_, depth_ + 1, 0, /*enabled=*/false);
  return sink;
}

// ---------------------------------------------------------------------------
// TraceWriterV2.
// ---------------------------------------------------------------------------

TraceWriterV2::TraceWriterV2(const RingView& ring, const Options& options)
    : ring_writer_(std::make_unique<RingWriter>(ring, options)),
      refuse_(&kNeverRefuse) {}

inline void TraceWriterV2::MaybeSyncLosses() {
  if (RT_UNLIKELY(ring_writer_->stats().loss_events + stats_.packets_refused !=
                  synced_loss_events_)) {
    SyncLosses();
  }
}

TraceWriterV2::~TraceWriterV2() {
  if (packet_open_)
    FinishTracePacket();
  Flush();  // publishes the loss counters if they changed
}

void TraceWriterV2::AttachProducerControls(const std::atomic<bool>* refuse,
                                           WriterLossCounters* losses) {
  if (refuse)
    refuse_ = refuse;
  losses_ = losses;
  // Counters that are already non-zero (the caller attached late) are
  // published at once; a fresh writer has nothing to publish.
  if (ring_writer_->stats().loss_events + stats_.packets_refused != 0)
    SyncLosses();
}

void TraceWriterV2::SyncLosses() {
  const RingWriterStats& r = ring_writer_->stats();
  synced_loss_events_ = r.loss_events + stats_.packets_refused;
  if (!losses_)
    return;
  const TraceWriterV2Stats s = stats();
  const uint64_t before_end = r.open_packets_dropped + s.packets_refused;
  if (WriterLossSlot* shared = losses_->shared) {
    // relaxed: this thread is the only writer of the slot's counters, and
    // the service reads them with pread(2) once the producer is gone
    // (writer_loss_area.h). Stored before the private copy below, whose
    // release publication orders them before any report read from it.
    shared->packets_dropped_before_end.store(before_end,
                                             std::memory_order_relaxed);
    shared->packets_dropped_after_end.store(r.ended_packets_dropped,
                                            std::memory_order_relaxed);
    shared->bytes_dropped.store(s.bytes_dropped, std::memory_order_relaxed);
    shared->stall_timeouts.store(r.stall_timeouts, std::memory_order_relaxed);
  }
  // relaxed: this thread is the only writer of the counters; the release
  // increment of |version| below publishes them (see WriterLossCounters).
  losses_->packets_dropped_before_end.store(before_end,
                                            std::memory_order_relaxed);
  losses_->packets_dropped_after_end.store(r.ended_packets_dropped,
                                           std::memory_order_relaxed);
  losses_->bytes_dropped.store(s.bytes_dropped, std::memory_order_relaxed);
  losses_->stall_timeouts.store(r.stall_timeouts, std::memory_order_relaxed);
  // release: pairs with the reporter's acquire load of |version| (and of
  // |*changes|), so it reads the counters stored above or newer ones.
  losses_->version.fetch_add(1, std::memory_order_release);
  if (losses_->changes)
    losses_->changes->fetch_add(1, std::memory_order_release);
}

TraceWriterV2::TracePacketHandle TraceWriterV2::NewTracePacket() {
  if (packet_open_)
    FinishTracePacket();
  packet_open_ = true;
  stats_.packets_begun++;
  messages_[0].Reset(this, 0, 0, /*enabled=*/true);
  // relaxed: the switch guards no data (AttachProducerControls); it only
  // reads the owner's latest store, no ordering is needed.
  if (RT_UNLIKELY(refuse_->load(std::memory_order_relaxed))) {
    stats_.packets_refused++;
    EnterDiscardMode();
  } else if (RT_LIKELY(ring_writer_->BeginPacket(&span_))) {
    discarding_ = false;
  } else {
    EnterDiscardMode();
  }
  MaybeSyncLosses();
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
    // The dropped packet's bytes for the owner, and loss_events() up to
    // date even without one (a loss in the middle of the packet).
    SyncLosses();
    return;
  }
  ring_writer_->EndPacket(span_.wptr);
  span_ = RingWriter::Span();
  MaybeSyncLosses();
}

void TraceWriterV2::EnterDiscardMode() {
  // The packet (or its rest) is lost; RingWriter recorded the loss, so the
  // next chunk carries data-loss, and counted the packet in
  // open_packets_dropped (or the refuse switch counted it in
  // packets_refused). Swallow the rest of the packet privately.
  discarding_ = true;
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
      if (!ring_writer_->ContinuePacket(&span_))
        EnterDiscardMode();
      MaybeSyncLosses();
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
    if (!ring_writer_->Flush(&span_))
      EnterDiscardMode();  // the open packet was lost while relocating it
  } else {
    ring_writer_->Flush(nullptr);
  }
  MaybeSyncLosses();
}

TraceWriterV2Stats TraceWriterV2::stats() const {
  TraceWriterV2Stats s = stats_;
  const RingWriterStats& r = ring_writer_->stats();
  // Closed bytes the ring later dropped moved from "written" to "dropped", so
  // bytes_written + bytes_dropped is every byte the encoder produced.
  s.bytes_written = r.payload_bytes - r.dropped_closed_bytes;
  s.bytes_dropped += r.dropped_suffix_bytes;
  // RingWriter counts each lost packet once: open_packets_dropped for the
  // packet it was writing (exactly the calls that put us in discard mode),
  // ended_packets_dropped for finished packets lost with a dropped suffix.
  s.packets_dropped =
      r.open_packets_dropped + r.ended_packets_dropped + s.packets_refused;
  const uint64_t in_progress = packet_open_ && !discarding_ ? 1 : 0;
  RT_DCHECK(s.packets_begun >= s.packets_dropped + in_progress);
  s.packets_committed = s.packets_begun - s.packets_dropped - in_progress;
  s.relocations = r.relocations;
  s.burned_positions = r.burned_positions;
  return s;
}

}  // namespace shm_ring
}  // namespace ringtrace
