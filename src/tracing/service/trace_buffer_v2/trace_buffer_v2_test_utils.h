/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Helpers for the TraceBufferV2 tests, benchmarks and fuzzer: building v1
// chunk payloads and draining a buffer.

#ifndef SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TRACE_BUFFER_V2_TEST_UTILS_H_
#define SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TRACE_BUFFER_V2_TEST_UTILS_H_

#include <stdint.h>
#include <string.h>

#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "src/tracing/service/trace_buffer_v2/frag_iterator.h"
#include "src/tracing/service/trace_buffer_v2/tb_chunk.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace trace_buffer {
namespace test {

// Appends a fragment (4-byte redundant varint + bytes) to a v1 payload.
inline void AppendFragment(std::vector<uint8_t>* payload,
                           const std::string& data) {
  const size_t pos = payload->size();
  payload->resize(pos + 4 + data.size());
  WriteRedundantVarInt(static_cast<uint32_t>(data.size()), &(*payload)[pos]);
  if (!data.empty())
    memcpy(&(*payload)[pos + 4], data.data(), data.size());
}

// Appends a "writer dropped this packet" marker fragment.
inline void AppendDropMarker(std::vector<uint8_t>* payload) {
  const size_t pos = payload->size();
  payload->resize(pos + 4);
  WriteRedundantVarInt(kPacketSizeDropPacket, &(*payload)[pos]);
}

inline std::vector<uint8_t> MakePayload(const std::vector<std::string>& frags,
                                        size_t pad_to = 0) {
  std::vector<uint8_t> payload;
  for (const std::string& f : frags)
    AppendFragment(&payload, f);
  if (payload.size() < pad_to)
    payload.resize(pad_to, 0);
  return payload;
}

struct ReadPacket {
  ProducerID producer_id = 0;
  WriterID writer_id = 0;
  std::string data;
  uint32_t loss = 0;

  bool operator==(const ReadPacket& o) const {
    return producer_id == o.producer_id && writer_id == o.writer_id &&
           data == o.data && loss == o.loss;
  }
};

// One read pass (BeginRead + ReadNextTracePacket until false).
inline std::vector<ReadPacket> ReadAll(TraceBufferV2* tb) {
  std::vector<ReadPacket> out;
  tb->BeginRead();
  TracePacket packet;
  PacketSequenceProperties props;
  uint32_t loss = 0;
  while (tb->ReadNextTracePacket(&packet, &props, &loss)) {
    ReadPacket rp;
    rp.producer_id = props.producer_id_trusted;
    rp.writer_id = props.writer_id;
    rp.data = packet.GetRawBytesForTesting();
    rp.loss = loss;
    out.push_back(std::move(rp));
  }
  return out;
}

// Outer size of a stored chunk holding |frags| (4-byte varints).
inline size_t OuterSize(const std::vector<std::string>& frags,
                        size_t pad_to = 0) {
  return TBChunk::OuterSizeForPayload(MakePayload(frags, pad_to).size());
}

// A string of |n| bytes starting with |tag|.
inline std::string Pkt(const std::string& tag, size_t n) {
  std::string s = tag;
  s.resize(n, '.');
  return s;
}

inline ReadPacket RP(ProducerID p,
                     WriterID w,
                     std::string data,
                     uint32_t loss = 0) {
  ReadPacket rp;
  rp.producer_id = p;
  rp.writer_id = w;
  rp.data = std::move(data);
  rp.loss = loss;
  return rp;
}

inline std::vector<std::string> Data(const std::vector<ReadPacket>& pkts) {
  std::vector<std::string> out;
  for (const ReadPacket& p : pkts)
    out.push_back(p.data);
  return out;
}

inline void PrintTo(const ReadPacket& p, std::ostream* os) {
  *os << "{" << p.producer_id << ":" << p.writer_id << " \""
      << p.data.substr(0, 24) << "\" loss=" << p.loss << "}";
}

class TraceBufferV2TestBase : public ::testing::Test {
 protected:
  void Create(size_t size,
              TraceBufferV2::OverwritePolicy policy =
                  TraceBufferV2::OverwritePolicy::kOverwrite) {
    tb_ = TraceBufferV2::Create(size, policy);
    ASSERT_NE(tb_, nullptr);
  }

  bool Commit(ProducerID p,
              WriterID w,
              ChunkID id,
              const std::vector<std::string>& frags,
              TBChunkFlags flags = kNoTBChunkFlags,
              bool complete = true,
              size_t pad_to = 0) {
    std::vector<uint8_t> payload = MakePayload(frags, pad_to);
    return tb_->CopyChunkUntrusted(p, ClientIdentity{1000 + p, 2000 + p}, w, id,
                                   static_cast<uint16_t>(frags.size()), flags,
                                   complete, payload.data(), payload.size());
  }

  bool CommitRaw(ProducerID p,
                 WriterID w,
                 ChunkID id,
                 const std::vector<uint8_t>& payload,
                 uint16_t num_frags,
                 TBChunkFlags flags = kNoTBChunkFlags) {
    return tb_->CopyChunkUntrusted(p, ClientIdentity{}, w, id, num_frags, flags,
                                   true, payload.data(), payload.size());
  }

  std::vector<ReadPacket> Read() { return ReadAll(tb_.get()); }

  std::unique_ptr<TraceBufferV2> tb_;
};

}  // namespace test
}  // namespace trace_buffer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_BUFFER_V2_TRACE_BUFFER_V2_TEST_UTILS_H_
