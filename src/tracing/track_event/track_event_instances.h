/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TrackEvent data-source instances: what a tracing session's "track_event"
// instance is on the app's side. The data source (the producer's handler
// for StartDataSource/StopDataSource) starts one instance per session that
// enables TrackEvent, and stops it when the session stops.
//
// An instance occupies one of kMaxInstances slots; slot i is bit i of every
// category's mask (bit 0 is the static enabling of SetCategoriesEnabled()).
// Starting it sets bit i in the mask of every category its config enables;
// each thread then gets its own writer for the instance on its first event
// for it, from the instance's WriterFactory (the producer's NewTraceWriter
// for the session's buffer), with a sequence of its own: its own interning
// tables and incremental state, SEQ_INCREMENTAL_STATE_CLEARED on its first
// packet, descriptors written once per sequence (again after each clear),
// the clear period from the instance's clear_period_ms.
//
// Lifetime of the per-thread writers. A thread's writers live in its
// thread_local state. They are flushed and released when the thread exits,
// and a writer of a stopped instance is released at the thread's next
// event (of any instance) after the stop: a generation per slot tells the
// thread that its writer belongs to an instance that is gone. A thread that
// never traces again keeps its stale writer until it exits; the packets it
// wrote are published already (the per-packet publication guarantee of
// producer.h), so nothing waits for it. Each writer holds a reference to
// its instance, hence to the instance's |keep_alive| (the Producer whose
// ring the writer writes): the producer outlives every writer into it.
//
// Stop. StopInstance() guarantees that no event begins for the instance
// once it returns, and that every event of the instance that began before
// has ended (its packet is published). It does not wait for idle threads.
// The argument (Dekker-style; the stores of S1 and the loads of W2 and S2
// are seq_cst, W1 is relaxed and followed by the light fence, S1 by the
// heavy fence of src/base/asymmetric_fence.h):
//
//   event (thread T)                         StopInstance (slot i)
//   W1 T.in_event.store(bits incl. i)        S1 slot_generation[i].store(0)
//      light fence                              heavy fence
//   W2 g = slot_generation[i].load()         S2 for each registered thread T:
//      write into T's writer of i                  wait while
//      only if g is its generation                 T.in_event.load() has i
//   W3 T.in_event.store(previous), release
//
// The fence pair orders like two seq_cst fences: either W1 is visible to
// S2's loads, or S1 is visible to W2. In the first case S2 sees bit i (or
// W3): the stop waits until W3, and W3 (release) read by S2 makes the
// event's writes happen-before the stop's return. In the second, W2 reads
// 0 (or a later instance's generation) and T writes nothing for the
// stopped instance. The fence pair is what lets W1 cost no locked
// instruction on every event: the stop pays a membarrier(2) instead. A
// thread not inside an event has in_event without bit i
// and is not waited for. in_event is written only by its thread (nested
// events save and restore the previous bits). A thread registers its state
// (under the thread-list mutex) before its first W1, so S2 either sees it
// or the registration happens after S2 began, hence after S1, and its W2
// reads 0. The category mask bits are cleared at S1 too, but relaxed: they
// only spare disabled events the work; correctness rests on the generation.
//
// A stop must not be called from inside an event on the same thread, nor
// while holding a lock the WriterFactory takes (a thread inside an event
// may be creating its writer). Conversely, a thread never releases a
// writer while it is inside an event (a writer replaced during an event is
// released after it): releasing a writer may destroy its Producer, whose
// destructor joins the thread that may be running a StopInstance.
//
// Category matching: the rule of Perfetto's C++ SDK (category_matching.h),
// applied to every registered category at the start and to a category
// registered while the instance runs.
//
// Thread model: StartInstance/StopInstance from any thread (the producer's
// dispatch thread), serialized by the caller per instance; events from any
// thread concurrently.

#ifndef SRC_TRACING_TRACK_EVENT_TRACK_EVENT_INSTANCES_H_
#define SRC_TRACING_TRACK_EVENT_TRACK_EVENT_INSTANCES_H_

#include <stdint.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ringtrace/status.h"
#include "ringtrace/trace_writer_v2.h"
#include "ringtrace/track_event.h"
#include "src/tracing/track_event/category_matching.h"

namespace ringtrace {
namespace track_event {

// Creates a writer for the instance's buffer; called on the tracing thread,
// at its first event for the instance. Null (|*status| set) when none can be
// had: the thread's events for the instance are then counted in
// TrackEventStats::events_without_writer, and it does not ask again.
using WriterFactory = std::function<std::unique_ptr<shm_ring::TraceWriterV2>(
    base::Status* status)>;

struct InstanceConfig {
  uint64_t instance_id = 0;  // the service's id, for the caller's bookkeeping
  CategoryConfig categories;
  // Incremental-state clear period of the instance's sequences; 0: the
  // SDK's (GetIncrementalStateConfig().period_ms).
  uint32_t clear_period_ms = 0;
  WriterFactory new_writer;
  // Released when the last writer of the instance is (see above).
  std::shared_ptr<void> keep_alive;
};

struct InstanceHandle {
  uint32_t slot = 0;  // 1..kMaxInstances; 0: none
  uint64_t generation = 0;
  bool valid() const { return slot != 0; }
};

// Every category declared with RT_DEFINE_CATEGORIES in the process (dynamic
// ones are not declared), in registration order, each name once: the first
// declaration of a name that several tables declare. What the data source
// publishes to the service.
std::vector<Category> DeclaredCategories();

// Starts an instance in a free slot. Returns an invalid handle (|*status|
// set, if not null) when all kMaxInstances slots are in use.
InstanceHandle StartInstance(InstanceConfig config, base::Status* status);

// Stops the instance (see "Stop" above). A handle already stopped is a
// no-op. Blocks only while threads finish events of the instance that began
// before.
void StopInstance(const InstanceHandle& handle);

// Instances running now.
uint32_t RunningInstances();

// Flushes and releases the calling thread's writers of stopped instances
// now, instead of at its next event (e.g. a pool thread going idle).
void ReleaseStoppedInstanceWriters();

}  // namespace track_event
}  // namespace ringtrace

#endif  // SRC_TRACING_TRACK_EVENT_TRACK_EVENT_INSTANCES_H_
