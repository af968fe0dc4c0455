/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/shm_ring/test_ring.h"

#include <stdlib.h>
#include <string.h>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace shm_ring {

namespace {

uint8_t* AllocateZeroed(const RingGeometry& geometry) {
  const size_t size = static_cast<size_t>(geometry.MappingSize());
  uint8_t* mem = static_cast<uint8_t*>(aligned_alloc(64, size));
  RT_CHECK(mem);
  memset(mem, 0, size);
  return mem;
}

}  // namespace

TestRing::TestRing(uint32_t chunk_size, uint32_t num_chunks)
    : mem_(AllocateZeroed(RingGeometry(chunk_size, num_chunks))),
      view_(mem_, RingGeometry(chunk_size, num_chunks)) {}

TestRing::~TestRing() {
  free(mem_);
}

void TestRing::SeedPositions(uint32_t position) {
  const RingGeometry& g = geometry();
  view_.read_pos()->store(position, std::memory_order_relaxed);
  view_.write_pos()->store(position, std::memory_order_relaxed);
  for (uint32_t k = 0; k < g.num_chunks; ++k) {
    const uint32_t q = position + k;  // Wraps at 2^32 like the cursors.
    set_word(g.ChunkIndex(q), MakeFreeForWrap(g.WrapCount(q)));
  }
}

void TestRing::WriteBody(uint32_t index,
                         BufferID target,
                         const std::vector<std::string>& fragments) {
  const RingGeometry& g = geometry();
  uint8_t* c = chunk(index);
  c[kBufferIdOffset] = static_cast<uint8_t>(target & 0xff);
  c[kBufferIdOffset + 1] = static_cast<uint8_t>(target >> 8);
  uint32_t cursor = kPayloadStartFormat00;
  const uint32_t w = g.size_entry_width();
  for (uint32_t i = 0; i < fragments.size(); ++i) {
    const std::string& f = fragments[i];
    RT_CHECK(cursor + f.size() + (i + 1) * w <= g.chunk_size);
    memcpy(c + cursor, f.data(), f.size());
    cursor += static_cast<uint32_t>(f.size());
    WriteSizeEntry(c + SizeEntryOffset(g.chunk_size, i), w,
                   static_cast<uint32_t>(f.size()));
  }
}

}  // namespace shm_ring
}  // namespace ringtrace
