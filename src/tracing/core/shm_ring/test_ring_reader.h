/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. The oracle reader: a straight-line, single-threaded
// transcription of the reader flow of spec section 5.3 over a RingView. The
// tests and benchmarks below ring_drainer in the dependency order (shm_ring,
// encoding, producer, examples) use it to play the service's part; the
// differential test ring_drainer/ring_reader_oracle_unittest.cc feeds random
// ring states and races to it and to the service's RingReader and requires
// identical results, so what those tests prove holds for the real reader.
// It follows the spec's dispatch exactly:
//
//   read_pos == write_pos        -> NoData
//   acquire-load the state word, then dispatch on that one snapshot:
//   FreeForWrap, tag matches     -> CAS to FreeForWrap(next_wrap) -> Skipped
//   FreeForWrap, tag mismatch    -> ProtocolError (nothing changed)
//   Acquired(w,n)                -> copy prefix, CAS to RewriteRequested(w,n)
//   Complete(w,n)                -> copy all, CAS to FreeForWrap(next_wrap)
//   RewriteRequested             -> Skipped (only its writer may leave it)
//   Acknowledged                 -> CAS to FreeForWrap(next_wrap) -> Skipped;
//                                   CAS failure -> ProtocolError
//   reserved state               -> ProtocolError (nothing changed)
//   a failed CAS redispatches on the returned word, within a retry budget;
//   out of budget -> RetryLater (read_pos unchanged).
//
// Every successful resolution release-stores read_pos + 1 and then calls
// WakeStalledWriters() (ring_wait.h). The directory is copied before it is
// parsed and validated per spec 6.4; a malformed directory drops the bytes
// but still performs the ownership transition.
//
// Hooks let a test run writer actions at the exact racy points (between the
// reader's snapshot and its CAS) to force each outcome of the spec 5.2 races.

#ifndef SRC_TRACING_CORE_SHM_RING_TEST_RING_READER_H_
#define SRC_TRACING_CORE_SHM_RING_TEST_RING_READER_H_

#include <stdint.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ringtrace/shm_ring_abi.h"

namespace ringtrace {
namespace shm_ring {

enum class ResolveResult {
  kNoData,
  kSkipped,  // a hole: read_pos advanced, nothing emitted
  kEmitted,  // read_pos advanced, |out| holds the chunk's fragments
  kRetryLater,
  kProtocolError,
};
const char* ResolveResultToString(ResolveResult r);

// What the reader took from one position.
struct ReadChunk {
  uint32_t position = 0;
  StateWord word = 0;  // the word the successful CAS replaced
  WriterID writer_id = 0;
  ChunkFlags flags;
  BufferID buffer_id = 0;
  bool scraped = false;  // taken from Acquired (a partial scrape)
  std::vector<std::string> fragments;
};

class TestRingReader {
 public:
  explicit TestRingReader(const RingView& ring, uint32_t retry_budget = 8);

  // Resolves the position at read_pos (spec 5.3). |out| may be null.
  ResolveResult ResolveOne(ReadChunk* out);

  // Resolves positions until NoData, RetryLater or ProtocolError (returned).
  // Emitted chunks are appended to |out| (may be null).
  ResolveResult DrainAll(std::vector<ReadChunk>* out);

  // When false, chunks are resolved without copying their payload (used by
  // benchmarks that only need chunk turnover).
  void set_copy_payload(bool copy) { copy_payload_ = copy; }

  // Runs after the snapshot (and copy), right before the reader's CAS.
  using BeforeCasHook = std::function<void(uint32_t position, StateWord seen)>;
  void set_before_cas_hook(BeforeCasHook hook) { hook_ = std::move(hook); }

  uint32_t read_pos() const;
  uint64_t holes() const { return holes_; }
  uint64_t emitted() const { return emitted_; }
  uint64_t malformed() const { return malformed_; }
  uint64_t wakeups() const { return wakeups_; }

 private:
  // Copies into |out| (may be null) and validates the fragments the word |s|
  // publishes (its fragment count; spec 6.4). Returns false if the directory
  // is malformed or the format unknown (3.4).
  bool CopyFragments(const uint8_t* chunk, StateWord s, ReadChunk* out);
  void Advance(uint32_t rp);
  // After the CAS that took the chunk at |rp| (word |seen|): advances and
  // records it in |out| (may be null), or counts a hole if it had no
  // fragment or a malformed directory (|valid| false).
  ResolveResult Taken(uint32_t rp,
                      StateWord seen,
                      bool valid,
                      bool scraped,
                      ReadChunk* out);

  RingView ring_;
  uint32_t retry_budget_;
  bool copy_payload_ = true;
  BeforeCasHook hook_;
  uint64_t holes_ = 0;
  uint64_t emitted_ = 0;
  uint64_t malformed_ = 0;
  uint64_t wakeups_ = 0;
  std::vector<uint8_t> dir_copy_;
};

// Reassembles packets from emitted chunks (in position order), per writer,
// using the continues-from-prev / continues-on-next flags.
class TestPacketReassembler {
 public:
  void Add(const ReadChunk& chunk);

  struct WriterState {
    std::vector<std::string> packets;
    std::string partial;
    bool in_progress = false;
    uint32_t data_loss_flags = 0;   // chunks carrying data-loss
    uint32_t broken_chains = 0;     // partial packets abandoned
    uint32_t orphan_fragments = 0;  // continues-from-prev without a head
  };
  const WriterState& writer(WriterID id) { return writers_[id]; }
  std::vector<std::string> packets(WriterID id) { return writers_[id].packets; }

 private:
  std::map<WriterID, WriterState> writers_;
};

}  // namespace shm_ring
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_SHM_RING_TEST_RING_READER_H_
