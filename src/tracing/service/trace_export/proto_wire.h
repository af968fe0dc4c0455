/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Protobuf building for the bytes the exporter writes itself (the wire-format
// basics are src/base/proto_wire.h):
// the Trace.packet framing, the trusted-field suffix of every producer packet
// and the service's own packets (TraceConfig, TraceStats, ClockSnapshot).
// Those are few and small, so a std::string builder is enough; the hot path
// (framing and stamping producer packets) uses the raw EncodeVarInt() into a
// fixed stack buffer.
//
// Only what the exporter needs: varint fields (with int32 sign extension to
// 10 bytes, as protobuf does), length-delimited fields and nested messages
// built bottom-up (the child is encoded first, so its length is known).
//
// Thread model: a ProtoBuilder is used by one thread.

#ifndef SRC_TRACING_SERVICE_TRACE_EXPORT_PROTO_WIRE_H_
#define SRC_TRACING_SERVICE_TRACE_EXPORT_PROTO_WIRE_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <string_view>

#include "ringtrace/proto_wire.h"

namespace ringtrace {
namespace trace_export {

using base::EncodeVarInt;
using base::kMaxVarIntSize;
using base::kWireEndGroup;
using base::kWireFixed32;
using base::kWireFixed64;
using base::kWireLengthDelimited;
using base::kWireStartGroup;
using base::kWireVarInt;
using base::MakeTag;

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

}  // namespace trace_export
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_EXPORT_PROTO_WIRE_H_
