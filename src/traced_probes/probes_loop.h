/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ProbesLoop: the one thread of ringtrace_probes that does every data
// source instance's work. An instance is a ProbeSource: the loop calls its
// Run() when it is due, and Run() says when it is due next. Instances of
// any number of sessions share the thread, each with its own schedule,
// writer and state.
//
// Stopping. Remove() returns only once the loop will never call the source
// again and no call is in progress: when it returns, the source is the
// caller's, to destroy, and no new packet of it will begin (what
// DataSourceHandler::OnStop promises, include/ringtrace/producer.h). A call
// in progress is asked to end early: Run() gets a flag it checks between
// packets (a scan of many processes ends at the next process).
//
// Time: CLOCK_MONOTONIC milliseconds (base::MonotonicMs()). A source that
// falls behind is not run in a burst to catch up: it says its next time
// itself (see Schedule in probe_source.h).
//
// Flushing. Flush() calls the source's Flush() on the caller's thread (the
// producer's reader thread, in OnFlush) after the run in progress, if any,
// ended; meanwhile the loop leaves that source alone. So a flush is
// acknowledged only after the source wrote what it had pending.
//
// Thread model: Add(), Remove(), Flush() and Wake() from any thread (Wake()
// also from a source's Run()) (the producer's
// reader thread calls them from OnStart and OnStop), never from a source's
// Run() (Remove() and Flush() would wait for themselves). Sources run on the
// loop thread, one at a time.

#ifndef SRC_TRACED_PROBES_PROBES_LOOP_H_
#define SRC_TRACED_PROBES_PROBES_LOOP_H_

#include <stdint.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <thread>

#include "src/base/thread_annotations.h"
#include "src/traced_probes/probe_source.h"

namespace ringtrace {
namespace probes {

class ProbesLoop {
 public:
  using Handle = uint64_t;

  ProbesLoop();
  // Stops the thread; sources still added are destroyed (on the calling
  // thread, after the loop thread ended).
  ~ProbesLoop();
  ProbesLoop(const ProbesLoop&) = delete;
  ProbesLoop& operator=(const ProbesLoop&) = delete;

  // From now on the loop runs |source|, first at once. Returns its handle
  // (never 0).
  Handle Add(std::unique_ptr<ProbeSource> source);

  // Takes the source back (see "Stopping"); null for a handle never added
  // or already removed.
  std::unique_ptr<ProbeSource> Remove(Handle handle);

  // Runs the source's Flush() on the calling thread, once no Run() of it
  // is in progress; the loop does not run it meanwhile. Returns when the
  // Flush() returned; false for a handle never added or already removed
  // (or being removed).
  bool Flush(Handle handle);

  // Makes the source due now (its Run() soon, ahead of its schedule); a
  // run in progress is followed by another. A handle not added: nothing.
  // Never blocks on a run.
  void Wake(Handle handle);

  // Sources added and not removed.
  size_t size() const;

 private:
  struct Entry {
    std::unique_ptr<ProbeSource> source;
    uint64_t next_ms = 0;
    // Set by Remove() while Run() is in progress: it ends at its next
    // check. Written under mutex_, read by Run() without it (relaxed: it
    // only ends the work early; the mutex orders everything else).
    std::atomic<bool> stop{false};
    // Flush() is calling the source on its caller's thread: the loop does
    // not run it and Remove() waits (under mutex_).
    bool flushing = false;
    // Wake() came during its run: due again right after it (under mutex_).
    bool woken = false;
  };

  void ThreadMain();

  mutable base::Mutex mutex_;
  // The loop waits on it for the next due time or a change of entries_.
  std::condition_variable wake_;
  // Remove() waits on it for the end of a Run() in progress.
  std::condition_variable run_done_;
  std::map<Handle, std::unique_ptr<Entry>> entries_ RT_GUARDED_BY(mutex_);
  Handle next_handle_ RT_GUARDED_BY(mutex_) = 1;
  // The source Run() is in progress for (0: none).
  Handle running_ RT_GUARDED_BY(mutex_) = 0;
  bool quit_ RT_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace probes
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_PROBES_LOOP_H_
