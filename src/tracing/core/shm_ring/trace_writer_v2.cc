/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/trace_writer_v2.h"

#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/writer_loss_counters.h"

namespace ringtrace {
namespace shm_ring {

namespace {

// What refuse_ points at until AttachProducerControls().
const std::atomic<bool> kNeverRefuse{false};

}  // namespace

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
  stream_.BeginRoot();
  // relaxed: the switch guards no data (AttachProducerControls); it only
  // reads the owner's latest store, no ordering is needed.
  if (RT_UNLIKELY(refuse_->load(std::memory_order_relaxed))) {
    stats_.packets_refused++;
    EnterDiscardMode();
  } else if (RingWriterSpan span; RT_LIKELY(ring_writer_->BeginPacket(&span))) {
    stream_.SetSpan(span.wptr, span.end);
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
  stream_.root()->Finalize();
  packet_open_ = false;
  if (RT_UNLIKELY(discarding_)) {
    stats_.bytes_dropped += static_cast<uint64_t>(stream_.wptr() - discard_);
    discarding_ = false;
    stream_.SetSpan(nullptr, nullptr);
    // The dropped packet's bytes for the owner, and loss_events() up to
    // date even without one (a loss in the middle of the packet).
    SyncLosses();
    return;
  }
  ring_writer_->EndPacket(stream_.wptr());
  stream_.SetSpan(nullptr, nullptr);
  MaybeSyncLosses();
}

void TraceWriterV2::EnterDiscardMode() {
  // The packet (or its rest) is lost; RingWriter recorded the loss, so the
  // next chunk carries data-loss, and counted the packet in
  // open_packets_dropped (or the refuse switch counted it in
  // packets_refused). Swallow the rest of the packet privately.
  discarding_ = true;
  stream_.SetSpan(discard_, discard_ + kDiscardSize);
}

void TraceWriterV2::OnSpanFull(encoding::MessageStream* stream,
                               const uint8_t* data,
                               size_t n) {
  RT_DCHECK(stream == &stream_);
  // Bounded: every iteration copies at least one byte, or replaces a full
  // span with a fresh, non-empty one (a new chunk or the discard buffer).
  while (n > 0) {
    const size_t room = stream_.room();
    if (room == 0) {
      if (discarding_) {
        stats_.bytes_dropped += kDiscardSize;
        stream_.SetSpan(discard_, discard_ + kDiscardSize);
        continue;
      }
      RingWriterSpan span{stream_.wptr(), stream_.end()};
      if (ring_writer_->ContinuePacket(&span))
        stream_.SetSpan(span.wptr, span.end);
      else
        EnterDiscardMode();
      MaybeSyncLosses();
      continue;
    }
    const size_t chunk = room < n ? room : n;
    memcpy(stream_.wptr(), data, chunk);
    stream_.SetSpan(stream_.wptr() + chunk, stream_.end());
    data += chunk;
    n -= chunk;
  }
}

void TraceWriterV2::Flush() {
  if (packet_open_ && !discarding_) {
    RingWriterSpan span{stream_.wptr(), stream_.end()};
    if (ring_writer_->Flush(&span))
      stream_.SetSpan(span.wptr, span.end);
    else
      EnterDiscardMode();  // the open packet was lost while relocating it
  } else {
    ring_writer_->Flush(nullptr);
  }
  MaybeSyncLosses();
}

WriterID TraceWriterV2::writer_id() const {
  return ring_writer_->options().writer_id;
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
  s.nesting_overflows = stream_.nesting_overflows();
  s.invalid_field_ids = stream_.invalid_field_ids();
  return s;
}

}  // namespace shm_ring
}  // namespace ringtrace
