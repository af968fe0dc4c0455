/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/trace_buffer_v2/page_warmer.h"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <utility>

#include "ringtrace/logging.h"
#include "src/base/checked_math.h"

namespace ringtrace {
namespace trace_buffer {
namespace {

// Claim() re-reads reading_ this many times before it yields: a page read
// takes microseconds, a preempted warmer a time slice.
constexpr int kSpinsBeforeYield = 64;

}  // namespace

PageWarmer::PageWarmer(uint8_t* base,
                       size_t size,
                       size_t lookahead,
                       BeforeReadHook before_read)
    : base_(base),
      size_(size),
      lookahead_(lookahead),
      before_read_(std::move(before_read)) {
  RT_CHECK(size % kPageSize == 0);
  thread_ = std::thread([this] { Run(); });
}

PageWarmer::~PageWarmer() {
  {
    base::MutexLock lock(&mutex_);
    // relaxed: the mutex orders it for the wait in Sleep(); the warmer's
    // other loads of it are a prompt to stop, checked once per page.
    stop_.store(true, std::memory_order_relaxed);
  }
  cv_.notify_all();
  thread_.join();
}

void PageWarmer::Claim(size_t end) {
  RT_DCHECK(end <= size_);
  // relaxed: only this thread stores it.
  if (end <= owner_end_.load(std::memory_order_relaxed))
    return;
  // [PW-1] seq_cst: pairs with the warmer's seq_cst store of reading_ and
  // its seq_cst load of owner_end_ in ReadPages().
  owner_end_.store(end, std::memory_order_seq_cst);
  bool waited = false;
  for (int spins = 0;; spins++) {
    // [PW-1] seq_cst: the other half of the Dekker pair; as an acquire it
    // pairs with the release that clears reading_ after a read, so that
    // read happens before this thread's writes to the page.
    const size_t r = reading_.load(std::memory_order_seq_cst);
    if (r == kNone || r >= end)
      break;
    waited = true;
    if (spins >= kSpinsBeforeYield)
      sched_yield();
  }
  if (waited)
    claim_waits_++;
  // seq_cst: pairs with Sleep()'s seq_cst store of sleeping_ and its
  // re-check of owner_end_: one of the two sees the other's store.
  if (sleeping_.load(std::memory_order_seq_cst)) {
    base::MutexLock lock(&mutex_);
    cv_.notify_one();
  }
}

PageWarmer::Stats PageWarmer::stats() const {
  Stats s;
  // relaxed: totals (see the members).
  s.pages_read = pages_read_.load(std::memory_order_relaxed);
  s.pages_skipped = pages_skipped_.load(std::memory_order_relaxed);
  s.steps_committed = steps_committed_.load(std::memory_order_relaxed);
  s.claim_waits = claim_waits_;
  return s;
}

void PageWarmer::Run() {
  // For ps and top: the service's CPU that is not the drain's.
  pthread_setname_np(pthread_self(), "rt_page_warmer");
  // The first step is the owner's: nothing is claimed yet ([PW-1]).
  size_t pos = std::min(kStep, size_);
  // relaxed: a prompt to stop (see ~PageWarmer()).
  while (pos < size_ && !stop_.load(std::memory_order_relaxed)) {
    // seq_cst: as in ReadPages(); a stale claim only makes the check
    // there, which decides, fail.
    const size_t claim = owner_end_.load(std::memory_order_seq_cst);
    const size_t floor = Floor(claim);
    if (pos < floor) {
      // The owner is too close (or past): leave the pages to it.
      pages_skipped_.fetch_add((floor - pos) / kPageSize,
                               std::memory_order_relaxed);
      pos = floor;
      // release: pairs with the acquire in warm_end().
      warm_end_.store(pos, std::memory_order_release);
      continue;
    }
    if (pos - floor >= lookahead_) {
      Sleep(pos);
      continue;
    }
    const size_t to = std::min(pos + kStep, size_);
    if (madvise(base_ + pos, to - pos, MADV_POPULATE_WRITE) != 0)
      return;  // refused (before Linux 5.14): the owner's writes fault in
    steps_committed_.fetch_add(1, std::memory_order_relaxed);
    // release: pairs with the acquire in committed_end().
    committed_end_.store(to, std::memory_order_release);
    ReadPages(&pos, to);
    // release: pairs with the acquire in warm_end().
    warm_end_.store(pos, std::memory_order_release);
  }
}

void PageWarmer::ReadPages(size_t* pos, size_t to) {
  for (; *pos < to; *pos += kPageSize) {
    // relaxed: see ~PageWarmer().
    if (stop_.load(std::memory_order_relaxed))
      return;
    // [PW-1] seq_cst: pairs with Claim()'s seq_cst store of owner_end_ and
    // load of reading_.
    reading_.store(*pos, std::memory_order_seq_cst);
    if (before_read_)
      before_read_(*pos, Phase::kPublished);
    if (*pos < owner_end_.load(std::memory_order_seq_cst) + kStep) {
      // release: as below (nothing was read).
      reading_.store(kNone, std::memory_order_release);
      return;  // Run() moves past the claim
    }
    if (before_read_)
      before_read_(*pos, Phase::kChecked);
    // The read that fills the page's entries for the process. volatile:
    // it has no other effect, and must not be elided.
    (void)*static_cast<volatile const uint8_t*>(base_ + *pos);
    // [PW-1] release: pairs with Claim()'s load; the read happens before
    // the owner writes the page.
    reading_.store(kNone, std::memory_order_release);
    pages_read_.fetch_add(1, std::memory_order_relaxed);
  }
}

size_t PageWarmer::Floor(size_t claim) const {
  // claim <= size_ (Claim()), so no overflow.
  return std::min(base::AlignUp(claim, kPageSize) + kStep, size_);
}

void PageWarmer::Sleep(size_t pos) {
  base::MutexLock lock(&mutex_);
  // seq_cst: pairs with Claim()'s seq_cst store of owner_end_ and load of
  // sleeping_ (see there).
  sleeping_.store(true, std::memory_order_seq_cst);
  // relaxed stop_: ordered by the mutex (see ~PageWarmer()).
  while (!stop_.load(std::memory_order_relaxed)) {
    const size_t floor = Floor(owner_end_.load(std::memory_order_seq_cst));
    if (pos < floor || pos - floor < lookahead_)
      break;
    cv_.wait(lock.native());
  }
  // relaxed: only a hint for Claim() (a spurious notify costs nothing).
  sleeping_.store(false, std::memory_order_relaxed);
}

}  // namespace trace_buffer
}  // namespace ringtrace
