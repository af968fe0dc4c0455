/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Fuzzes RingReader with arbitrary mappings: the input picks the geometry,
// the reader's start position and the head policy, and its bytes fill the
// whole mapping (cursors, state words, BufferIDs, directories, payload).
// Besides "no crash, no hang, no out-of-bounds access" (sanitizers), it
// checks the reader's books after every call:
//  - every emitted chunk fits its chunk (fragments + directory + header);
//  - read_pos moved by one exactly on kSkipped / kEmitted, never otherwise;
//  - a stopped reader reports a protocol error and stays stopped;
//  - positions_resolved == holes + chunks_emitted.

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "ringtrace/logging.h"
#include "ringtrace/shm_ring_abi.h"
#include "src/tracing/service/ring_drainer/ring_reader.h"

namespace ringtrace {
namespace ring_drainer {
namespace {

// Hands out room in a private buffer; checks the sizes it is given.
class CheckingConsumer : public ChunkConsumer {
 public:
  explicit CheckingConsumer(uint32_t chunk_size)
      : chunk_size_(chunk_size), room_(chunk_size) {}

  uint8_t* BeginChunk(const ChunkDescriptor& desc,
                      const uint32_t* sizes) override {
    RT_CHECK(!pending_);
    pending_ = true;
    uint64_t total = 0;
    for (uint32_t i = 0; i < desc.num_fragments; ++i)
      total += sizes[i];
    RT_CHECK(total == desc.payload_size);
    RT_CHECK(desc.num_fragments >= 1 &&
             desc.num_fragments <= shm_ring::kMaxFragmentsPerChunk);
    // Header + payload + directory fit the chunk (spec 6.4).
    const uint32_t w = shm_ring::SizeEntryWidth(chunk_size_);
    RT_CHECK(shm_ring::kPayloadStartFormat00 + total +
                 static_cast<uint64_t>(desc.num_fragments) * w <=
             chunk_size_);
    // Every other call rejects, to cover both admission outcomes.
    return (++begins_ & 1) != 0 ? room_.data() : nullptr;
  }
  void CommitChunk() override {
    RT_CHECK(pending_);
    pending_ = false;
  }
  void AbortChunk() override {
    RT_CHECK(pending_);
    pending_ = false;
  }
  void OnChunkDropped(uint32_t, shm_ring::WriterID, DropReason) override {
    RT_CHECK(!pending_);
  }

 private:
  const uint32_t chunk_size_;
  std::vector<uint8_t> room_;
  bool pending_ = false;
  uint32_t begins_ = 0;
};

void FuzzOne(const uint8_t* data, size_t size) {
  if (size < 6)
    return;
  // Byte 0: geometry; bytes 1-4: start position; byte 5: head policy.
  static const uint32_t kChunkSizes[] = {256, 512, 1024, 4096};
  static const uint32_t kNumChunks[] = {2, 4, 8, 16};
  const shm_ring::RingGeometry geometry(kChunkSizes[data[0] & 3],
                                        kNumChunks[(data[0] >> 2) & 3]);
  uint32_t start;
  memcpy(&start, data + 1, sizeof(start));
  const HeadPolicy policy =
      (data[5] & 1) ? HeadPolicy::kDeferUnpublished : HeadPolicy::kResolve;
  data += 6;
  size -= 6;

  const size_t mapping_size = static_cast<size_t>(geometry.MappingSize());
  // Exactly the mapping's size, so ASan flags any read past its end.
  uint8_t* base = static_cast<uint8_t*>(aligned_alloc(64, mapping_size));
  RT_CHECK(base);
  for (size_t i = 0; i < mapping_size; ++i)
    base[i] = size ? data[i % size] : 0;

  shm_ring::RingView view(base, geometry);
  RingReader reader(view, start, /*retry_budget=*/2);
  CheckingConsumer consumer(geometry.chunk_size);
  // Bounded: at most two laps of the ring.
  for (uint32_t i = 0; i < 2 * geometry.num_chunks; ++i) {
    const uint32_t before = reader.read_pos();
    const ReadResult r = reader.ReadOne(&consumer, policy);
    const bool advanced =
        r == ReadResult::kSkipped || r == ReadResult::kEmitted;
    RT_CHECK(reader.read_pos() == (advanced ? before + 1 : before));
    RT_CHECK((r == ReadResult::kProtocolError) == reader.stopped());
    if (r == ReadResult::kDeferred)
      RT_CHECK(policy == HeadPolicy::kDeferUnpublished);
    if (r == ReadResult::kNoData || r == ReadResult::kProtocolError ||
        r == ReadResult::kDeferred) {
      break;
    }
  }
  const RingReaderStats& s = reader.stats();
  RT_CHECK(s.positions_resolved == s.holes + s.chunks_emitted);
  RT_CHECK(s.protocol_errors == (reader.stopped() ? 1u : 0u));
  if (reader.stopped()) {
    RT_CHECK(reader.protocol_error().kind != ProtocolErrorKind::kNone);
    // Stopped for good, without touching the mapping.
    RT_CHECK(reader.ReadOne(&consumer, policy) == ReadResult::kProtocolError);
  }
  free(base);
}

}  // namespace
}  // namespace ring_drainer
}  // namespace ringtrace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ringtrace::ring_drainer::FuzzOne(data, size);
  return 0;
}
