/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Message: the group encoder of protobuf messages, written into memory spans
// a MessageStream's delegate hands out (TraceWriterV2 hands out ring chunks;
// a test can hand out a plain buffer).
//
//   Message* packet = stream.BeginRoot();
//   packet->AppendVarInt(8, timestamp);        // TracePacket.timestamp
//   Message* ev = packet->BeginNestedMessage(11);  // TracePacket.track_event
//   ev->AppendString(23, "name");
//   packet->Finalize();
//
// (Apps write field numbers through the generated typed writers,
// typed_message.h, never by hand.)
//
// Wire format: standard protobuf, except that nested messages are written as
// groups: start-group tag (field_id << 3) | 3, the fields, end-group tag
// (field_id << 3) | 4 with the SAME field id. A nested message's length is
// never needed, so nothing is ever patched after it is written, and a packet
// can be published piece by piece while it is being written (ring protocol
// 6.5). The Ungrouper (src/tracing/core/encoding/ungrouper.h) converts
// groups back to length-delimited fields on readback. Strings and bytes
// keep their normal length prefix.
//
// A nested message stays open until its parent appends another field,
// begins another nested message, or is finalized; at that point its
// end-group tag is written. Using a message after that is a programming
// error. Nesting deeper than kMaxNestingDepth is dropped: the returned
// message writes nothing (no start-group tag either), so the packet stays
// well-formed, and nesting_overflows() counts it.
//
// Field ids must be in [1, kMaxFieldId] (2^29 - 1, protobuf's limit): 0 is
// not a field, and a larger id does not fit the 32-bit tag ((id << 3) would
// overflow into a different, wrong tag). Passing one is a programming error:
// RT_DCHECK in debug builds. In release builds the call is a safe no-op
// counted in invalid_field_ids(): an appender writes nothing, and
// BeginNestedMessage() writes no start-group tag and returns a message that
// writes nothing (like one beyond kMaxNestingDepth; messages begun inside it
// count as nesting overflows), so the packet stays well-formed. The range
// 19000-19999, which protobuf reserves for its implementation, is accepted:
// such tags are valid on the wire and a parser keeps them as unknown fields;
// .proto files cannot declare them, so no correct caller produces them, and
// checking would only cost the hot path a second compare.
//
// Cost: the appenders are inline and touch only the stream's current span
// (two pointers); only a write that does not fit it calls the delegate, out
// of line.
//
// Thread model: not thread-safe; one thread uses a MessageStream and its
// Messages at a time.

#ifndef INCLUDE_RINGTRACE_MESSAGE_H_
#define INCLUDE_RINGTRACE_MESSAGE_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <string_view>

#include "ringtrace/logging.h"
#include "ringtrace/proto_wire.h"

namespace ringtrace {
namespace encoding {

class MessageStream;

// A protobuf message being written. Obtained from MessageStream::BeginRoot()
// (the packet) or BeginNestedMessage(); owned by the stream.
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
  friend class MessageStream;

  void Reset(MessageStream* stream,
             uint32_t depth,
             uint32_t field_id,
             bool enabled) {
    stream_ = stream;
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

  MessageStream* stream_ = nullptr;
  Message* nested_ = nullptr;
  uint32_t depth_ = 0;
  uint32_t field_id_ = 0;  // of a nested message (its group's field)
  bool enabled_ = false;   // false for the sink beyond kMaxNestingDepth
  bool finalized_ = true;
};

// The bytes of a sequence of root messages (packets), written into the
// current span [wptr, end) and, when that is full, through the delegate.
// Owns the Messages of every nesting level, so nothing is allocated per
// message. The owner (TraceWriterV2) begins a root, hands out spans, and
// reads back where the bytes ended.
class MessageStream {
 public:
  static constexpr uint32_t kMaxNestingDepth = 32;

  class Delegate {
   public:
    // A write that may not fit the current span (its room can be smaller
    // than |n|, or than a tag's worst case): writes [data, data + n) where
    // the stream continues (the rest of the span first, then fresh spans set
    // with SetSpan(), or a private sink when the bytes are lost). Returns
    // with every byte consumed.
    virtual void OnSpanFull(MessageStream* stream,
                            const uint8_t* data,
                            size_t n) = 0;

   protected:
    ~Delegate() = default;
  };

  explicit MessageStream(Delegate* delegate) : delegate_(delegate) {}
  MessageStream(const MessageStream&) = delete;
  MessageStream& operator=(const MessageStream&) = delete;

  // Starts a root message; the previous root must be finalized.
  Message* BeginRoot() {
    messages_[0].Reset(this, 0, 0, /*enabled=*/true);
    return &messages_[0];
  }
  Message* root() { return &messages_[0]; }

  // The current span: bytes go to [wptr, end).
  void SetSpan(uint8_t* wptr, uint8_t* end) {
    wptr_ = wptr;
    end_ = end;
  }
  uint8_t* wptr() const { return wptr_; }
  uint8_t* end() const { return end_; }
  size_t room() const { return static_cast<size_t>(end_ - wptr_); }

  // Calls refused by Message (see the file comment), since construction.
  uint64_t nesting_overflows() const { return nesting_overflows_; }
  uint64_t invalid_field_ids() const { return invalid_field_ids_; }

  // |n| bytes into the stream, spanning spans as needed.
  inline void WriteBytes(const uint8_t* data, size_t n) {
    if (RT_LIKELY(room() >= n)) {
      memcpy(wptr_, data, n);
      wptr_ += n;
      return;
    }
    delegate_->OnSpanFull(this, data, n);
  }

 private:
  friend class Message;

  // Returns a pointer where |max| bytes can be written directly, or null.
  inline uint8_t* DirectRoom(size_t max) {
    return room() >= max ? wptr_ : nullptr;
  }
  // A tag alone (groups), without a memcpy call when there is room.
  inline void WriteTag(uint32_t tag);
  // A tag and a varint.
  inline void WriteTagAndVarInt(uint32_t tag, uint64_t value);

  Delegate* const delegate_;
  uint8_t* wptr_ = nullptr;
  uint8_t* end_ = nullptr;
  uint64_t nesting_overflows_ = 0;
  uint64_t invalid_field_ids_ = 0;
  Message messages_[kMaxNestingDepth + 1];
  Message sink_;  // beyond kMaxNestingDepth, or below an invalid field id
};

// ---------------------------------------------------------------------------
// Inline hot paths.
// ---------------------------------------------------------------------------

// Max bytes of a tag (field id <= Message::kMaxFieldId) plus a 64-bit varint.
constexpr size_t kMaxTagAndVarIntSize = kMaxTagSize + kMaxVarIntSize;

RT_ALWAYS_INLINE void MessageStream::WriteTag(uint32_t tag) {
  if (uint8_t* direct = DirectRoom(kMaxTagSize)) {
    wptr_ = EncodeVarInt(tag, direct);
    return;
  }
  uint8_t buf[kMaxTagSize];
  uint8_t* p = EncodeVarInt(tag, buf);
  delegate_->OnSpanFull(this, buf, static_cast<size_t>(p - buf));
}

RT_ALWAYS_INLINE void MessageStream::WriteTagAndVarInt(uint32_t tag,
                                                       uint64_t value) {
  if (uint8_t* direct = DirectRoom(kMaxTagAndVarIntSize)) {
    wptr_ = EncodeVarInt(value, EncodeVarInt(tag, direct));
    return;
  }
  uint8_t buf[kMaxTagAndVarIntSize];
  uint8_t* p = EncodeVarInt(value, EncodeVarInt(tag, buf));
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
  stream_->WriteTagAndVarInt((field_id << 3) | kWireVarInt, value);
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
  stream_->WriteTagAndVarInt((field_id << 3) | kWireLengthDelimited, size);
  stream_->WriteBytes(static_cast<const uint8_t*>(data), size);
}

inline Message* Message::BeginNestedMessage(uint32_t field_id) {
  if (RT_UNLIKELY(!enabled_ || depth_ >= MessageStream::kMaxNestingDepth))
    return BeginNestedOverflow();
  if (RT_UNLIKELY(!IsValidFieldId(field_id)))
    return BeginNestedInvalid(field_id);
  RT_DCHECK(!finalized_);
  FinalizeNested();
  Message* child = &stream_->messages_[depth_ + 1];
  child->Reset(stream_, depth_ + 1, field_id, /*enabled=*/true);
  stream_->WriteTag((field_id << 3) | kWireStartGroup);
  nested_ = child;
  return child;
}

inline void Message::Finalize() {
  if (finalized_)
    return;
  FinalizeNested();
  finalized_ = true;
  if (!enabled_ || depth_ == 0)
    return;  // the root (the packet) has no end tag
  stream_->WriteTag((field_id_ << 3) | kWireEndGroup);
}

}  // namespace encoding
}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_MESSAGE_H_
