/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceWriterV2: the encoder apps use to write trace packets into the shared
// ring. One TraceWriterV2 per thread and sequence (WriterID); it owns one
// RingWriter.
//
//   TraceWriterV2 writer(ring_view, options);
//   {
//     auto packet = writer.NewTracePacket();
//     // TracePacket.timestamp
//     packet->AppendVarInt(8, timestamp);
//     // TracePacket.track_event, with its name and type
//     Message* ev = packet->BeginNestedMessage(11);
//     ev->AppendString(23, "name");
//     ev->AppendVarInt(9, 3);
//   }  // the handle's destructor finishes AND publishes the packet
//
// Wire format: standard protobuf, except that nested messages are written as
// groups: start-group tag (field_id << 3) | 3, the fields, end-group tag
// (field_id << 3) | 4 with the SAME field id. A nested message's length is
// never needed, so nothing is ever patched after it is written, and a packet
// can be published piece by piece while it is being written (spec 6.5). The
// service converts groups back to length-delimited fields on readback (the
// ungrouper). Strings and bytes keep their normal length prefix.
//
// Messages are protozero-like: a nested message stays open until its parent
// appends another field, begins another nested message, or is finalized; at
// that point its end-group tag is written. Using a message after that is a
// programming error. Nesting deeper than kMaxNestingDepth is dropped: the
// returned message writes nothing (no start-group tag either), so the packet
// stays well-formed, and stats().nesting_overflows counts it.
//
// Field ids must be in [1, kMaxFieldId] (2^29 - 1, protobuf's limit): 0 is
// not a field, and a larger id does not fit the 32-bit tag ((id << 3) would
// overflow into a different, wrong tag). Passing one is a programming error:
// RT_DCHECK in debug builds. In release builds the call is a safe no-op
// counted in stats().invalid_field_ids: an appender writes nothing, and
// BeginNestedMessage() writes no start-group tag and returns a message that
// writes nothing (like one beyond kMaxNestingDepth; messages begun inside it
// count as nesting_overflows), so the packet stays well-formed. The range
// 19000-19999, which protobuf reserves for its implementation, is accepted:
// such tags are valid on the wire and a parser keeps them as unknown fields;
// .proto files cannot declare them, so no correct caller produces them, and
// checking would only cost the hot path a second compare.
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
#include "ringtrace/proto_wire.h"
#include "ringtrace/ring_writer_types.h"
#include "ringtrace/shm_ring_abi.h"

namespace ringtrace {
namespace shm_ring {

class TraceWriterV2;

// The loss counters the producer library reads from other threads
// (src/tracing/core/shm_ring/writer_loss_counters.h; AttachProducerControls).
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
  // AttachProducerControls); included in packets_dropped.
  uint64_t packets_refused = 0;
};

// A protobuf message being written. Obtained from TraceWriterV2 (the packet)
// or BeginNestedMessage(); owned by the writer.
class Message {
 public:
  static constexpr uint32_t kMaxFieldId = encoding::kMaxFieldId;
  // True for 1 .. kMaxFieldId (one compare: 0 wraps to the top).
  static constexpr bool IsValidFieldId(uint32_t field_id) {
    return field_id - 1u < kMaxFieldId;
  }

  // VarInt field (int32/int64/uint32/uint64/bool/enum). Negative int32/int64
  // values take 10 bytes, as in protobuf.
  template <typename T>
  void AppendVarInt(uint32_t field_id, T value) {
    AppendVarIntRaw(field_id, static_cast<uint64_t>(value));
  }
  // sint32/sint64 (zigzag).
  void AppendSignedVarInt(uint32_t field_id, int64_t value) {
    AppendVarIntRaw(field_id, (static_cast<uint64_t>(value) << 1) ^
                                  static_cast<uint64_t>(value >> 63));
  }
  void AppendFixed32(uint32_t field_id, uint32_t value);
  void AppendFixed64(uint32_t field_id, uint64_t value);
  void AppendFloat(uint32_t field_id, float value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof(bits));
    AppendFixed32(field_id, bits);
  }
  void AppendDouble(uint32_t field_id, double value) {
    uint64_t bits;
    memcpy(&bits, &value, sizeof(bits));
    AppendFixed64(field_id, bits);
  }
  void AppendString(uint32_t field_id, std::string_view s) {
    AppendBytes(field_id, s.data(), s.size());
  }
  inline void AppendBytes(uint32_t field_id, const void* data, size_t size);

  // Starts a nested message as a group (see the file comment).
  inline Message* BeginNestedMessage(uint32_t field_id);

  // Ends this message (and its open nested messages). For a nested message
  // this writes its end-group tag. Idempotent.
  inline void Finalize();

  bool is_finalized() const { return finalized_; }

 private:
  friend class TraceWriterV2;

  void Reset(TraceWriterV2* writer,
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
  void AppendVarIntRaw(uint32_t field_id, uint64_t value);
  void AppendFixed(uint32_t field_id,
                   uint32_t wire_type,
                   uint64_t value,
                   size_t size);
  Message* BeginNestedOverflow();
  // A call with an invalid field id (see the file comment).
  void OnInvalidFieldId(uint32_t field_id);
  Message* BeginNestedInvalid(uint32_t field_id);
  inline void FinalizeNested() {
    if (RT_UNLIKELY(nested_ != nullptr)) {
      nested_->Finalize();
      nested_ = nullptr;
    }
  }

  TraceWriterV2* writer_ = nullptr;
  Message* nested_ = nullptr;
  uint32_t depth_ = 0;
  uint32_t field_id_ = 0;  // of a nested message (its group's field)
  bool enabled_ = false;   // false for the sink beyond kMaxNestingDepth
  bool finalized_ = true;
};

class TraceWriterV2 {
 public:
  using Options = RingWriterOptions;
  static constexpr uint32_t kMaxNestingDepth = 32;

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

    Message* operator->() const { return &writer_->messages_[0]; }
    Message* get() const { return writer_ ? &writer_->messages_[0] : nullptr; }
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

  TraceWriterV2(const RingView& ring, const Options& options);
  // Finishes an open packet and flushes.
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

  // For the owner of the ring (the producer library); call once, before the
  // writer is used. Both pointers are not owned and must outlive the writer.
  //  |refuse|: once it reads true (relaxed: it guards no data), every new
  //    packet is dropped at once and counted (packets_refused), whatever the
  //    policy: no chunk is acquired, nothing waits. A packet already begun
  //    goes on as usual. Used when the service is gone and after fork() in
  //    the child (docs/service.md).
  //  |losses|: kept equal to this writer's loss counters after every call
  //    that can change them (and in the destructor).
  void AttachProducerControls(const std::atomic<bool>* refuse,
                              WriterLossCounters* losses);
  // For the owner of the ring: |owner| is released after everything else
  // of the writer (its destructor's final flush included), so a writer can
  // keep the object that owns its ring, delegate and controls alive.
  void AttachOwner(std::shared_ptr<void> owner) { owner_ = std::move(owner); }

  const RingWriter& ring_writer() const { return *ring_writer_; }
  // For tests (e.g. RingWriter::SetStepHookForTesting).
  RingWriter* ring_writer_for_testing() { return ring_writer_.get(); }
  bool packet_open() const { return packet_open_; }
  // The number of losses this writer recorded (RingWriterStats::loss_events
  // plus packets_refused) as of the latest packet begin or end: it grows
  // whenever stats().packets_dropped does. Inline, for hot paths that only
  // ask whether anything was lost since they last looked.
  uint64_t loss_events() const { return synced_loss_events_; }

 private:
  friend class Message;

  // Hot path: |n| bytes into the packet, spanning chunks as needed.
  inline void WriteBytes(const uint8_t* data, size_t n) {
    if (RT_LIKELY(static_cast<size_t>(span_.end - span_.wptr) >= n)) {
      memcpy(span_.wptr, data, n);
      span_.wptr += n;
      return;
    }
    WriteBytesSlow(data, n);
  }
  // Returns a pointer where |max| bytes can be written directly, or null.
  inline uint8_t* DirectRoom(size_t max) {
    return static_cast<size_t>(span_.end - span_.wptr) >= max ? span_.wptr
                                                              : nullptr;
  }
  // A tag alone (groups), without a memcpy call when there is room.
  inline void WriteTag(uint32_t tag);
  // A tag and a varint.
  inline void WriteTagAndVarInt(uint32_t tag, uint64_t value);
  void WriteBytesSlow(const uint8_t* data, size_t n);
  void EnterDiscardMode();
  // Publishes the loss counters if they changed since the last call.
  inline void MaybeSyncLosses();  // trace_writer_v2.cc
  void SyncLosses();

  // First member: destroyed last (AttachOwner).
  std::shared_ptr<void> owner_;
  // Held by pointer so that this header needs no RingWriter: its inline
  // paths touch only span_; the ring writer is called out of line (at a
  // packet's begin and end, and when a span is full).
  std::unique_ptr<RingWriter> ring_writer_;
  RingWriterSpan span_;
  bool packet_open_ = false;
  bool discarding_ = false;  // the current packet lost its rest
  TraceWriterV2Stats stats_;
  // AttachProducerControls(); |refuse_| points at a constant false until
  // then, so that the hot path tests one flag without a null check.
  const std::atomic<bool>* refuse_;
  WriterLossCounters* losses_ = nullptr;
  uint64_t synced_loss_events_ = 0;  // loss_events + packets_refused
  Message messages_[kMaxNestingDepth + 1];
  Message sink_;  // beyond kMaxNestingDepth
  static constexpr size_t kDiscardSize = 256;
  uint8_t discard_[kDiscardSize];
};

// ---------------------------------------------------------------------------
// Inline hot paths.
// ---------------------------------------------------------------------------

namespace internal {
// Max bytes of a tag (field id <= Message::kMaxFieldId) plus a 64-bit varint.
constexpr size_t kMaxTagAndVarIntSize =
    encoding::kMaxTagSize + encoding::kMaxVarIntSize;
}  // namespace internal

RT_ALWAYS_INLINE void TraceWriterV2::WriteTag(uint32_t tag) {
  if (uint8_t* direct = DirectRoom(5)) {
    span_.wptr = encoding::EncodeVarInt(tag, direct);
    return;
  }
  uint8_t buf[5];
  uint8_t* p = encoding::EncodeVarInt(tag, buf);
  WriteBytesSlow(buf, static_cast<size_t>(p - buf));
}

RT_ALWAYS_INLINE void TraceWriterV2::WriteTagAndVarInt(uint32_t tag,
                                                       uint64_t value) {
  if (uint8_t* direct = DirectRoom(internal::kMaxTagAndVarIntSize)) {
    span_.wptr =
        encoding::EncodeVarInt(value, encoding::EncodeVarInt(tag, direct));
    return;
  }
  uint8_t buf[internal::kMaxTagAndVarIntSize];
  uint8_t* p = encoding::EncodeVarInt(value, encoding::EncodeVarInt(tag, buf));
  WriteBytes(buf, static_cast<size_t>(p - buf));
}

RT_ALWAYS_INLINE void Message::AppendVarIntRaw(uint32_t field_id,
                                               uint64_t value) {
  if (RT_UNLIKELY(!enabled_))
    return;
  if (RT_UNLIKELY(!IsValidFieldId(field_id)))
    return OnInvalidFieldId(field_id);
  RT_DCHECK(!finalized_);
  FinalizeNested();
  writer_->WriteTagAndVarInt((field_id << 3) | encoding::kWireVarInt, value);
}

inline void Message::AppendBytes(uint32_t field_id,
                                 const void* data,
                                 size_t size) {
  if (RT_UNLIKELY(!enabled_))
    return;
  if (RT_UNLIKELY(!IsValidFieldId(field_id)))
    return OnInvalidFieldId(field_id);
  RT_DCHECK(!finalized_);
  FinalizeNested();
  writer_->WriteTagAndVarInt((field_id << 3) | encoding::kWireLengthDelimited,
                             size);
  writer_->WriteBytes(static_cast<const uint8_t*>(data), size);
}

inline Message* Message::BeginNestedMessage(uint32_t field_id) {
  if (RT_UNLIKELY(!enabled_ || depth_ >= TraceWriterV2::kMaxNestingDepth))
    return BeginNestedOverflow();
  if (RT_UNLIKELY(!IsValidFieldId(field_id)))
    return BeginNestedInvalid(field_id);
  RT_DCHECK(!finalized_);
  FinalizeNested();
  Message* child = &writer_->messages_[depth_ + 1];
  child->Reset(writer_, depth_ + 1, field_id, /*enabled=*/true);
  writer_->WriteTag((field_id << 3) | encoding::kWireStartGroup);
  nested_ = child;
  return child;
}

inline void Message::Finalize() {
  if (finalized_)
    return;
  FinalizeNested();
  finalized_ = true;
  if (!enabled_ || depth_ == 0)
    return;  // the packet itself has no end tag
  writer_->WriteTag((field_id_ << 3) | encoding::kWireEndGroup);
}

}  // namespace shm_ring
}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_TRACE_WRITER_V2_H_
