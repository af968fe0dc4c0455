/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Drainer benchmarks. Bytes counted are payload bytes really delivered into
// a TraceBufferV2 (fragment bytes; no chunk headers, no size entries).
//
//  BM_Drain_FullChunks/0|1        a ring of Complete 4 KiB chunks holding
//                                 50-500 byte fragments, drained into a
//                                 TraceBufferV2 (one copy per chunk); /1
//                                 overwrites unread data (see below).
//  BM_Drain_FullChunks_Memcpy     the same fragments memcpy'd from the same
//                                 ring into a 64 MiB destination: the copy
//                                 limit the drain is read against.
//  BM_Drain_FullChunks_FlatSink   the same drain into a sink that only hands
//                                 out consecutive room: the reader's share.
//  BM_Drain_SmallFragments[...]   the three above with 16-48 byte fragments
//                                 (TrackEvent-sized, ~130 per chunk), where
//                                 the per-fragment costs dominate; _Memcpy
//                                 copies fragment by fragment, _ChunkMemcpy
//                                 each chunk's payload in one copy (what a
//                                 drain that never split a chunk would pay).
//  BM_EndToEnd_WriterThenDrain    one thread: a RingWriter fills a 512 KiB
//                                 ring with 50-500 byte packets, then the
//                                 drainer empties it into TraceBufferV2.
//  BM_EndToEnd_WriterAndDrainer   two threads at once on a 512 KiB ring:
//                                 writer (arg 0: kStall, arg 1: kDrop) and
//                                 drainer (head grace 1 ms). Reports the loss
//                                 rate. On a 2-vCPU VM shared with others the
//                                 figures are contended.

#include <benchmark/benchmark.h>

#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "src/base/test/benchmark_utils.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/ring_drainer/test/fake_ring.h"
#include "src/tracing/service/ring_drainer/trace_buffer_v2_sink.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace ring_drainer {
namespace {

using shm_ring::ChunkState;
using shm_ring::RingWriter;
using trace_buffer::TraceBufferV2;

constexpr uint32_t kChunkSize = 4096;
constexpr BufferID kBufferId = 1;
constexpr size_t kTraceBufferSize = 64u << 20;

uint32_t NextRand(uint32_t* s) {
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return *s;
}

// Fragment sizes, uniform in [min, max].
struct FragMix {
  uint32_t min;
  uint32_t max;
};
// Upstream's benchmark range.
constexpr FragMix kMixedFragments{50, 500};
// TrackEvent-sized: a slice begin or end, a counter value.
constexpr FragMix kSmallFragments{16, 48};

// Fills every chunk of |ring| with fragments of |mix| (Complete words are
// stored by Arm()). Returns the fragment sizes of each chunk.
std::vector<std::vector<uint32_t>> FillChunks(shm_ring::TestRing* ring,
                                              FragMix mix) {
  const shm_ring::RingGeometry& g = ring->geometry();
  std::vector<std::vector<uint32_t>> sizes(g.num_chunks);
  uint32_t rng = 0x1234'5678u;
  for (uint32_t i = 0; i < g.num_chunks; ++i) {
    std::vector<std::string> frags;
    uint32_t used = shm_ring::kPayloadStartFormat00;
    for (;;) {
      const uint32_t size = mix.min + NextRand(&rng) % (mix.max - mix.min + 1);
      const uint32_t entries = static_cast<uint32_t>(frags.size()) + 1;
      if (used + size + entries * 2 > g.chunk_size ||
          entries > shm_ring::kMaxFragmentsPerChunk) {
        break;
      }
      frags.push_back(std::string(size, static_cast<char>('a' + i % 26)));
      sizes[i].push_back(size);
      used += size;
    }
    ring->WriteBody(i, kBufferId, frags);
  }
  return sizes;
}

// Makes the next num_chunks positions Complete chunks again (the payload
// bytes stay in place), as if a writer had refilled the ring.
void Arm(shm_ring::TestRing* ring,
         const std::vector<std::vector<uint32_t>>& sizes) {
  const shm_ring::RingGeometry& g = ring->geometry();
  for (uint32_t i = 0; i < g.num_chunks; ++i) {
    ring->set_word(i, shm_ring::MakeDataWord(
                          ChunkState::kComplete, shm_ring::kFormatTargetBuffer,
                          shm_ring::kNoChunkFlags,
                          static_cast<uint32_t>(sizes[i].size()), 1));
  }
  ring->set_write_pos(ring->write_pos() + g.num_chunks);
}

uint32_t NumChunksForBench() {
  // 1 MiB of chunks; 8 chunks in the functional-test mode.
  return bench::IsBenchmarkFunctionalOnly() ? 8 : 256;
}

// Bytes moved, and fragments per second (the rate that matters for small
// packets): |bytes| is a whole number of passes over the ring's |sizes|.
void SetFragmentCounters(benchmark::State& state,
                         uint64_t bytes,
                         const std::vector<std::vector<uint32_t>>& sizes) {
  uint64_t ring_bytes = 0;
  uint64_t ring_frags = 0;
  for (const auto& chunk : sizes) {
    ring_frags += chunk.size();
    for (uint32_t size : chunk)
      ring_bytes += size;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  const uint64_t passes = ring_bytes ? bytes / ring_bytes : 0;
  const double frags = static_cast<double>(passes * ring_frags);
  state.counters["frags_per_s"] =
      benchmark::Counter(frags, benchmark::Counter::kIsRate);
}

// Arg 0: a trace reader keeps up (an untimed read pass consumes the buffer
// every 32 MiB), so wrapping around only reclaims consumed chunks. Arg 1: the
// buffer wraps over unread data, and every overwritten chunk pays
// TraceBufferV2's erase walk.
void DrainIntoTraceBuffer(benchmark::State& state,
                          FragMix mix,
                          bool overwrite_unread) {
  const uint32_t num_chunks = NumChunksForBench();
  shm_ring::TestRing ring(kChunkSize, num_chunks);
  const auto sizes = FillChunks(&ring, mix);
  auto tb = TraceBufferV2::Create(kTraceBufferSize,
                                  TraceBufferV2::OverwritePolicy::kOverwrite);
  TraceBufferV2Sink sink(tb.get());
  RingDrainerOptions opts;
  opts.max_positions_per_pass = num_chunks;
  opts.max_bytes_per_pass = ~0ull;
  RingDrainer drainer(opts);
  RingConfig config;
  config.view = ring.view();
  config.allowed_buffers = {{kBufferId, &sink}};
  const RingId id = drainer.AddRing(config);

  uint64_t bytes = 0;
  uint64_t since_read = 0;
  trace_buffer::TracePacket packet;
  trace_buffer::PacketSequenceProperties props;
  for (auto _ : state) {
    if (!overwrite_unread && since_read >= kTraceBufferSize / 2) {
      state.PauseTiming();
      uint32_t loss;
      tb->BeginRead();
      while (tb->ReadNextTracePacket(&packet, &props, &loss)) {
      }
      since_read = 0;
      state.ResumeTiming();
    }
    Arm(&ring, sizes);
    const PassResult r = drainer.DrainRing(id);
    if (r.positions_resolved != num_chunks) {
      state.SkipWithError("drain did not resolve every chunk");
      break;
    }
    bytes += r.bytes_emitted;
    since_read += r.bytes_emitted;
  }
  SetFragmentCounters(state, bytes, sizes);
  state.counters["chunks_overwritten"] =
      static_cast<double>(tb->stats().chunks_overwritten);
}

void BM_Drain_FullChunks(benchmark::State& state) {
  DrainIntoTraceBuffer(state, kMixedFragments, state.range(0) == 1);
}
BENCHMARK(BM_Drain_FullChunks)->Arg(0)->Arg(1);

void BM_Drain_SmallFragments(benchmark::State& state) {
  DrainIntoTraceBuffer(state, kSmallFragments, /*overwrite_unread=*/false);
}
BENCHMARK(BM_Drain_SmallFragments);

void CopyFragments(benchmark::State& state, FragMix mix, bool whole_chunks) {
  const uint32_t num_chunks = NumChunksForBench();
  shm_ring::TestRing ring(kChunkSize, num_chunks);
  const auto sizes = FillChunks(&ring, mix);
  std::unique_ptr<uint8_t[]> dst(new uint8_t[kTraceBufferSize]);
  memset(dst.get(), 0, kTraceBufferSize);
  size_t dst_off = 0;
  uint64_t bytes = 0;
  std::vector<uint32_t> chunk_bytes;
  for (const auto& chunk : sizes) {
    uint32_t total = 0;
    for (uint32_t size : chunk)
      total += size;
    chunk_bytes.push_back(total);
  }
  for (auto _ : state) {
    for (uint32_t i = 0; i < num_chunks; ++i) {
      const uint8_t* src = ring.chunk(i) + shm_ring::kPayloadStartFormat00;
      if (dst_off + kChunkSize > kTraceBufferSize)
        dst_off = 0;
      if (whole_chunks) {
        memcpy(dst.get() + dst_off, src, chunk_bytes[i]);
        dst_off += chunk_bytes[i];
        bytes += chunk_bytes[i];
        continue;
      }
      for (uint32_t size : sizes[i]) {
        memcpy(dst.get() + dst_off, src, size);
        src += size;
        dst_off += size;
        bytes += size;
      }
    }
    benchmark::ClobberMemory();
  }
  SetFragmentCounters(state, bytes, sizes);
}

void BM_Drain_FullChunks_Memcpy(benchmark::State& state) {
  CopyFragments(state, kMixedFragments, /*whole_chunks=*/false);
}
BENCHMARK(BM_Drain_FullChunks_Memcpy);

void BM_Drain_SmallFragments_Memcpy(benchmark::State& state) {
  CopyFragments(state, kSmallFragments, /*whole_chunks=*/false);
}
BENCHMARK(BM_Drain_SmallFragments_Memcpy);

void BM_Drain_SmallFragments_ChunkMemcpy(benchmark::State& state) {
  CopyFragments(state, kSmallFragments, /*whole_chunks=*/true);
}
BENCHMARK(BM_Drain_SmallFragments_ChunkMemcpy);

// The drainer alone: the same drain into a sink that only hands out
// consecutive room in a flat 64 MiB region (no TraceBufferV2 bookkeeping).
// Separates the reader's cost (directory, ownership CAS, one copy) from the
// trace buffer's admission cost.
class FlatSink : public ChunkSink {
 public:
  FlatSink() : mem_(new uint8_t[kTraceBufferSize]) {
    memset(mem_.get(), 0, kTraceBufferSize);
  }
  uint8_t* BeginChunkFragments(ProducerID,
                               const ClientIdentity&,
                               WriterID,
                               ChunkID,
                               const uint32_t* sizes,
                               size_t num_fragments,
                               shm_ring::ChunkFlags) override {
    if (off_ + kChunkSize > kTraceBufferSize)
      off_ = 0;
    uint8_t* const dst = mem_.get() + off_;
    for (size_t i = 0; i < num_fragments; ++i)
      off_ += sizes[i];
    return dst;
  }
  void CommitPendingChunk() override {}
  void AbortPendingChunk() override {}

 private:
  std::unique_ptr<uint8_t[]> mem_;
  size_t off_ = 0;
};

void DrainIntoFlatSink(benchmark::State& state, FragMix mix) {
  const uint32_t num_chunks = NumChunksForBench();
  shm_ring::TestRing ring(kChunkSize, num_chunks);
  const auto sizes = FillChunks(&ring, mix);
  FlatSink sink;
  RingDrainerOptions opts;
  opts.max_positions_per_pass = num_chunks;
  opts.max_bytes_per_pass = ~0ull;
  RingDrainer drainer(opts);
  RingConfig config;
  config.view = ring.view();
  config.allowed_buffers = {{kBufferId, &sink}};
  const RingId id = drainer.AddRing(config);
  uint64_t bytes = 0;
  for (auto _ : state) {
    Arm(&ring, sizes);
    const PassResult r = drainer.DrainRing(id);
    if (r.positions_resolved != num_chunks) {
      state.SkipWithError("drain did not resolve every chunk");
      break;
    }
    bytes += r.bytes_emitted;
    benchmark::ClobberMemory();
  }
  SetFragmentCounters(state, bytes, sizes);
}

void BM_Drain_FullChunks_FlatSink(benchmark::State& state) {
  DrainIntoFlatSink(state, kMixedFragments);
}
BENCHMARK(BM_Drain_FullChunks_FlatSink);

void BM_Drain_SmallFragments_FlatSink(benchmark::State& state) {
  DrainIntoFlatSink(state, kSmallFragments);
}
BENCHMARK(BM_Drain_SmallFragments_FlatSink);

// What WritePackets() wrote: packets begun (lost ones included), their
// bytes, and how many the writer lost.
struct WriteResult {
  uint64_t packets = 0;
  uint64_t bytes = 0;
  uint64_t lost = 0;
};

// Writes |budget_bytes| worth of 50-500 byte packets into |out|.
void WritePackets(RingWriter* w,
                  uint64_t budget_bytes,
                  uint32_t* rng,
                  WriteResult* out) {
  // Bounded by |budget_bytes| (every packet is at least 50 bytes).
  while (out->bytes < budget_bytes) {
    const uint32_t size = 50 + NextRand(rng) % 451;
    RingWriter::Span span;
    if (!w->BeginPacket(&span)) {
      ++out->lost;
      ++out->packets;
      out->bytes += size;
      continue;
    }
    uint32_t left = size;
    bool ok = true;
    while (left) {
      uint32_t room = static_cast<uint32_t>(span.end - span.wptr);
      if (room == 0) {
        if (!w->ContinuePacket(&span)) {
          ok = false;
          break;
        }
        continue;
      }
      const uint32_t n = room < left ? room : left;
      memset(span.wptr, 'p', n);
      span.wptr += n;
      left -= n;
    }
    if (ok)
      w->EndPacket(span.wptr);
    else
      ++out->lost;
    ++out->packets;
    out->bytes += size;
  }
}

struct EndToEnd {
  explicit EndToEnd(uint64_t head_grace_ns)
      : ring(kChunkSize, 128),  // 512 KiB of chunks.
        tb(TraceBufferV2::Create(kTraceBufferSize,
                                 TraceBufferV2::OverwritePolicy::kOverwrite)),
        sink(tb.get()),
        drainer(Options(head_grace_ns)) {
    RingConfig config;
    config.view = ring.view();
    config.allowed_buffers = {{kBufferId, &sink}};
    id = drainer.AddRing(config);
  }
  static RingDrainerOptions Options(uint64_t head_grace_ns) {
    RingDrainerOptions o;
    o.head_grace_ns = head_grace_ns;
    return o;
  }
  RingWriter::Options WriterOptions(shm_ring::BufferExhaustedPolicy p) {
    RingWriter::Options o;
    o.writer_id = 1;
    o.target_buffer = kBufferId;
    o.policy = p;
    return o;
  }

  shm_ring::TestRing ring;
  std::unique_ptr<TraceBufferV2> tb;
  TraceBufferV2Sink sink;
  RingDrainer drainer;
  RingId id = 0;
};

void BM_EndToEnd_WriterThenDrain(benchmark::State& state) {
  EndToEnd e(/*head_grace_ns=*/0);
  RingWriter writer(e.ring.view(),
                    e.WriterOptions(shm_ring::BufferExhaustedPolicy::kDrop));
  // A bit less than the ring, so nothing is lost for lack of room.
  const uint64_t per_iteration = 384u << 10;
  uint32_t rng = 42;
  WriteResult written;
  uint64_t delivered = 0;
  for (auto _ : state) {
    WritePackets(&writer, written.bytes + per_iteration, &rng, &written);
    writer.Flush(nullptr);
    // Bounded: each pass resolves positions until the ring is empty.
    for (;;) {
      const PassResult r = e.drainer.DrainRing(e.id, DrainMode::kFlush);
      delivered += r.bytes_emitted;
      if (!r.more)
        break;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(delivered));
  state.counters["loss_rate"] = written.packets
                                    ? static_cast<double>(written.lost) /
                                          static_cast<double>(written.packets)
                                    : 0.0;
}
BENCHMARK(BM_EndToEnd_WriterThenDrain);

void BM_EndToEnd_WriterAndDrainer(benchmark::State& state) {
  const auto policy = state.range(0) == 0
                          ? shm_ring::BufferExhaustedPolicy::kStall
                          : shm_ring::BufferExhaustedPolicy::kDrop;
  EndToEnd e(/*head_grace_ns=*/1'000'000);
  RingWriter writer(e.ring.view(), e.WriterOptions(policy));
  const uint64_t per_iteration =
      bench::IsBenchmarkFunctionalOnly() ? (256u << 10) : (8u << 20);
  uint32_t rng = 7;
  WriteResult written;
  uint64_t delivered = 0;
  for (auto _ : state) {
    std::atomic<bool> writer_done{false};
    std::thread drain_thread([&] {
      // Bounded: after the writer is done, every pass makes progress until
      // the ring is empty.
      for (;;) {
        // acquire; pairs with the release store below.
        const bool done = writer_done.load(std::memory_order_acquire);
        const PassResult r = e.drainer.DrainRing(
            e.id, done ? DrainMode::kFlush : DrainMode::kNormal);
        delivered += r.bytes_emitted;
        if (r.positions_resolved == 0 && !r.more) {
          if (done)
            break;
          std::this_thread::yield();
        }
      }
    });
    WritePackets(&writer, written.bytes + per_iteration, &rng, &written);
    writer.Flush(nullptr);
    // release; pairs with the drain thread's acquire load.
    writer_done.store(true, std::memory_order_release);
    drain_thread.join();
  }
  state.SetBytesProcessed(static_cast<int64_t>(delivered));
  state.counters["loss_rate"] = written.packets
                                    ? static_cast<double>(written.lost) /
                                          static_cast<double>(written.packets)
                                    : 0.0;
  const RingStats s = e.drainer.ring_stats(e.id);
  state.counters["scrapes"] = static_cast<double>(s.reader.scrapes);
  state.counters["writer_loss_events"] =
      static_cast<double>(writer.stats().loss_events);
}
BENCHMARK(BM_EndToEnd_WriterAndDrainer)->Arg(0)->Arg(1)->UseRealTime();

}  // namespace
}  // namespace ring_drainer
}  // namespace ringtrace
