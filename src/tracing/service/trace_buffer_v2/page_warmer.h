/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// PageWarmer: takes the first-touch cost of a fresh mapping's pages off the
// thread that writes the mapping (docs/trace_buffer_v2.md, "Storage
// format").
//
// The first user-mode access to a page of a fresh anonymous mapping costs
// its thread a trap, and on a VM whose guest page tables are shadowed a
// larger cost that MADV_POPULATE_WRITE does not remove: on the 2-vCPU AMD
// VM a 4 KiB copy into a page committed that way took 8-9 us, against
// 0.2-0.4 us once any thread of the process had read the page. A
// TraceBufferV2's writer is the drain thread; while it pays that it is not
// draining the rings, and their writers drop.
//
// A PageWarmer is a thread that runs up to |lookahead| bytes ahead of what
// its owner claimed: it commits each kStep of the mapping
// (MADV_POPULATE_WRITE) and reads one byte of each 4 KiB page. Reading
// changes nothing, so one rule makes it safe:
//
// [PW-1] The warmer never reads a byte the owner may be writing. The owner
//   writes only below its claim, owner_end_, raised by Claim(); the warmer
//   reads page p only after publishing reading_ = p and then seeing
//   p >= owner_end_ + kStep, and clears reading_ after the read (release);
//   Claim() raises owner_end_ and then waits while reading_ lies below the
//   new claim (only the newly claimed part can hold it). Both sides store
//   seq_cst and then load the other's word seq_cst, so at least one of them
//   sees the other's store: either the warmer sees the new claim and does not
//   read, or the owner sees the read in progress and waits for its release (a
//   single page read; it yields while it waits).
//
// Memory: at most |lookahead| + kStep of the mapping is committed beyond the
// owner's claim. The thread ends once it reached the mapping's end, or when
// the warmer is destroyed (the destructor joins it; destroy the warmer
// before unmapping). A kernel that refuses MADV_POPULATE_WRITE ends it too
// (the pages then fault in on the owner's writes, as without a warmer).
//
// Thread model: one owner thread calls Claim() and stats(); the warmer's
// own thread is internal.

#ifndef SRC_TRACING_SERVICE_TRACE_BUFFER_V2_PAGE_WARMER_H_
#define SRC_TRACING_SERVICE_TRACE_BUFFER_V2_PAGE_WARMER_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <thread>

#include "src/base/thread_annotations.h"

namespace ringtrace {
namespace trace_buffer {

class PageWarmer {
 public:
  // The granule of claims and commits.
  static constexpr size_t kStep = size_t{256} * 1024;
  static constexpr size_t kPageSize = 4096;

  struct Stats {
    uint64_t pages_read = 0;       // pages the warmer read ahead of the owner
    uint64_t pages_skipped = 0;    // ... it left, the owner being too close
    uint64_t steps_committed = 0;  // MADV_POPULATE_WRITE calls it made
    uint64_t claim_waits = 0;      // Claim()s that waited for a read
  };

  // Test hook, run on the warmer thread for each page: at kPublished with
  // reading_ published and the claim not checked yet, at kChecked once the
  // claim allowed the read (a read in progress) and before it.
  enum class Phase { kPublished, kChecked };
  using BeforeReadHook = std::function<void(size_t page, Phase phase)>;

  // Warms [base, base + size) (|size| a multiple of kPageSize) up to
  // |lookahead| bytes ahead of the claim. Starts the thread.
  PageWarmer(uint8_t* base,
             size_t size,
             size_t lookahead,
             BeforeReadHook before_read = nullptr);
  // Stops the thread and joins it.
  ~PageWarmer();
  PageWarmer(const PageWarmer&) = delete;
  PageWarmer& operator=(const PageWarmer&) = delete;

  // The owner is about to write below |end| (<= size; claims only grow):
  // returns once no page below |end| is being read.
  void Claim(size_t end);

  // Where the warmer got to (a byte offset; the pages below it that the
  // owner had not claimed were committed and read).
  size_t warm_end() const {
    // acquire: pairs with the release stores in Run().
    return warm_end_.load(std::memory_order_acquire);
  }
  // The end of what the warmer committed (>= warm_end()). For memory
  // accounting: the mapping is committed up to max(this, the owner's).
  size_t committed_end() const {
    // acquire: pairs with the release store in Run() after each advice.
    return committed_end_.load(std::memory_order_acquire);
  }
  // Totals so far; read from the owner thread.
  Stats stats() const;

 private:
  static constexpr size_t kNone = SIZE_MAX;

  void Run();
  // Reads the pages of [*pos, to) one by one under [PW-1], advancing *pos;
  // stops early when the owner's claim came within kStep of one.
  void ReadPages(size_t* pos, size_t to);
  // Waits until the claim moved so that |pos| is within the lookahead, or
  // the warmer is stopping.
  void Sleep(size_t pos);
  // The first byte the warmer may read under a claim of |claim| bytes.
  size_t Floor(size_t claim) const;

  uint8_t* const base_;
  const size_t size_;
  const size_t lookahead_;

  // [PW-1]. owner_end_: the owner's claim (written by Claim() only).
  // reading_: the page the warmer is reading, or kNone.
  std::atomic<size_t> owner_end_{0};
  std::atomic<size_t> reading_{kNone};
  std::atomic<size_t> warm_end_{0};
  std::atomic<size_t> committed_end_{0};
  // Counters the warmer thread writes and stats() reads (relaxed: totals
  // with no data behind them).
  std::atomic<uint64_t> pages_read_{0};
  std::atomic<uint64_t> pages_skipped_{0};
  std::atomic<uint64_t> steps_committed_{0};
  uint64_t claim_waits_ = 0;  // owner thread only

  // The warmer sleeps while it is |lookahead| ahead. |sleeping_| and
  // owner_end_ are a Dekker pair (seq_cst both ways): Claim() wakes it only
  // when it might be asleep.
  base::Mutex mutex_;
  std::condition_variable cv_;
  std::atomic<bool> sleeping_{false};
  std::atomic<bool> stop_{false};
  const BeforeReadHook before_read_;
  std::thread thread_;  // last: started once the rest is set
};

}  // namespace trace_buffer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_BUFFER_V2_PAGE_WARMER_H_
