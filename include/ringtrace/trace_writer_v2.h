/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceWriterV2: the packet writer apps use to write trace packets into the
// shared ring. One TraceWriterV2 per thread and sequence (WriterID); it owns
// one RingWriter. Apps get writers from the producer library
// (Producer::NewTraceWriter(), the TrackEvent macros); the ring owner's
// side (construction, controls) is TraceWriterV2Owner, not public.
//
//   std::unique_ptr<TraceWriterV2> writer = producer->NewTraceWriter(...);
//   {
//     auto packet = writer->NewTracePacket();
//     // TracePacket.timestamp
//     packet->AppendVarInt(8, timestamp);
//     // TracePacket.track_event, with its name and type
//     Message* ev = packet->BeginNestedMessage(11);
//     ev->AppendString(23, "name");
//     ev->AppendVarInt(9, 3);
//   }  // the handle's destructor finishes AND publishes the packet
//
// The encoding is encoding::Message's (ringtrace/message.h): standard
// protobuf with nested messages as groups, so nothing is patched after it is
// written and a packet can be published piece by piece while it is being
// written (spec 6.5). TraceWriterV2 is the MessageStream's delegate: it hands
// the stream ring chunks (RingWriter spans) and, once a packet is lost, a
// private sink; stats() counts the calls Message refused (nesting_overflows,
// invalid_field_ids).
//
// Packets span chunks transparently. When no chunk can be had (policy of
// RingWriter::Options), the rest of the packet is discarded and counted, and
// the writer's next chunk carries the data-loss flag; writing resumes by
// itself when space frees. A packet larger than the whole ring streams while
// the reader keeps up and is otherwise dropped the same way.
//
// The guarantee: once a packet's end returns (the TracePacketHandle's
// destructor or Finish(), FinishTracePacket(), or NewTracePacket() ending
// the previous packet), the packet is published (RingWriter::EndPacket(),
// spec 6.2 step 5). The service's final drain, a snapshot taken after that
// moment, and the scrape of this process if it is SIGKILLed after that
// moment all see it; or its loss is counted (stats().packets_dropped) and
// flagged (data-loss on this writer's next chunk, hence
// previous_packet_dropped on its next packet in the trace). No Flush() is
// needed for that; Flush() only signals the service and relocates an open
// packet whose chunk the reader scraped. Options::publication must stay at
// its default for this; Publication::kPerChunkRisksLossOnCrash gives it up.
//
// Thread model: not thread-safe; one thread uses a TraceWriterV2 at a time.

#ifndef INCLUDE_RINGTRACE_TRACE_WRITER_V2_H_
#define INCLUDE_RINGTRACE_TRACE_WRITER_V2_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <atomic>
#include <memory>
#include <string_view>
#include <utility>

#include "ringtrace/logging.h"
#include "ringtrace/message.h"
#include "ringtrace/ring_writer_types.h"
#include "ringtrace/shm_ring_abi.h"

namespace ringtrace {
namespace shm_ring {

class TraceWriterV2;
class TraceWriterV2Owner;  // src/tracing/core/shm_ring/trace_writer_v2_owner.h

// The loss counters the producer library reads from other threads
// (src/tracing/core/shm_ring/writer_loss_counters.h;
// TraceWriterV2Owner::AttachProducerControls).
struct WriterLossCounters;
class RingWriter;  // src/tracing/core/shm_ring/ring_writer.h

// Packet accounting is exact. Every packet begun is counted in exactly one
// of packets_committed and packets_dropped, except the packet in progress
// (begun, not yet finished, not yet lost), which is in neither:
//
//   packets_begun == packets_committed + packets_dropped + (in progress)
//
// With the default per-packet publication a packet is published, or
// counted dropped, by the time its end returns, and a committed packet
// stays committed. Only with Publication::kPerChunkRisksLossOnCrash can a
// committed packet still be lost while its last fragment is unpublished
// (the reader scrapes the chunk and no replacement can be had, or the
// relocation bound is hit): it then moves from packets_committed to
// packets_dropped. Once the writer is quiescent (no packet open; with
// deferred publication also Flush() returned, or the writer destroyed)
// every committed packet is published, and a reader that drains the ring
// receives exactly packets_committed intact packets of this writer, so
//
//   packets the reader reassembled intact + packets_dropped == packets_begun.
//
// A packet that lost any part of itself (even after its head was published
// and taken by the reader) is dropped, never committed: the reader sees its
// broken chain and the data-loss flag on the writer's next chunk, and must
// not count it as delivered.
struct TraceWriterV2Stats {
  uint64_t packets_begun = 0;      // NewTracePacket() calls
  uint64_t packets_committed = 0;  // finished intact and not lost since
  uint64_t packets_dropped = 0;    // wholly or partly lost, each once
  // Every encoded byte is counted exactly once, in one of the two:
  uint64_t bytes_written = 0;  // bytes that went into the ring and stayed
  uint64_t bytes_dropped = 0;  // bytes discarded by the encoder, plus bytes
                               // the ring dropped after they were written
                               // (relocated suffixes, protocol errors)
  uint64_t relocations = 0;
  uint64_t burned_positions = 0;
  uint64_t nesting_overflows = 0;
  uint64_t invalid_field_ids = 0;  // calls ignored, see the file comment
  // Packets dropped at once because the owner's refuse switch was on (see
  // TraceWriterV2Owner::AttachProducerControls); included in packets_dropped.
  uint64_t packets_refused = 0;
};

class TraceWriterV2 final : private encoding::MessageStream::Delegate {
 public:
  using Options = RingWriterOptions;
  static constexpr uint32_t kMaxNestingDepth =
      encoding::MessageStream::kMaxNestingDepth;

  // Finishes the packet when destroyed (protozero's TracePacketHandle).
  class TracePacketHandle {
   public:
    TracePacketHandle() = default;
    explicit TracePacketHandle(TraceWriterV2* writer) : writer_(writer) {}
    TracePacketHandle(TracePacketHandle&& other) noexcept
        : writer_(other.writer_) {
      other.writer_ = nullptr;
    }
    TracePacketHandle& operator=(TracePacketHandle&& other) noexcept {
      Finish();
      writer_ = other.writer_;
      other.writer_ = nullptr;
      return *this;
    }
    ~TracePacketHandle() { Finish(); }

    encoding::Message* operator->() const { return writer_->stream_.root(); }
    encoding::Message* get() const {
      return writer_ ? writer_->stream_.root() : nullptr;
    }
    // Finishes the packet now.
    void Finish() {
      if (writer_) {
        writer_->FinishTracePacket();
        writer_ = nullptr;
      }
    }

   private:
    TraceWriterV2* writer_ = nullptr;
  };

  // Writers are made by the ring's owner (the producer library:
  // Producer::NewTraceWriter(), ScopedThreadWriter), through
  // TraceWriterV2Owner. Finishes an open packet and flushes.
  ~TraceWriterV2();

  TraceWriterV2(const TraceWriterV2&) = delete;
  TraceWriterV2& operator=(const TraceWriterV2&) = delete;

  // Finishes the previous packet if still open and starts a new one. Never
  // fails: a packet that cannot be stored is discarded and counted.
  TracePacketHandle NewTracePacket();

  // Ends the current packet (called by the handle).
  void FinishTracePacket();

  // Finished packets are already published (see the guarantee above);
  // Flush() signals the service (RingWriterDelegate::OnChunkPublished) and,
  // with a packet open, relocates it if the reader scraped its chunk (it
  // stays unpublished until it ends). With kPerChunkRisksLossOnCrash it also
  // publishes the finished packets (RingWriter::Flush()).
  void Flush();

  TraceWriterV2Stats stats() const;

  bool packet_open() const { return packet_open_; }
  // The writer's id on its ring (its sequence, with the producer's id).
  WriterID writer_id() const;
  // The number of losses this writer recorded (RingWriterStats::loss_events
  // plus packets_refused) as of the latest packet begin or end: it grows
  // whenever stats().packets_dropped does. Inline, for hot paths that only
  // ask whether anything was lost since they last looked.
  uint64_t loss_events() const { return synced_loss_events_; }

 private:
  // The ring owner's side of the writer: construction, the producer's
  // controls, the owner reference and the ring writer itself
  // (src/tracing/core/shm_ring/trace_writer_v2_owner.h). Not for apps.
  friend class TraceWriterV2Owner;

  TraceWriterV2(const RingView& ring, const Options& options);
  void AttachProducerControls(const std::atomic<bool>* refuse,
                              WriterLossCounters* losses);
  void AttachOwner(std::shared_ptr<void> owner) { owner_ = std::move(owner); }

  // encoding::MessageStream::Delegate: the next ring span, or the sink.
  void OnSpanFull(encoding::MessageStream* stream,
                  const uint8_t* data,
                  size_t n) override;
  void EnterDiscardMode();
  // Publishes the loss counters if they changed since the last call.
  inline void MaybeSyncLosses();  // trace_writer_v2.cc
  void SyncLosses();

  // First member: destroyed last (AttachOwner).
  std::shared_ptr<void> owner_;
  // Held by pointer so that this header needs no RingWriter: the inline
  // paths touch only stream_'s span; the ring writer is called out of line (at
  // a packet's begin and end, and when a span is full).
  std::unique_ptr<RingWriter> ring_writer_;
  // The packet's bytes: its current span is the ring chunk being written
  // (or the discard sink).
  encoding::MessageStream stream_{this};
  bool packet_open_ = false;
  bool discarding_ = false;  // the current packet lost its rest
  TraceWriterV2Stats stats_;
  // AttachProducerControls(); |refuse_| points at a constant false until
  // then, so that the hot path tests one flag without a null check.
  const std::atomic<bool>* refuse_;
  WriterLossCounters* losses_ = nullptr;
  uint64_t synced_loss_events_ = 0;  // loss_events + packets_refused
  static constexpr size_t kDiscardSize = 256;
  uint8_t discard_[kDiscardSize];
};

}  // namespace shm_ring
}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_TRACE_WRITER_V2_H_
