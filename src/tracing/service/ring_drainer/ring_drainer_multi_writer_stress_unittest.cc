/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The stall policy is lossless with any number of writers: N writer threads
// with real RingWriters (kStall, a stall timeout far beyond the run) share
// one small ring, one thread runs the real RingDrainer into a real
// TraceBufferV2, and the writers never call Flush() (EndPacket() publishes).
// Asserted exactly, per writer: every packet it ended arrives, once, intact
// and in order; the writer recorded no loss and no stall timeout. The ring
// is small enough that writers collide on it all the time (scrapes of
// half-filled chunks, relocations, burned positions, Full and
// NoChunkAvailable waits), which is where the stall policy used to drop.
// Fixed iteration counts; the assertions hold for every interleaving.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ringtrace/logging.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/ring_drainer/test/background_drainer.h"
#include "src/tracing/service/ring_drainer/test/fake_ring.h"
#include "src/tracing/service/ring_drainer/test/packet_util.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace ring_drainer {
namespace {

using shm_ring::BufferExhaustedPolicy;
using shm_ring::RingWriter;
using shm_ring::RingWriterStats;

constexpr BufferID kBufferId = 3;
constexpr ProducerID kProducerId = 5;

struct Params {
  uint32_t chunk_size;
  uint32_t num_chunks;
  uint32_t num_writers;
  uint32_t packets_per_writer;
  uint32_t max_body;
  BufferExhaustedPolicy policy;
};

// Reads every packet back: each writer's packets exactly once, in order,
// intact and without a loss flag. Returns, per writer, the next sequence
// number expected (the packets delivered).
std::vector<uint32_t> ReadBackInOrder(const Params& p,
                                      trace_buffer::TraceBufferV2* tb) {
  std::vector<uint32_t> next(p.num_writers, 0);
  uint32_t bad = 0;
  for (const test::ReadBackPacket& rp : test::ReadAllPackets(tb)) {
    test::ParsedPacket parsed;
    if (!test::ParseTestPacket(rp.data, &parsed)) {
      ++bad;
      continue;
    }
    EXPECT_EQ(rp.producer_id, kProducerId);
    EXPECT_EQ(parsed.tag, rp.writer_id);
    if (parsed.tag < 1u || parsed.tag > p.num_writers) {
      ADD_FAILURE() << "packet of unknown writer " << parsed.tag;
      ++bad;
      continue;
    }
    const uint32_t w = parsed.tag - 1u;
    // Exactly once and in order: the next expected one, nothing skipped.
    EXPECT_EQ(parsed.seq, next[w]) << "writer " << w;
    EXPECT_EQ(rp.loss, 0u) << "writer " << w << " seq " << parsed.seq;
    next[w] = parsed.seq + 1;
  }
  EXPECT_EQ(bad, 0u) << "corrupted packets";
  return next;
}

void RunLossless(const Params& p) {
  SCOPED_TRACE(testing::Message()
               << p.num_writers << " writers, " << p.chunk_size << " x "
               << p.num_chunks << " ring, policy "
               << shm_ring::BufferExhaustedPolicyName(p.policy));
  // Room for everything: the buffer must not be what loses data here.
  const size_t tb_bytes =
      std::max<size_t>(4u << 20, size_t{p.num_writers} * p.packets_per_writer *
                                     (p.max_body + 64) * 2);
  test::DrainedRing env({p.chunk_size, p.num_chunks, /*start_position=*/0,
                         tb_bytes, kProducerId, kBufferId,
                         /*head_grace_ns=*/0});

  std::vector<std::unique_ptr<RingWriter>> writers;
  for (uint32_t w = 0; w < p.num_writers; ++w) {
    RingWriter::Options o;
    o.writer_id = static_cast<WriterID>(w + 1);
    o.target_buffer = kBufferId;
    o.policy = p.policy;
    o.stall_timeout_ms = 60'000;  // a timeout is a failure of this test
    writers.push_back(std::make_unique<RingWriter>(env.ring.view(), o));
  }
  std::vector<uint32_t> begin_failures(p.num_writers, 0);

  test::BackgroundDrainer background(&env.drainer, env.id);
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < p.num_writers; ++w) {
    threads.emplace_back([&, w] {
      const uint16_t tag = static_cast<uint16_t>(w + 1);
      uint32_t rng = 0x9e37'79b9u * (w + 1);
      for (uint32_t seq = 0; seq < p.packets_per_writer; ++seq) {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        const std::string packet =
            test::MakeTestPacket(tag, seq, rng % (p.max_body + 1));
        // Every few packets, yield inside the open fragment so the drainer
        // scrapes half-written chunks.
        const bool yield = seq % 3 == 0;
        if (!test::WriteRingPacket(writers[w].get(), packet, [yield] {
              if (yield)
                std::this_thread::yield();
            })) {
          begin_failures[w]++;
        }
      }
      // No Flush(): the writer goes idle with its last chunk cached.
    });
  }
  for (std::thread& t : threads)
    t.join();
  background.WritersDone();
  background.Stop();

  const RingStats s = env.drainer.ring_stats(env.id);
  EXPECT_EQ(s.reader.protocol_errors, 0u);
  EXPECT_EQ(s.reader.malformed_directories, 0u);
  EXPECT_EQ(s.chunks_unroutable, 0u);
  // What the buffer refused it counts itself: nothing.
  EXPECT_EQ(env.tb->stats().abi_violations, 0u);
  EXPECT_EQ(env.tb->stats().chunks_discarded, 0u);

  const std::vector<uint32_t> next = ReadBackInOrder(p, env.tb.get());

  uint64_t relocations = 0, stalls = 0, burned = 0, no_chunk = 0, past = 0;
  for (uint32_t w = 0; w < p.num_writers; ++w) {
    const RingWriterStats& st = writers[w]->stats();
    EXPECT_EQ(next[w], p.packets_per_writer) << "writer " << w;
    EXPECT_EQ(begin_failures[w], 0u) << "writer " << w;
    EXPECT_EQ(st.loss_events, 0u) << "writer " << w;
    EXPECT_EQ(st.stall_timeouts, 0u) << "writer " << w;
    EXPECT_EQ(st.open_packets_dropped + st.ended_packets_dropped, 0u)
        << "writer " << w;
    EXPECT_EQ(st.suffixes_dropped, 0u) << "writer " << w;
    relocations += st.relocations;
    stalls += st.stalls;
    burned += st.burned_positions;
    no_chunk += st.no_chunk_available;
    past += st.relocations_past_bound;
  }
  RT_LOG(
      "lossless: %u writers, %u B chunks: scrapes %llu, relocations %llu "
      "(%llu past the bound), stalls %llu, burned %llu, no chunk %llu",
      p.num_writers, p.chunk_size,
      static_cast<unsigned long long>(s.reader.scrapes),
      static_cast<unsigned long long>(relocations),
      static_cast<unsigned long long>(past),
      static_cast<unsigned long long>(stalls),
      static_cast<unsigned long long>(burned),
      static_cast<unsigned long long>(no_chunk));
}

// 256-byte chunks: packets of up to 300 bytes span chunks; 4 chunks for up
// to 8 writers, so most acquisitions find the ring Full or burn positions.
TEST(RingDrainerMultiWriterStressTest, StallIsLossless256ByteChunks) {
  for (uint32_t n : {2u, 4u, 8u})
    RunLossless({256, 4, n, 50, 300, BufferExhaustedPolicy::kStall});
}

TEST(RingDrainerMultiWriterStressTest, StallIsLossless1KiBChunks) {
  for (uint32_t n : {2u, 4u, 8u})
    RunLossless({1024, 4, n, 50, 1500, BufferExhaustedPolicy::kStall});
}

TEST(RingDrainerMultiWriterStressTest, StallIsLossless4KiBChunks) {
  for (uint32_t n : {2u, 4u, 8u})
    RunLossless({4096, 4, n, 50, 5000, BufferExhaustedPolicy::kStall});
}

// kStallThenDrop before its first timeout stalls exactly like kStall.
TEST(RingDrainerMultiWriterStressTest, StallThenDropIsLosslessBeforeTimeout) {
  RunLossless({256, 4, 8, 50, 300, BufferExhaustedPolicy::kStallThenDrop});
}

}  // namespace
}  // namespace ring_drainer
}  // namespace ringtrace
