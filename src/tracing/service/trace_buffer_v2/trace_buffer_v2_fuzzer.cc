/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Fuzzer for TraceBufferV2: the input is a program of operations on a small
// buffer (v1 commits of arbitrary bytes, with arbitrary sizes, flags,
// fragment counts and IDs; drainer commits; two-phase aborts; patches; reads;
// clones). Checks that nothing crashes, hangs or reads out of bounds (run
// under ASan) and that every packet read lies inside the buffer's memory.
//
// Build and run: tools/fuzz (target trace_buffer_v2_fuzzer of the root
// "fuzzers" group); in other configurations it builds as a corpus replayer.

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "ringtrace/logging.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace trace_buffer {
namespace {

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t U8() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint16_t U16() { return static_cast<uint16_t>(U8() | (U8() << 8)); }
  // Up to |max| bytes of the input, as is.
  const uint8_t* Bytes(size_t max, size_t* got) {
    *got = std::min(max, size_ - std::min(pos_, size_));
    const uint8_t* p = data_ + std::min(pos_, size_);
    pos_ += *got;
    return p;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

void CheckPacket(const TraceBufferV2& tb, const TracePacket& packet) {
  size_t total = 0;
  for (const TracePacket::Slice& s : packet.slices()) {
    RT_CHECK(s.size <= tb.size());
    total += s.size;
  }
  RT_CHECK(total == packet.size());
}

// Reads up to |max_packets|; |batched|: also the rest of each packet's run
// in batches (ReadMorePacketsOfRun()).
void ReadSome(TraceBufferV2* tb, size_t max_packets, bool batched) {
  tb->BeginRead();
  TracePacket packet;
  PacketSequenceProperties props;
  uint32_t loss = 0;
  TracePacket::Slice run[8];
  while (max_packets && tb->ReadNextTracePacket(&packet, &props, &loss)) {
    max_packets--;
    CheckPacket(*tb, packet);
    RT_CHECK(loss == 0 || (loss & kDataLossPresent));
    if (!batched)
      continue;
    const size_t n =
        tb->ReadMorePacketsOfRun(run, std::min<size_t>(max_packets, 8));
    RT_CHECK(n <= max_packets);
    for (size_t i = 0; i < n; i++)
      RT_CHECK(run[i].size > 0 && run[i].size <= tb->size());
    max_packets -= n;
  }
}

ChunkID FuzzChunkId(Input* in) {
  const uint8_t b = in->U8();
  // Small IDs, around the 2^32 wrap, or arbitrary.
  if (b < 128)
    return b & 15;
  if (b < 224)
    return 0xfffffff8u + (b & 15);
  return static_cast<ChunkID>(in->U16()) << 16 | in->U16();
}

}  // namespace
}  // namespace trace_buffer
}  // namespace ringtrace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringtrace::trace_buffer;
  Input in(data, size);
  const uint8_t mode = in.U8();
  auto tb = TraceBufferV2::Create(
      4096u << (mode & 3), (mode & 4)
                               ? TraceBufferV2::OverwritePolicy::kDiscard
                               : TraceBufferV2::OverwritePolicy::kOverwrite);
  if (mode & 8) {
    TraceBufferV2* raw = tb.get();
    tb->set_overwrite_observer(
        [raw](const PacketSequenceProperties&, const TracePacket& p) {
          CheckPacket(*raw, p);
        });
  }
  std::vector<uint8_t> scratch;
  // Bounded by the input size: every operation consumes input.
  for (int ops = 0; !in.empty() && ops < 10000; ops++) {
    const uint8_t op = in.U8() % 6;
    const ProducerID producer = in.U8() & 3;
    const WriterID writer = in.U8() & 3;
    const ChunkID chunk_id = FuzzChunkId(&in);
    switch (op) {
      case 0: {
        const uint16_t num_frags = in.U8();
        const uint8_t flags = in.U8();
        const bool complete = !(flags & 0x80);
        size_t len = 0;
        const uint8_t* src = in.Bytes(in.U16() % 2048, &len);
        scratch.assign(src, src + len);  // Own copy: the input is const.
        tb->CopyChunkUntrusted(producer, ClientIdentity{}, writer, chunk_id,
                               num_frags, TBChunkFlags::FromBits(flags & 7),
                               complete, scratch.data(), scratch.size());
        break;
      }
      case 1: {
        const size_t n = in.U8() % 8;
        FragmentRef frags[8];
        for (size_t i = 0; i < n; i++) {
          size_t len = 0;
          frags[i].data = in.Bytes(in.U8(), &len);
          frags[i].size = static_cast<uint32_t>(len);
        }
        tb->CopyChunkFragments(producer, ClientIdentity{}, writer, chunk_id,
                               frags, n, TBChunkFlags::FromBits(in.U8() & 7));
        break;
      }
      case 2: {
        TraceBufferV2::Patch patch;
        patch.offset_untrusted = in.U16();
        for (uint8_t& b : patch.data)
          b = in.U8();
        tb->TryPatchChunkContents(producer, writer, chunk_id, &patch, 1,
                                  in.U8() & 1);
        break;
      }
      case 3: {
        const uint8_t max = in.U8();
        ReadSome(tb.get(), max, in.U8() & 1);
        break;
      }
      case 4: {
        std::unique_ptr<TraceBufferV2> clone = tb->CloneReadOnly();
        if (clone)
          ReadSome(clone.get(), SIZE_MAX, in.U8() & 1);
        break;
      }
      case 5: {
        const uint32_t sizes[2] = {in.U8(), in.U16() % 4096u};
        uint8_t* dst = tb->BeginChunkFragments(
            producer, ClientIdentity{}, writer, chunk_id, sizes, 2,
            TBChunkFlags::FromBits(in.U8() & 7));
        if (dst) {
          memset(dst, 0x5a, sizes[0]);
          memset(dst + sizes[0], 0xa5, sizes[1]);
          if (in.U8() & 1)
            tb->CommitPendingChunk();
          else
            tb->AbortPendingChunk();
        }
        break;
      }
    }
  }
  ReadSome(tb.get(), SIZE_MAX, in.U8() & 1);
  return 0;
}
