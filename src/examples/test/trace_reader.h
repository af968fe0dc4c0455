/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Reads every packet out of a ring (as the service's drainer
// would, with the test ring reader), converts TraceWriterV2's groups back to
// standard protobuf (Ungrouper) and parses each with libprotobuf.

#ifndef SRC_EXAMPLES_TEST_TRACE_READER_H_
#define SRC_EXAMPLES_TEST_TRACE_READER_H_

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "protos/perfetto/trace/trace_packet.pb.h"
#include "ringtrace/shm_ring_abi.h"
#include "src/tracing/core/encoding/ungrouper.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"

namespace ringtrace {
namespace examples {

// Packets per writer, in order.
using PacketsByWriter =
    std::map<shm_ring::WriterID, std::vector<perfetto::protos::TracePacket>>;

inline PacketsByWriter ReadAllPackets(const shm_ring::RingView& ring) {
  shm_ring::TestRingReader reader(ring);
  std::vector<shm_ring::ReadChunk> chunks;
  EXPECT_EQ(reader.DrainAll(&chunks), shm_ring::ResolveResult::kNoData);
  shm_ring::TestPacketReassembler reassembler;
  std::vector<shm_ring::WriterID> writers;
  for (const shm_ring::ReadChunk& c : chunks) {
    reassembler.Add(c);
    writers.push_back(c.writer_id);
  }
  PacketsByWriter out;
  ungrouper::Ungrouper converter;
  for (shm_ring::WriterID id : writers) {
    if (out.count(id))
      continue;
    std::vector<perfetto::protos::TracePacket>& packets = out[id];
    const auto& ws = reassembler.writer(id);
    EXPECT_EQ(ws.data_loss_flags, 0u);
    EXPECT_EQ(ws.broken_chains, 0u);
    for (const std::string& grouped : ws.packets) {
      ungrouper::ConstBytes flat;
      const base::Status status =
          converter.Ungroup(reinterpret_cast<const uint8_t*>(grouped.data()),
                            grouped.size(), &flat);
      EXPECT_TRUE(status.ok()) << status.message();
      packets.emplace_back();
      EXPECT_TRUE(packets.back().ParseFromArray(flat.data,
                                                static_cast<int>(flat.size)));
    }
  }
  return out;
}

}  // namespace examples
}  // namespace ringtrace

#endif  // SRC_EXAMPLES_TEST_TRACE_READER_H_
