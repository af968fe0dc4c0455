/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. TestRing: the ring fixture of every test and benchmark that
// needs a ring in private memory (the shm_ring, producer and ring_drainer
// tests): a zero-filled (hence empty, positions at 0), 64-byte aligned ring
// with relaxed access to its words for planting states and asserting on
// them, plus helpers that write packets through a RingWriter.

#ifndef SRC_TRACING_CORE_SHM_RING_TEST_RING_H_
#define SRC_TRACING_CORE_SHM_RING_TEST_RING_H_

#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "ringtrace/shm_ring_abi.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"

namespace ringtrace {
namespace shm_ring {

class TestRing {
 public:
  TestRing(uint32_t chunk_size, uint32_t num_chunks);
  ~TestRing();
  TestRing(const TestRing&) = delete;
  TestRing& operator=(const TestRing&) = delete;

  const RingView& view() const { return view_; }
  const RingGeometry& geometry() const { return view_.geometry(); }
  uint8_t* chunk(uint32_t index) const { return view_.chunk(index); }

  // Relaxed accessors for assertions and for planting words.
  StateWord word(uint32_t index) const {
    return view_.chunk_state(index)->load(std::memory_order_relaxed);
  }
  void set_word(uint32_t index, StateWord w) {
    view_.chunk_state(index)->store(w, std::memory_order_relaxed);
  }
  uint32_t write_pos() const {
    return view_.write_pos()->load(std::memory_order_relaxed);
  }
  void set_write_pos(uint32_t p) {
    view_.write_pos()->store(p, std::memory_order_relaxed);
  }
  uint32_t read_pos() const {
    return view_.read_pos()->load(std::memory_order_relaxed);
  }
  uint32_t num_writers_waiting() const {
    return view_.num_writers_waiting()->load(std::memory_order_relaxed);
  }

  // Makes |position| the next position to reserve and to resolve: both
  // cursors and, consistently, every chunk's tag (chunk i gets
  // FreeForWrap(wrap_count(q)) for the first q >= position mapping to it).
  void SeedPositions(uint32_t position);

  // Writes a format-00 chunk body: BufferID, payloads and size entries. Does
  // not touch the state word.
  void WriteBody(uint32_t index,
                 BufferID target,
                 const std::vector<std::string>& fragments);

 private:
  uint8_t* mem_;
  RingView view_;
};

// Writes |data| into an open packet, continuing into new chunks as needed.
// Returns false if the rest of the packet was lost.
inline bool AppendToPacket(RingWriter* w,
                           RingWriter::Span* span,
                           const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    const size_t room = static_cast<size_t>(span->end - span->wptr);
    if (room == 0) {
      if (!w->ContinuePacket(span))
        return false;
      continue;
    }
    const size_t n = std::min(room, data.size() - off);
    memcpy(span->wptr, data.data() + off, n);
    span->wptr += n;
    off += n;
  }
  return true;
}

// Writes |data| as one packet. Returns false if it was (partly) dropped.
inline bool WritePacket(RingWriter* w, const std::string& data) {
  RingWriter::Span span;
  if (!w->BeginPacket(&span))
    return false;
  if (!AppendToPacket(w, &span, data))
    return false;
  w->EndPacket(span.wptr);
  return true;
}

// |size| printable bytes (valid UTF-8), different for different seeds.
inline std::string Pattern(size_t size, char seed) {
  std::string s(size, '\0');
  for (size_t i = 0; i < size; i++)
    s[i] = static_cast<char>('a' + (static_cast<size_t>(seed) + i * 7) % 26);
  return s;
}

// Records every notification.
struct RecordingDelegate : public RingWriterDelegate {
  void OnPositionBurned(uint32_t p) override { burned.push_back(p); }
  void OnChunkPublished(uint32_t p) override { published.push_back(p); }
  // A flush's publications go to both lists.
  void OnFlushed(uint32_t p) override {
    flushed.push_back(p);
    published.push_back(p);
  }
  void OnDrainRequested() override { drain_requests++; }
  std::vector<uint32_t> burned;
  std::vector<uint32_t> published;
  std::vector<uint32_t> flushed;
  int drain_requests = 0;
};

// Packets of writer |wid| reassembled from |chunks| (in position order).
inline std::vector<std::string> Reassemble(const std::vector<ReadChunk>& chunks,
                                           WriterID wid) {
  TestPacketReassembler r;
  for (const auto& c : chunks)
    r.Add(c);
  return r.packets(wid);
}

}  // namespace shm_ring
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_SHM_RING_TEST_RING_H_
