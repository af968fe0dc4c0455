/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/encoding/test/packet_capture.h"

#include "src/tracing/core/encoding/ungrouper.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"

namespace ringtrace {
namespace encoding {

namespace {
constexpr shm_ring::WriterID kWriterId = 3;
}  // namespace

PacketCapture::PacketCapture(uint32_t chunk_size, uint32_t num_chunks)
    : ring_(chunk_size, num_chunks) {
  shm_ring::TraceWriterV2::Options options;
  options.writer_id = kWriterId;
  options.target_buffer = 1;
  writer_ = shm_ring::TraceWriterV2Owner::Create(ring_.view(), options);
}

PacketCapture::~PacketCapture() = default;

std::vector<std::string> PacketCapture::Drain(uint64_t* lost_packets) {
  std::vector<std::string> packets = DrainWholePackets();
  const uint64_t lost = writer_->stats().packets_dropped;
  if (lost_packets)
    *lost_packets = lost;
  if (lost != 0)
    return {};
  return packets;
}

std::vector<std::string> PacketCapture::DrainWholePackets() {
  if (writer_->packet_open())
    writer_->FinishTracePacket();
  writer_->Flush();
  shm_ring::TestRingReader reader(ring_.view());
  std::vector<shm_ring::ReadChunk> chunks;
  reader.DrainAll(&chunks);
  return shm_ring::Reassemble(chunks, kWriterId);
}

bool PacketCapture::Ungroup(const std::string& grouped, std::string* flat) {
  ungrouper::Ungrouper converter;
  ungrouper::ConstBytes out;
  if (!converter
           .Ungroup(reinterpret_cast<const uint8_t*>(grouped.data()),
                    grouped.size(), &out)
           .ok()) {
    return false;
  }
  flat->assign(reinterpret_cast<const char*>(out.data), out.size);
  return true;
}

}  // namespace encoding
}  // namespace ringtrace
