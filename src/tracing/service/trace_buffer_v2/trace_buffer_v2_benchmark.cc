/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceBufferV2 benchmarks. Workload (as Perfetto's TraceBuffer benchmarks):
// 4 KiB SMB chunks, each holding 5-15 packets of 50-500 bytes, taken from 100
// pre-generated templates. Bytes counted are the bytes really copied (the
// fragments of each chunk, not 4096 per chunk) or really read (packet bytes).
//
// BM_TraceBuffer_CopyLimit is the baseline for the write benchmarks: memcpy
// of the same chunk bytes into a 64 MiB ring, nothing else.
//
// BM_TraceBuffer_Upstream_WR / _RD reproduce the workload of Perfetto's
// trace_buffer_benchmark instead: 4 KiB SMB chunks (4080 payload bytes),
// 5-15 packets of 50-500 bytes each INCLUDING their 1-2 byte varint size
// header, the packet that does not fit cut to fill the chunk (it is then the
// last), exactly the fragment bytes handed to the buffer, and only the
// packets' own bytes counted (no headers). The reader walks the slices of
// every packet without copying them. Read them beside BM_Memcpy (src/base)
// of the same run.

#include <benchmark/benchmark.h>

#include <string.h>
#include <sys/mman.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "src/base/test/benchmark_utils.h"
#include "src/tracing/service/trace_buffer_v2/frag_iterator.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace trace_buffer {
namespace {

constexpr size_t kSmbChunkSize = 4096;
constexpr size_t kSmbPayloadSize = kSmbChunkSize - 16;
constexpr size_t kNumTemplates = 100;
constexpr size_t kWriteBufferSize = 64 << 20;

// Outer size of a stored complete chunk with |payload| bytes of fragments.
size_t TBChunkOuterSize(size_t payload) {
  return (16 + payload + 3) & ~size_t{3};
}

struct ChunkTemplate {
  std::vector<uint8_t> payload;  // kSmbPayloadSize bytes (SMB chunk area).
  uint16_t num_fragments = 0;
  V1ChunkFlags flags;
  size_t used = 0;  // Bytes of the fragments (what is really copied).
};

void AppendFragment(ChunkTemplate* t, size_t size, std::minstd_rand* rng) {
  WriteRedundantVarint(static_cast<uint32_t>(size), &t->payload[t->used]);
  for (size_t i = 0; i < size; i++)
    t->payload[t->used + 4 + i] = static_cast<uint8_t>((*rng)());
  t->used += 4 + size;
  t->num_fragments++;
}

// 5-15 packets of 50-500 bytes each (as many as fit in the chunk).
const std::vector<ChunkTemplate>& MixedTemplates() {
  static const std::vector<ChunkTemplate>* templates = [] {
    auto* v = new std::vector<ChunkTemplate>();
    std::minstd_rand rng(42);
    for (size_t i = 0; i < kNumTemplates; i++) {
      ChunkTemplate t;
      t.payload.resize(kSmbPayloadSize);
      const size_t num_packets = 5 + rng() % 11;
      for (size_t p = 0; p < num_packets; p++) {
        const size_t size = 50 + rng() % 451;
        if (t.used + 4 + size > kSmbPayloadSize)
          break;
        AppendFragment(&t, size, &rng);
      }
      v->push_back(std::move(t));
    }
    return v;
  }();
  return *templates;
}

// A stream of chunks whose packets each span 2-4 chunks: every chunk holds
// one fragment that continues from the previous chunk and/or on the next.
std::vector<ChunkTemplate> FragmentedChunks(size_t count) {
  std::vector<ChunkTemplate> v;
  std::minstd_rand rng(7);
  size_t left_in_packet = 0;
  for (size_t i = 0; i < count; i++) {
    ChunkTemplate t;
    t.payload.resize(kSmbPayloadSize);
    if (left_in_packet)
      t.flags |= kFirstPacketContinuesFromPrevChunk;
    // Bounded: each fragment uses at least 5 bytes of the chunk.
    while (t.used + 5 <= kSmbPayloadSize) {
      if (!left_in_packet)
        left_in_packet = kSmbPayloadSize + rng() % (2 * kSmbPayloadSize);
      const size_t size =
          std::min(left_in_packet, kSmbPayloadSize - t.used - 4);
      AppendFragment(&t, size, &rng);
      left_in_packet -= size;
      if (left_in_packet) {
        t.flags |= kLastPacketContinuesOnNextChunk;
        break;
      }
    }
    v.push_back(std::move(t));
  }
  return v;
}

bool Commit(TraceBufferV2* tb,
            WriterID writer,
            ChunkID chunk_id,
            const ChunkTemplate& t) {
  return tb->CopyChunkUntrusted(1, ClientIdentity{}, writer, chunk_id,
                                t.num_fragments, t.flags, true,
                                t.payload.data(), t.payload.size());
}

void BM_TraceBuffer_CopyLimit(benchmark::State& state) {
  const auto& templates = MixedTemplates();
  std::unique_ptr<uint8_t[]> ring(new uint8_t[kWriteBufferSize]);
  memset(ring.get(), 0, kWriteBufferSize);
  size_t wr = 0, i = 0;
  uint64_t bytes = 0;
  for (auto _ : state) {
    const ChunkTemplate& t = templates[i++ % kNumTemplates];
    if (wr + t.used > kWriteBufferSize)
      wr = 0;
    memcpy(ring.get() + wr, t.payload.data(), t.used);
    benchmark::ClobberMemory();
    wr += (t.used + 3) & ~size_t{3};
    bytes += t.used;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void WriteBenchmark(benchmark::State& state, WriterID num_writers) {
  const auto& templates = MixedTemplates();
  auto tb = TraceBufferV2::Create(kWriteBufferSize,
                                  TraceBufferV2::OverwritePolicy::kOverwrite);
  std::vector<ChunkID> next_id(num_writers, 0);
  size_t i = 0;
  WriterID w = 0;
  uint64_t bytes = 0;
  for (auto _ : state) {
    const ChunkTemplate& t = templates[i++ % kNumTemplates];
    Commit(tb.get(), static_cast<WriterID>(w + 1), next_id[w]++, t);
    if (++w == num_writers)
      w = 0;
    bytes += t.used;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["chunks_overwritten"] =
      static_cast<double>(tb->stats().chunks_overwritten);
}

void BM_TraceBuffer_WR_SingleWriter(benchmark::State& state) {
  WriteBenchmark(state, 1);
}

void BM_TraceBuffer_WR_MultipleWriters(benchmark::State& state) {
  WriteBenchmark(state, 1000);
}

size_t ReadBufferSize() {
  return bench::IsBenchmarkFunctionalOnly() ? (1 << 20) : (128 << 20);
}

// Fills |tb| with |chunks| (cycled, one sequence) up to about its size.
void Fill(TraceBufferV2* tb, const std::vector<ChunkTemplate>& chunks) {
  ChunkID id = 0;
  size_t written = 0;
  // Stop before the first wrap: every chunk written is still readable.
  for (size_t i = 0;; i++) {
    const ChunkTemplate& t = chunks[i % chunks.size()];
    written += 16 + t.used + 3;
    if (written >= tb->size())
      break;
    Commit(tb, 1, id++, t);
  }
}

// The consumer copies every packet out (as the service does into IPC
// messages or file writes): the bytes counted are the packet bytes copied.
void ReadBenchmark(benchmark::State& state,
                   const std::vector<ChunkTemplate>& chunks) {
  uint64_t bytes = 0;
  std::vector<uint8_t> out(1 << 20);
  size_t out_pos = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto tb = TraceBufferV2::Create(ReadBufferSize(),
                                    TraceBufferV2::OverwritePolicy::kOverwrite);
    Fill(tb.get(), chunks);
    state.ResumeTiming();
    tb->BeginRead();
    TracePacket packet;
    PacketSequenceProperties props;
    uint32_t loss = 0;
    while (tb->ReadNextTracePacket(&packet, &props, &loss)) {
      if (out_pos + packet.size() > out.size())
        out_pos = 0;
      for (const TracePacket::Slice& slice : packet.slices()) {
        memcpy(out.data() + out_pos, slice.data, slice.size);
        out_pos += slice.size;
      }
      bytes += packet.size();
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
    state.PauseTiming();
    tb.reset();
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void BM_TraceBuffer_RD_MixedPackets(benchmark::State& state) {
  ReadBenchmark(state, MixedTemplates());
}

void BM_TraceBuffer_RD_Fragmented(benchmark::State& state) {
  static const std::vector<ChunkTemplate> chunks = FragmentedChunks(1000);
  ReadBenchmark(state, chunks);
}

// state.range(0): 1 = patch an existing chunk (hit), 0 = a chunk that is
// gone (its ChunkID precedes every chunk of the sequence in the buffer, as
// for a chunk already read or overwritten).
void BM_TraceBuffer_Patch(benchmark::State& state) {
  const bool hit = state.range(0) == 1;
  auto tb = TraceBufferV2::Create(kWriteBufferSize,
                                  TraceBufferV2::OverwritePolicy::kOverwrite);
  ChunkTemplate t = MixedTemplates()[0];
  t.flags = kChunkNeedsPatching;
  const ChunkID num_chunks = bench::IsBenchmarkFunctionalOnly() ? 100 : 10000;
  // ChunkIDs [num_chunks, 2 * num_chunks) are in the buffer.
  for (ChunkID id = num_chunks; id < 2 * num_chunks; id++)
    Commit(tb.get(), 1, id, t);
  TraceBufferV2::Patch patch;
  patch.offset_untrusted = 8;
  ChunkID id = 0;
  for (auto _ : state) {
    const ChunkID target = hit ? num_chunks + id : id;
    benchmark::DoNotOptimize(
        tb->TryPatchChunkContents(1, 1, target, &patch, 1, true));
    if (++id == num_chunks)
      id = 0;
  }
}

// CloneReadOnly (the snapshot behind ringtraced's SIGUSR1) of a full 16 MiB
// buffer with 1000 sequences. Bytes counted: the buffer bytes copied. The
// baseline does the same work without TraceBufferV2: a fresh anonymous
// mapping of the same size, a memcpy of the same bytes into it (faulting its
// pages in, as the clone does), and the munmap.
constexpr size_t kCloneBufferSize = 16 << 20;

void BM_TraceBuffer_CloneReadOnly(benchmark::State& state) {
  const size_t size =
      bench::IsBenchmarkFunctionalOnly() ? (1 << 20) : kCloneBufferSize;
  auto tb =
      TraceBufferV2::Create(size, TraceBufferV2::OverwritePolicy::kOverwrite);
  const auto& templates = MixedTemplates();
  std::vector<ChunkID> next_id(1000, 0);
  size_t written = 0;
  for (size_t i = 0; written + 16 + kSmbChunkSize < size; i++) {
    const ChunkTemplate& t = templates[i % kNumTemplates];
    const WriterID w = static_cast<WriterID>(i % next_id.size());
    Commit(tb.get(), static_cast<WriterID>(w + 1), next_id[w]++, t);
    written += 16 + t.used + 3;
  }
  for (auto _ : state) {
    std::unique_ptr<TraceBufferV2> clone = tb->CloneReadOnly();
    if (!clone) {
      state.SkipWithError("clone failed");
      break;
    }
    benchmark::DoNotOptimize(clone.get());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(written));
}

void BM_TraceBuffer_CloneMemcpyBaseline(benchmark::State& state) {
  const size_t size =
      bench::IsBenchmarkFunctionalOnly() ? (1 << 20) : kCloneBufferSize;
  std::vector<uint8_t> src(size, 0x5a);
  for (auto _ : state) {
    void* dst = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (dst == MAP_FAILED) {
      state.SkipWithError("mmap failed");
      break;
    }
    memcpy(dst, src.data(), size);
    benchmark::DoNotOptimize(dst);
    munmap(dst, size);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(size));
}

// ---- Perfetto's trace_buffer_benchmark workload ---------------------------

struct UpstreamChunk {
  std::vector<uint8_t> payload;  // Exactly the fragment bytes.
  uint16_t num_fragments = 0;
  size_t packet_bytes = 0;  // Without the varint headers.
};

// One packet of |total| bytes (1-2 byte varint header + data) appended.
void AppendUpstreamPacket(UpstreamChunk* c,
                          size_t total,
                          std::minstd_rand* rng) {
  // A header of 2 bytes holds sizes 128..16383; 1 byte holds 0..127. For
  // total == 129, 128 bytes of data need 2 header bytes: one byte less.
  size_t header = total - 1 < 128 ? 1 : 2;
  size_t data = total - header;
  if (header == 2 && data < 128) {
    header = 1;
    data = total - 2;
  }
  if (header == 1) {
    c->payload.push_back(static_cast<uint8_t>(data));
  } else {
    c->payload.push_back(static_cast<uint8_t>(0x80 | (data & 0x7f)));
    c->payload.push_back(static_cast<uint8_t>(data >> 7));
  }
  for (size_t i = 0; i < data; i++)
    c->payload.push_back(static_cast<uint8_t>((*rng)()));
  c->num_fragments++;
  c->packet_bytes += data;
}

const std::vector<UpstreamChunk>& UpstreamChunks() {
  static const std::vector<UpstreamChunk>* chunks = [] {
    auto* v = new std::vector<UpstreamChunk>();
    std::minstd_rand rng(1234);
    for (size_t i = 0; i < kNumTemplates; i++) {
      UpstreamChunk c;
      const size_t num_packets = 5 + rng() % 11;
      for (size_t p = 0; p < num_packets; p++) {
        const size_t left = kSmbPayloadSize - c.payload.size();
        if (left < 2)
          break;  // Room for nothing but an empty packet.
        const size_t total = std::min<size_t>(50 + rng() % 451, left);
        AppendUpstreamPacket(&c, total, &rng);
      }
      v->push_back(std::move(c));
    }
    return v;
  }();
  return *chunks;
}

bool CommitUpstream(TraceBufferV2* tb, ChunkID id, const UpstreamChunk& c) {
  return tb->CopyChunkUntrusted(1, ClientIdentity{}, 1, id, c.num_fragments,
                                kNoV1ChunkFlags, true, c.payload.data(),
                                c.payload.size());
}

void BM_TraceBuffer_Upstream_WR(benchmark::State& state) {
  const auto& chunks = UpstreamChunks();
  auto tb = TraceBufferV2::Create(kWriteBufferSize,
                                  TraceBufferV2::OverwritePolicy::kOverwrite);
  size_t i = 0;
  uint64_t bytes = 0;
  for (auto _ : state) {
    const UpstreamChunk& c = chunks[i % kNumTemplates];
    CommitUpstream(tb.get(), static_cast<ChunkID>(i), c);
    i++;
    bytes += c.packet_bytes;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void BM_TraceBuffer_Upstream_RD(benchmark::State& state) {
  const auto& chunks = UpstreamChunks();
  uint64_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto tb = TraceBufferV2::Create(ReadBufferSize(),
                                    TraceBufferV2::OverwritePolicy::kOverwrite);
    size_t written = 0;
    // Stop before the first wrap: every chunk written is read.
    for (size_t i = 0;; i++) {
      const UpstreamChunk& c = chunks[i % kNumTemplates];
      written += TBChunkOuterSize(c.payload.size());
      if (written > tb->size())
        break;
      CommitUpstream(tb.get(), static_cast<ChunkID>(i), c);
    }
    state.ResumeTiming();
    tb->BeginRead();
    TracePacket packet;
    PacketSequenceProperties props;
    uint32_t loss = 0;
    while (tb->ReadNextTracePacket(&packet, &props, &loss)) {
      for (const TracePacket::Slice& slice : packet.slices())
        benchmark::DoNotOptimize(slice.data);
      bytes += packet.size();
    }
    state.PauseTiming();
    tb.reset();
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

BENCHMARK(BM_TraceBuffer_CopyLimit);
BENCHMARK(BM_TraceBuffer_CloneReadOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceBuffer_CloneMemcpyBaseline)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceBuffer_WR_SingleWriter);
BENCHMARK(BM_TraceBuffer_WR_MultipleWriters);
BENCHMARK(BM_TraceBuffer_RD_MixedPackets)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceBuffer_RD_Fragmented)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceBuffer_Patch)->ArgName("hit")->Arg(1)->Arg(0);
BENCHMARK(BM_TraceBuffer_Upstream_WR);
BENCHMARK(BM_TraceBuffer_Upstream_RD)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trace_buffer
}  // namespace ringtrace
