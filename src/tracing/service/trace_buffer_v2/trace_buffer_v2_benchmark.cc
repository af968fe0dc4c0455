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
// BM_TraceBuffer_FirstPass/commit_ahead:0|1|2|3 writes the same chunks into
// a fresh 64 MiB buffer, whose pages are committed as the writes reach them:
// with 1 ahead of the writes (TraceBufferV2::CommitAhead()), with 0 by a
// page fault per 4 KiB page, with 2 ahead on transparent huge pages, with 3
// ahead and a PageWarmer 8 MiB ahead (its thread's time is not the
// writer's; "warmed" is the fraction of pages it read before the writer
// reached them: the writer here runs at memory speed, faster than a drain).
// Its baseline is BM_TraceBuffer_WR_SingleWriter (the same writes into
// memory committed long ago).
//
// BM_TraceBuffer_Upstream_* reproduce the workload of Perfetto's
// trace_buffer_benchmark instead (see UpstreamChunks()): write, readback and
// patches, each with its same-binary baseline (_WR_CopyLimit, _RD_CopyLimit).

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
  TBChunkFlags flags;
  size_t used = 0;  // Bytes of the fragments (what is really copied).
};

void AppendFragment(ChunkTemplate* t, size_t size, std::minstd_rand* rng) {
  WriteRedundantVarInt(static_cast<uint32_t>(size), &t->payload[t->used]);
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
      t.flags |= kChunkContinuesFromPrev;
    // Bounded: each fragment uses at least 5 bytes of the chunk.
    while (t.used + 5 <= kSmbPayloadSize) {
      if (!left_in_packet)
        left_in_packet = kSmbPayloadSize + rng() % (2 * kSmbPayloadSize);
      const size_t size =
          std::min(left_in_packet, kSmbPayloadSize - t.used - 4);
      AppendFragment(&t, size, &rng);
      left_in_packet -= size;
      if (left_in_packet) {
        t.flags |= kChunkContinuesOnNext;
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

void BM_TraceBuffer_FirstPass(benchmark::State& state) {
  // 0: faults per page; 1: committed ahead (the default); 2: committed
  // ahead on huge pages (TraceBufferV2::Pages::kHuge).
  const bool commit_ahead = state.range(0) >= 1;
  const bool huge = state.range(0) == 2;
  const size_t warm_ahead = state.range(0) == 3 ? size_t{8} << 20 : 0;
  uint64_t warmed = 0;
  uint64_t pages = 0;
  const std::vector<ChunkTemplate>& templates = MixedTemplates();
  const size_t buffer_size =
      bench::IsBenchmarkFunctionalOnly() ? (1 << 20) : kWriteBufferSize;
  uint64_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    TraceBufferV2::SetPagesForNewBuffers(huge ? TraceBufferV2::Pages::kHuge
                                              : TraceBufferV2::Pages::kSmall);
    TraceBufferV2::SetWarmAheadForNewBuffers(warm_ahead);
    auto tb = TraceBufferV2::Create(buffer_size,
                                    TraceBufferV2::OverwritePolicy::kOverwrite);
    TraceBufferV2::SetPagesForNewBuffers(TraceBufferV2::Pages::kSmall);
    TraceBufferV2::SetWarmAheadForNewBuffers(0);
    tb->SetCommitAheadForTesting(commit_ahead);
    state.ResumeTiming();
    ChunkID id = 0;
    size_t written = 0;
    // Stops before the first wrap: every write lands on fresh memory.
    for (size_t i = 0;; i++) {
      const ChunkTemplate& t = templates[i % templates.size()];
      written += TBChunkOuterSize(t.used);
      if (written >= buffer_size)
        break;
      Commit(tb.get(), 1, id++, t);
      bytes += t.used;
    }
    benchmark::ClobberMemory();
    state.PauseTiming();
    warmed += tb->warmer_stats().pages_read;
    pages += buffer_size / 4096;
    tb.reset();  // munmap: not timed.
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  if (warm_ahead) {
    state.counters["warmed"] =
        pages ? static_cast<double>(warmed) / static_cast<double>(pages) : 0;
  }
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
//
// The chunks are cut from one stream of packets, as a writer fills its SMB
// chunks: every packet is 50-500 bytes INCLUDING its 1-2 byte varint size
// header; a chunk's 4080 payload bytes are filled exactly, the packet that
// does not fit is cut (kChunkContinuesOnNext) and its remainder
// opens the next chunk (kChunkContinuesFromPrev), with its own
// header. That gives 9-30 fragments per chunk (about 15 on average). The
// 100 chunks are reused in a cycle; the packet spanning the end of the cycle
// (chunk 99 -> chunk 0) is the only one outside 50-500 bytes. One writer,
// consecutive ChunkIDs, so every cut packet is reassembled by the reader.
// Bytes counted: the packets' own bytes (no size headers).

struct UpstreamChunk {
  std::vector<uint8_t> payload;  // Exactly kSmbPayloadSize fragment bytes.
  uint16_t num_fragments = 0;
  TBChunkFlags flags;
  size_t packet_bytes = 0;  // Without the varint headers.
};

// Appends one fragment of exactly |total| bytes (header + data, total >= 1)
// and returns its data size. Data of 128 bytes or more takes a 2-byte
// header; for total == 129 the 127 data bytes get a redundant 2-byte varint
// (0xff 0x00, legal) so that the chunk is still filled exactly.
size_t AppendUpstreamFragment(UpstreamChunk* c,
                              size_t total,
                              std::minstd_rand* rng) {
  const size_t header = total - 1 < 128 ? 1 : 2;
  const size_t data = total - header;
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
  return data;
}

// Bytes (header + data) of a fragment carrying |data| bytes.
size_t UpstreamFragmentTotal(size_t data) {
  return data + (data < 128 ? 1 : 2);
}

const std::vector<UpstreamChunk>& UpstreamChunks() {
  static const std::vector<UpstreamChunk>* chunks = [] {
    auto* v = new std::vector<UpstreamChunk>();
    std::minstd_rand rng(1234);
    // Data bytes of the cut packet still to write. The cycle starts in the
    // middle of a packet, continued from chunk 99.
    size_t carry = 20 + rng() % 400;
    for (size_t i = 0; i < kNumTemplates; i++) {
      UpstreamChunk c;
      if (carry)
        c.flags |= kChunkContinuesFromPrev;
      // Bounded: every fragment takes at least one byte of the chunk.
      while (c.payload.size() < kSmbPayloadSize) {
        const size_t left = kSmbPayloadSize - c.payload.size();
        const size_t total = carry ? UpstreamFragmentTotal(carry)
                                   : 50 + rng() % 451;  // 50-500 bytes.
        const size_t packet_data =
            carry ? carry : total - (total - 1 < 128 ? 1 : 2);
        carry = 0;
        if (total < left || (total == left && i + 1 < kNumTemplates)) {
          AppendUpstreamFragment(&c, total, &rng);
          continue;
        }
        // Cut to fill the chunk exactly; the rest opens the next chunk. The
        // last chunk of the cycle always ends with a cut packet (chunk 0
        // opens with a continuation).
        const size_t written = AppendUpstreamFragment(&c, left, &rng);
        carry = packet_data > written ? packet_data - written : 0;
        if (i + 1 == kNumTemplates && carry == 0)
          carry = 1;
        if (carry)
          c.flags |= kChunkContinuesOnNext;
      }
      v->push_back(std::move(c));
    }
    return v;
  }();
  return *chunks;
}

bool CommitUpstream(TraceBufferV2* tb,
                    ChunkID id,
                    const UpstreamChunk& c,
                    TBChunkFlags extra_flags = kNoTBChunkFlags) {
  return tb->CopyChunkUntrusted(1, ClientIdentity{}, 1, id, c.num_fragments,
                                c.flags | extra_flags, true, c.payload.data(),
                                c.payload.size());
}

// Baseline of Upstream_WR: memcpy of the same chunk bytes into a 64 MiB
// ring (the copy a buffer cannot avoid), same bytes counted.
void BM_TraceBuffer_Upstream_WR_CopyLimit(benchmark::State& state) {
  const auto& chunks = UpstreamChunks();
  std::unique_ptr<uint8_t[]> ring(new uint8_t[kWriteBufferSize]);
  memset(ring.get(), 0, kWriteBufferSize);
  size_t wr = 0, i = 0;
  uint64_t bytes = 0;
  for (auto _ : state) {
    const UpstreamChunk& c = chunks[i++ % kNumTemplates];
    if (wr + c.payload.size() > kWriteBufferSize)
      wr = 0;
    memcpy(ring.get() + wr, c.payload.data(), c.payload.size());
    benchmark::ClobberMemory();
    wr += (c.payload.size() + 3) & ~size_t{3};
    bytes += c.packet_bytes;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
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
  state.counters["chunks_overwritten"] =
      static_cast<double>(tb->stats().chunks_overwritten);
}

// Fills a fresh read buffer with upstream chunks up to its size (no wrap:
// everything written is readable).
std::unique_ptr<TraceBufferV2> FillUpstream() {
  const auto& chunks = UpstreamChunks();
  auto tb = TraceBufferV2::Create(ReadBufferSize(),
                                  TraceBufferV2::OverwritePolicy::kOverwrite);
  // Stop with room for two more chunks (whatever a chunk stores beside its
  // payload): the buffer never wraps.
  const size_t margin = 2 * TBChunkOuterSize(kSmbPayloadSize);
  for (size_t i = 0; tb->used_size() + margin <= tb->size(); i++)
    CommitUpstream(tb.get(), static_cast<ChunkID>(i),
                   chunks[i % kNumTemplates]);
  return tb;
}

// Baseline of Upstream_RD: one pass over the same chunk bytes as the
// buffer holds (128 MiB, cold), copied chunk by chunk into a 1 MiB
// destination; same bytes counted (packet bytes, one cycle of templates).
void BM_TraceBuffer_Upstream_RD_CopyLimit(benchmark::State& state) {
  const auto& chunks = UpstreamChunks();
  const size_t n = ReadBufferSize() / TBChunkOuterSize(kSmbPayloadSize);
  std::vector<uint8_t> src(n * kSmbPayloadSize);
  for (size_t i = 0; i < n; i++) {
    memcpy(&src[i * kSmbPayloadSize], chunks[i % kNumTemplates].payload.data(),
           kSmbPayloadSize);
  }
  std::vector<uint8_t> dst(1 << 20);
  uint64_t bytes = 0;
  for (auto _ : state) {
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
      if (out + kSmbPayloadSize > dst.size())
        out = 0;
      memcpy(&dst[out], &src[i * kSmbPayloadSize], kSmbPayloadSize);
      out += kSmbPayloadSize;
      bytes += chunks[i % kNumTemplates].packet_bytes;
    }
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

// Readback of everything written. The reader walks the slices of every
// packet without copying them (as upstream's benchmark).
void BM_TraceBuffer_Upstream_RD(benchmark::State& state) {
  uint64_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<TraceBufferV2> tb = FillUpstream();
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

// Patches (4 bytes at offset 8) on the upstream chunks, all committed with
// kChunkNeedsPatching; 15000 of them (60 MiB) in a 64 MiB buffer.
// state.range(0):
//  0 miss: the chunk is gone (its ChunkID precedes the sequence's chunks).
//  1 hit, recent: one of the 16 chunks committed last, as when a producer
//    patches the chunks it just committed (headers in cache).
//  2 hit, cold: rotates over all 15000 chunks, so the chunk header is
//    never in cache: the floor is one memory access.
void BM_TraceBuffer_Upstream_Patch(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));
  auto tb = TraceBufferV2::Create(kWriteBufferSize,
                                  TraceBufferV2::OverwritePolicy::kOverwrite);
  const auto& chunks = UpstreamChunks();
  const ChunkID num_chunks = bench::IsBenchmarkFunctionalOnly() ? 100 : 15000;
  // ChunkIDs [num_chunks, 2 * num_chunks) are in the buffer.
  for (ChunkID id = num_chunks; id < 2 * num_chunks; id++)
    CommitUpstream(tb.get(), id, chunks[id % kNumTemplates],
                   kChunkNeedsPatching);
  TraceBufferV2::Patch patch;
  patch.offset_untrusted = 8;
  ChunkID i = 0;
  uint64_t ok = 0;
  for (auto _ : state) {
    ChunkID target = i;  // mode 0: gone.
    if (mode == 1)
      target = 2 * num_chunks - 16 + (i & 15);
    else if (mode == 2)
      target = num_chunks + (i * 7919) % num_chunks;  // Spread, all chunks.
    ok += tb->TryPatchChunkContents(1, 1, target, &patch, 1, true);
    if (++i == num_chunks)
      i = 0;
  }
  if (ok != (mode == 0 ? 0u : static_cast<uint64_t>(state.iterations())))
    state.SkipWithError("unexpected patch result");
}

BENCHMARK(BM_TraceBuffer_CopyLimit);
BENCHMARK(BM_TraceBuffer_CloneReadOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceBuffer_CloneMemcpyBaseline)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceBuffer_WR_SingleWriter);
BENCHMARK(BM_TraceBuffer_WR_MultipleWriters);
BENCHMARK(BM_TraceBuffer_FirstPass)
    ->ArgName("commit_ahead")
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Arg(3);
BENCHMARK(BM_TraceBuffer_RD_MixedPackets)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceBuffer_RD_Fragmented)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceBuffer_Patch)->ArgName("hit")->Arg(1)->Arg(0);
BENCHMARK(BM_TraceBuffer_Upstream_WR_CopyLimit);
BENCHMARK(BM_TraceBuffer_Upstream_WR);
BENCHMARK(BM_TraceBuffer_Upstream_RD_CopyLimit)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceBuffer_Upstream_RD)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceBuffer_Upstream_Patch)
    ->ArgName("mode")
    ->Arg(1)
    ->Arg(2)
    ->Arg(0);

}  // namespace
}  // namespace trace_buffer
}  // namespace ringtrace
