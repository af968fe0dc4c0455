/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/trace_export/packet_compressor.h"

#include <limits.h>
#include <time.h>
#include <zlib.h>

#include <algorithm>

#include "protos/perfetto/trace/trace.rtzero.h"
#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/proto_wire.h"
#include "src/base/checked_math.h"
#include "src/base/time.h"

namespace ringtrace {
namespace trace_export {

namespace {

namespace rt = perfetto::protos::rtzero;

// Room beyond the batch size, so that the packet which fills a batch
// usually fits without growing it.
constexpr size_t kBatchSlack = 64 * 1024;

}  // namespace

struct PacketCompressor::ZStream {
  z_stream stream = {};
  bool initialized = false;
};

PacketCompressor::PacketCompressor(TraceFileWriter* out, const Options& options)
    : out_(out),
      batch_size_(options.batch_size),
      level_(options.level),
      zs_(new ZStream()) {
  RT_CHECK(out_);
  RT_CHECK(batch_size_ > 0);
  RT_CHECK(level_ >= 1 && level_ <= 9);
  batch_.resize(batch_size_ + kBatchSlack);
  const int r = deflateInit(&zs_->stream, level_);
  if (r != Z_OK) {
    status_ = base::ErrStatus("deflateInit: %s (zlib %d)",
                              zs_->stream.msg ? zs_->stream.msg : "failed", r);
    return;
  }
  zs_->initialized = true;
}

PacketCompressor::~PacketCompressor() {
  if (zs_->initialized)
    deflateEnd(&zs_->stream);
}

void PacketCompressor::AppendSlow(const uint8_t* data, size_t size) {
  // One packet larger than the room left: the batch grows to hold it
  // (packets are never split across batches).
  size_t needed = 0;
  if (!base::CheckedAdd(used_, size, &needed) || needed > (size_t{1} << 31)) {
    if (status_.ok())
      status_ = base::ErrStatus("compression: a packet of %zu bytes", size);
    used_ = 0;
    return;
  }
  batch_.resize(std::max(needed, batch_.size() + batch_.size() / 2));
  memcpy(batch_.data() + used_, data, size);
  used_ = needed;
}

bool PacketCompressor::Deflate(size_t* compressed_size) {
  z_stream* zs = &zs_->stream;
  if (deflateReset(zs) != Z_OK)
    return false;
  const uLong bound = deflateBound(zs, static_cast<uLong>(used_));
  if (out_buf_.size() < bound)
    out_buf_.resize(bound);
  zs->next_in = batch_.data();
  zs->avail_in = static_cast<uInt>(used_);  // used_ <= 2^31 (AppendSlow)
  zs->next_out = out_buf_.data();
  zs->avail_out = static_cast<uInt>(
      std::min<size_t>(out_buf_.size(), static_cast<size_t>(UINT_MAX)));
  const int r = deflate(zs, Z_FINISH);
  if (r != Z_STREAM_END)
    return false;  // deflateBound promises room for the whole stream
  *compressed_size = static_cast<size_t>(zs->total_out);
  return true;
}

void PacketCompressor::CompressBatch() {
  if (used_ == 0)
    return;
  if (!status_.ok()) {
    stats_.packets_dropped += stats_.packets - packets_done_;
    packets_done_ = stats_.packets;
    used_ = 0;
    return;
  }
  const uint64_t cpu_start = base::ClockNs(CLOCK_THREAD_CPUTIME_ID);
  size_t compressed = 0;
  const bool ok = Deflate(&compressed);
  stats_.cpu_ns += base::ClockNs(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
  if (!ok) {
    status_ = base::ErrStatus("deflate: %s",
                              zs_->stream.msg ? zs_->stream.msg : "failed");
    stats_.packets_dropped += stats_.packets - packets_done_;
    packets_done_ = stats_.packets;
    used_ = 0;
    return;
  }

  // Trace.packet { compressed_packets = <stream> }.
  uint8_t inner[1 + encoding::kMaxVarIntSize];
  uint8_t* i = encoding::EncodeVarInt(
      encoding::MakeTag(rt::TracePacket::kCompressedPacketsFieldNumber,
                        encoding::kWireLengthDelimited),
      inner);
  i = encoding::EncodeVarInt(compressed, i);
  const size_t inner_size = static_cast<size_t>(i - inner);
  uint8_t outer[1 + encoding::kMaxVarIntSize];
  uint8_t* o =
      encoding::EncodeVarInt(encoding::MakeTag(rt::Trace::kPacketFieldNumber,
                                               encoding::kWireLengthDelimited),
                             outer);
  o = encoding::EncodeVarInt(inner_size + compressed, o);
  const size_t outer_size = static_cast<size_t>(o - outer);
  out_->Append(outer, outer_size);
  out_->Append(inner, inner_size);
  out_->Append(out_buf_.data(), compressed);

  stats_.input_bytes += used_;
  stats_.compressed_bytes += compressed;
  stats_.output_bytes += outer_size + inner_size + compressed;
  stats_.batches++;
  packets_done_ = stats_.packets;
  used_ = 0;
  // A packet larger than the batch grew it: give that memory back.
  if (batch_.size() > 2 * (batch_size_ + kBatchSlack)) {
    batch_.resize(batch_size_ + kBatchSlack);
    batch_.shrink_to_fit();
    const size_t out_room = 2 * (batch_size_ + kBatchSlack);
    if (out_buf_.size() > out_room) {
      out_buf_.resize(out_room);
      out_buf_.shrink_to_fit();
    }
  }
}

base::Status PacketCompressor::Flush() {
  CompressBatch();
  return status_;
}

}  // namespace trace_export
}  // namespace ringtrace
