/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/message.h"

namespace ringtrace {
namespace encoding {

namespace {

inline uint8_t* PutFixed(uint64_t v, size_t n, uint8_t* p) {
  for (size_t i = 0; i < n; i++)
    *p++ = static_cast<uint8_t>(v >> (8 * i));  // little-endian
  return p;
}

}  // namespace

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
  uint8_t buf[kMaxTagSize + 8];
  uint8_t* p = EncodeVarInt((field_id << 3) | wire_type, buf);
  p = PutFixed(value, size, p);
  stream_->WriteBytes(buf, static_cast<size_t>(p - buf));
}

Message* Message::BeginNestedOverflow() {
  // Beyond kMaxNestingDepth (or below such a message): a sink that writes
  // nothing, not even the start-group tag, so the packet stays well-formed.
  stream_->nesting_overflows_++;
  if (!enabled_)
    return this;
  FinalizeNested();
  Message* sink = &stream_->sink_;
  sink->Reset(stream_, depth_ + 1, 0, /*enabled=*/false);
  return sink;
}

void Message::OnInvalidFieldId(uint32_t field_id) {
  // A programming error (see message.h); a counted no-op in release.
  RT_DCHECK(IsValidFieldId(field_id));
  stream_->invalid_field_ids_++;
}

Message* Message::BeginNestedInvalid(uint32_t field_id) {
  OnInvalidFieldId(field_id);
  // Nothing is written, and this message's open nested message (if any)
  // stays open: the call is a no-op for the packet.
  Message* sink = &stream_->sink_;
  sink->Reset(stream_, depth_ + 1, 0, /*enabled=*/false);
  return sink;
}

}  // namespace encoding
}  // namespace ringtrace
