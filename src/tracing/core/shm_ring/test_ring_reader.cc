/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/shm_ring/test_ring_reader.h"

#include <string.h>

#include <atomic>

#include "src/tracing/core/shm_ring/ring_reader_ops.h"
#include "src/tracing/core/shm_ring/ring_wait.h"

namespace ringtrace {
namespace shm_ring {

const char* ResolveResultToString(ResolveResult r) {
  switch (r) {
    case ResolveResult::kNoData:
      return "NoData";
    case ResolveResult::kSkipped:
      return "Skipped";
    case ResolveResult::kEmitted:
      return "Emitted";
    case ResolveResult::kRetryLater:
      return "RetryLater";
    case ResolveResult::kProtocolError:
      return "ProtocolError";
  }
  return "?";
}

TestRingReader::TestRingReader(const RingView& ring, uint32_t retry_budget)
    : ring_(ring), retry_budget_(retry_budget) {
  dir_copy_.resize(ring.geometry().chunk_size);
}

uint32_t TestRingReader::read_pos() const {
  // relaxed: only this reader stores read_pos.
  return ring_.read_pos()->load(std::memory_order_relaxed);
}

void TestRingReader::Advance(uint32_t rp) {
  // (8.13 R-store-read-pos): the physical transition above happens before
  // the capacity is advertised.
  ReaderStoreReadPos(*ring_.read_pos(), rp + 1);
  if (WakeStalledWriters(ring_))
    wakeups_++;
}

bool TestRingReader::CopyFragments(const uint8_t* chunk,
                                   StateWord s,
                                   ReadChunk* out) {
  const uint32_t chunk_size = ring_.geometry().chunk_size;
  if (GetFormat(s) != kFormatTargetBuffer)
    return false;  // unknown format: transition, but do not read (3.4)
  const uint32_t w = ring_.geometry().size_entry_width();
  const uint32_t n = GetNumFragments(s);
  const uint32_t capacity = chunk_size - kPayloadStartFormat00;
  const uint32_t dir_bytes = n * w;
  if (dir_bytes > capacity)
    return false;
  // Copy the directory before parsing it (6.4).
  uint8_t* const dir = dir_copy_.data();
  memcpy(dir, chunk + chunk_size - dir_bytes, dir_bytes);
  // The 6.4 check "reject if total > capacity - directory_bytes" for every
  // prefix, done once on the full sum: no overflow is possible (at most 255
  // entries of at most 0xffff each stay below 2^24) and sizes are never
  // negative, so a prefix exceeds the bound only if the full sum does. The
  // entries are summed in copy order; the order does not change a sum.
  uint32_t total = 0;
  if (w == 2) {
    // Little-endian entries: the low bytes at even offsets of the copy, the
    // high bytes at odd ones.
    uint32_t low = 0, high = 0;
    for (uint32_t k = 0; k < dir_bytes; k += 2) {
      low += dir[k];
      high += dir[k + 1];
    }
    total = low + (high << 8);
  } else {
    for (uint32_t k = 0; k < dir_bytes; k++)
      total += dir[k];
  }
  static_assert(kMaxFragmentsPerChunk * 0xffffull < (1ull << 32),
                "the directory sum cannot overflow");
  if (total > capacity - dir_bytes)
    return false;
  if (!out || !copy_payload_ || n == 0)
    return true;
  // The BufferID is published with the first fragment (spec 8, "Publish"):
  // with n == 0 the writer may still be writing it.
  out->buffer_id = static_cast<BufferID>(chunk[kBufferIdOffset] |
                                         (chunk[kBufferIdOffset + 1] << 8));
  out->fragments.clear();
  uint32_t off = kPayloadStartFormat00;
  for (uint32_t i = 0; i < n; i++) {
    // Fragment i's entry is at [chunk_size-(i+1)w, chunk_size-iw); in the
    // copy (which starts at chunk_size - dir_bytes) that is offset
    // dir_bytes - (i+1)w.
    const uint32_t size = ReadSizeEntry(&dir[dir_bytes - (i + 1) * w], w);
    out->fragments.emplace_back(reinterpret_cast<const char*>(chunk + off),
                                size);
    off += size;
  }
  return true;
}

ResolveResult TestRingReader::Taken(uint32_t rp,
                                    StateWord seen,
                                    bool valid,
                                    bool scraped,
                                    ReadChunk* out) {
  Advance(rp);
  if (!valid)
    malformed_++;
  if (!valid || GetNumFragments(seen) == 0) {
    holes_++;
    return ResolveResult::kSkipped;
  }
  if (out) {
    out->position = rp;
    out->word = seen;
    out->writer_id = GetWriterId(seen);
    out->flags = GetFlags(seen);
    out->scraped = scraped;
  }
  emitted_++;
  return ResolveResult::kEmitted;
}

ResolveResult TestRingReader::ResolveOne(ReadChunk* out) {
  const RingGeometry& g = ring_.geometry();
  const uint32_t rp = read_pos();
  // (8.2 R-load-write-pos): a stale value only delays one drain pass.
  const uint32_t wp = ReaderLoadWritePos(*ring_.write_pos());
  if (rp == wp)
    return ResolveResult::kNoData;
  const uint32_t index = g.ChunkIndex(rp);
  std::atomic<uint32_t>* const state = ring_.chunk_state(index);
  const uint8_t* const chunk = ring_.chunk(index);
  const StateWord next_free = MakeFreeForWrap(g.NextWrap(rp));

  // (8.1 R-load-state): the published payload and size entries are visible
  // before we copy them.
  StateWord s = ReaderLoadState(*state);
  for (uint32_t attempt = 0; attempt < retry_budget_; attempt++) {
    switch (GetState(s)) {
      case ChunkState::kFreeForWrap: {
        if (GetWrapCount(s) != g.WrapCount(rp))
          return ResolveResult::kProtocolError;
        if (hook_)
          hook_(rp, s);
        // (8.6 R-settle-hole): hands the chunk to the next traversal; on
        // failure, redispatch on the writer's claim.
        if (ReaderSettleHole(*state, s, next_free)) {
          holes_++;
          Advance(rp);
          return ResolveResult::kSkipped;
        }
        continue;  // |s| holds the returned word
      }
      case ChunkState::kAcquired: {
        const bool valid = CopyFragments(chunk, s, out);
        if (hook_)
          hook_(rp, s);
        // (8.9 R-scrape) Acquired -> RewriteRequested: our copy is ordered
        // before the writer's relocation; a failure observes a concurrent
        // publication.
        const StateWord seen = s;
        if (ReaderScrape(*state, s,
                         WithState(s, ChunkState::kRewriteRequested))) {
          return Taken(rp, seen, valid, /*scraped=*/true, out);
        }
        continue;
      }
      case ChunkState::kComplete: {
        const bool valid = CopyFragments(chunk, s, out);
        if (hook_)
          hook_(rp, s);
        // (8.11 R-consume) Complete -> FreeForWrap(next): our copy is
        // ordered before the next writer's claim; a failure observes the
        // writer's reuse.
        const StateWord seen = s;
        if (ReaderConsume(*state, s, next_free)) {
          return Taken(rp, seen, valid, /*scraped=*/false, out);
        }
        continue;
      }
      case ChunkState::kRewriteRequested:
        // Only its writer may acknowledge it; this position is a hole.
        holes_++;
        Advance(rp);
        return ResolveResult::kSkipped;
      case ChunkState::kAcknowledged: {
        if (GetPayloadBits(s) != 0)
          return ResolveResult::kProtocolError;
        if (hook_)
          hook_(rp, s);
        // (8.12 R-reclaim): takes the writer's acknowledge and hands the
        // chunk to the next writer; a failure is a protocol error.
        if (ReaderReclaim(*state, s, next_free)) {
          holes_++;
          Advance(rp);
          return ResolveResult::kSkipped;
        }
        return ResolveResult::kProtocolError;
      }
      default:
        return ResolveResult::kProtocolError;  // reserved state
    }
  }
  return ResolveResult::kRetryLater;
}

ResolveResult TestRingReader::DrainAll(std::vector<ReadChunk>* out) {
  // Bounded by the positions outstanding when called (plus new ones).
  if (!out) {
    for (;;) {
      const ResolveResult r = ResolveOne(nullptr);
      if (r != ResolveResult::kEmitted && r != ResolveResult::kSkipped)
        return r;
    }
  }
  for (;;) {
    ReadChunk chunk;
    const ResolveResult r = ResolveOne(&chunk);
    if (r == ResolveResult::kEmitted) {
      out->push_back(std::move(chunk));
      continue;
    }
    if (r == ResolveResult::kSkipped)
      continue;
    return r;
  }
}

void TestPacketReassembler::Add(const ReadChunk& chunk) {
  WriterState& ws = writers_[chunk.writer_id];
  if (chunk.flags & kFlagDataLoss) {
    ws.data_loss_flags++;
    if (ws.in_progress) {
      ws.broken_chains++;
      ws.in_progress = false;
      ws.partial.clear();
    }
  }
  const size_t n = chunk.fragments.size();
  for (size_t i = 0; i < n; i++) {
    const std::string& frag = chunk.fragments[i];
    const bool from_prev = i == 0 && (chunk.flags & kFlagContinuesFromPrev);
    const bool on_next = i + 1 == n && (chunk.flags & kFlagContinuesOnNext);
    if (from_prev) {
      if (!ws.in_progress) {
        ws.orphan_fragments++;
        continue;
      }
      ws.partial += frag;
    } else {
      if (ws.in_progress) {
        ws.broken_chains++;
        ws.in_progress = false;
      }
      ws.partial = frag;
    }
    if (on_next) {
      ws.in_progress = true;
    } else {
      ws.packets.push_back(std::move(ws.partial));
      ws.partial.clear();
      ws.in_progress = false;
    }
  }
}

}  // namespace shm_ring
}  // namespace ringtrace
