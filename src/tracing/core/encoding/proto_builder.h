/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ProtoBuilder: standard (length-delimited) protobuf built into a
// std::string, for the few small messages the service writes itself (the
// exporter's Trace.packet framing and its own packets: TraceConfig,
// TraceStats, ClockSnapshot) where the Message encoder's groups would need a
// readback. The wire primitives are ringtrace/proto_wire.h; the exporter's
// hot path (framing and stamping producer packets) uses EncodeVarInt() into
// a fixed stack buffer instead.
//
// Varint fields (with int32 sign extension to 10 bytes, as protobuf does),
// length-delimited fields and nested messages built bottom-up (the child is
// encoded first, so its length is known). Field numbers come from the
// generated k<Field>FieldNumber constants (tools/check-field-numbers).
//
// Thread model: a ProtoBuilder is used by one thread.

#ifndef SRC_TRACING_CORE_ENCODING_PROTO_BUILDER_H_
#define SRC_TRACING_CORE_ENCODING_PROTO_BUILDER_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <string_view>

#include "ringtrace/proto_wire.h"

namespace ringtrace {
namespace encoding {

// Appends fields to a std::string.
class ProtoBuilder {
 public:
  explicit ProtoBuilder(std::string* out) : out_(out) {}

  void AppendVarInt(uint32_t field_id, uint64_t value) {
    AppendRawVarInt(MakeTag(field_id, kWireVarInt));
    AppendRawVarInt(value);
  }
  // int32 fields: negative values are sign-extended to 64 bits (10 bytes).
  void AppendInt32(uint32_t field_id, int32_t value) {
    AppendVarInt(field_id, static_cast<uint64_t>(static_cast<int64_t>(value)));
  }
  void AppendBytes(uint32_t field_id, const void* data, size_t size) {
    AppendRawVarInt(MakeTag(field_id, kWireLengthDelimited));
    AppendRawVarInt(size);
    out_->append(static_cast<const char*>(data), size);
  }
  void AppendString(uint32_t field_id, std::string_view s) {
    AppendBytes(field_id, s.data(), s.size());
  }
  // A nested message already encoded in |encoded|.
  void AppendMessage(uint32_t field_id, const std::string& encoded) {
    AppendBytes(field_id, encoded.data(), encoded.size());
  }

 private:
  void AppendRawVarInt(uint64_t v) {
    uint8_t buf[kMaxVarIntSize];
    const uint8_t* end = EncodeVarInt(v, buf);
    out_->append(reinterpret_cast<const char*>(buf),
                 static_cast<size_t>(end - buf));
  }

  std::string* const out_;
};

}  // namespace encoding
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_ENCODING_PROTO_BUILDER_H_
