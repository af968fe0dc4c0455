/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Test support: self-verifying packets (writer tag + sequence number +
// length + body + checksum), a RingWriter packet writer, and a TraceBufferV2
// read-back helper.

#ifndef SRC_TRACING_SERVICE_RING_DRAINER_TEST_PACKET_UTIL_H_
#define SRC_TRACING_SERVICE_RING_DRAINER_TEST_PACKET_UTIL_H_

#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/service/ring_drainer/test/loss_ledger.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

// Layout: tag u16 | seq u32 | body_len u32 | body | checksum u32, all
// little-endian; the body bytes are a function of (tag, seq, index).
constexpr size_t kPacketOverhead = 2 + 4 + 4 + 4;

std::string MakeTestPacket(uint16_t tag, uint32_t seq, uint32_t body_len);

struct ParsedPacket {
  uint16_t tag = 0;
  uint32_t seq = 0;
  uint32_t body_len = 0;
};

// True if |data| is an intact test packet (length, body and checksum all
// consistent).
bool ParseTestPacket(const std::string& data, ParsedPacket* out);

// Writes |data| as one packet through |w|, continuing across chunks.
// |inside_fragment| (may be empty) runs once per fragment while it is open,
// e.g. to yield and let the reader scrape. Returns false if the writer lost
// the packet (the loss is recorded by the writer). With a |ledger| (see
// loss_ledger.h), every call into |w| is reported to it, the packet being
// number |seq|; a packet this returns true for may still be lost later, with
// a dropped relocated suffix, and the ledger then says so.
bool WriteRingPacket(shm_ring::RingWriter* w,
                     const std::string& data,
                     const std::function<void()>& inside_fragment = {},
                     LossLedger* ledger = nullptr,
                     uint32_t seq = 0);

// w->Flush(nullptr), reported to |ledger| (may be null).
void FlushRingWriter(shm_ring::RingWriter* w, LossLedger* ledger);

struct ReadBackPacket {
  trace_buffer::ProducerID producer_id = 0;
  trace_buffer::WriterID writer_id = 0;
  std::string data;
  uint32_t loss = 0;  // previous_packet_dropped
};

// One read pass over |tb|.
std::vector<ReadBackPacket> ReadAllPackets(trace_buffer::TraceBufferV2* tb);

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_RING_DRAINER_TEST_PACKET_UTIL_H_
