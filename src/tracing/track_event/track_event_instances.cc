/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/track_event/track_event_instances.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>

#include "src/base/asymmetric_fence.h"
#include "src/tracing/track_event/track_event_internal.h"

namespace ringtrace {
namespace track_event {

namespace {

struct Instance {
  uint64_t generation = 0;
  InstanceConfig config;
};

// The generation of the instance running in each slot, 0 when none ([0] is
// unused: bit 0 is the static enabling). Stored (seq_cst, registry mutex
// held) by StartInstance and StopInstance (S1); loaded seq_cst by events
// (W2), see the header.
std::atomic<uint64_t> g_slot_generation[kMaxInstances + 1] = {};

// Bumped (relaxed) by every stop: a thread that sees a new value releases
// its writers of stopped instances at once. Only a hint: each use of a
// writer checks the generation anyway.
std::atomic<uint64_t> g_stops{0};

// Guarded by the registry mutex. Never destroyed (threads may trace while
// the process exits).
struct Instances {
  std::shared_ptr<const Instance> slots[kMaxInstances + 1];
  uint64_t last_generation = 0;
};
Instances& GetInstances() {
  static Instances* instances = new Instances();
  return *instances;
}

// Every thread that has per-thread state, for StopInstance (S2).
struct ThreadList {
  std::mutex mutex;
  std::vector<internal::ThreadState*> states;  // guarded by mutex
};
ThreadList& GetThreadList() {
  static ThreadList* list = new ThreadList();  // never destroyed
  return *list;
}

// Sets (or clears) |bit| in the masks of |table|'s categories that |config|
// enables. Relaxed RMWs: see "Memory order" in track_event.h.
void SetBitsLocked(const internal::CategoryTable* table,
                   const InstanceConfig& config,
                   uint32_t bit) {
  for (size_t i = 0; i < table->count; i++) {
    if (CategoryEnabledByConfig(table->categories[i], config.categories)) {
      table->masks[i].fetch_or(bit, std::memory_order_relaxed);
    }
  }
}

}  // namespace

namespace internal {

// The calling thread's writer for one instance slot.
struct InstanceWriter {
  uint64_t generation = 0;  // of the instance it writes for; 0: none
  std::shared_ptr<const Instance> instance;
  std::unique_ptr<shm_ring::TraceWriterV2> writer;
  std::unique_ptr<TrackEventSequence> sequence;  // null: no writer to be had
};

struct ThreadState {
  // The instance bits of the events this thread is inside (W1/W3). Stored
  // only by the thread; loaded by StopInstance.
  std::atomic<uint32_t> in_event{0};
  uint64_t stops_seen = 0;
  InstanceWriter writers[kMaxInstances + 1];
  // Writers replaced inside an event, released once the outermost event
  // ended. Releasing a writer may destroy its Producer (the last
  // reference), whose destructor joins the Producer's reader thread, which
  // may be inside a StopInstance waiting for this thread's in_event: so no
  // writer is released while in_event is set.
  InstanceWriter retired[kMaxInstances + 1];
  bool has_retired = false;
};

}  // namespace internal

namespace {

thread_local internal::ThreadState* t_state = nullptr;
thread_local bool t_state_destroyed = false;

void ReleaseWriter(internal::InstanceWriter* w) {
  if (w->writer) {
    w->sequence.reset();
    w->writer.reset();  // finishes an open packet and flushes
    internal::CountInstanceWriterReleased();
  }
  w->sequence.reset();
  w->generation = 0;
  w->instance.reset();  // may release the producer (keep_alive)
}

// Destroyed at thread exit: unregisters the thread, then flushes and
// releases its writers.
struct ThreadStateOwner {
  ~ThreadStateOwner() {
    internal::ThreadState* state = t_state;
    if (!state)
      return;
    t_state = nullptr;
    t_state_destroyed = true;
    {
      ThreadList& list = GetThreadList();
      std::lock_guard<std::mutex> lock(list.mutex);
      list.states.erase(
          std::find(list.states.begin(), list.states.end(), state));
    }
    for (internal::InstanceWriter& w : state->writers)
      ReleaseWriter(&w);
    for (internal::InstanceWriter& w : state->retired)
      ReleaseWriter(&w);
    delete state;
  }
};
thread_local ThreadStateOwner t_owner;

// Null once the thread's state was destroyed (a thread_local destructor that
// runs after ours traces).
internal::ThreadState* GetOrCreateThreadState() {
  if (RT_LIKELY(t_state != nullptr))
    return t_state;
  if (t_state_destroyed)
    return nullptr;
  (void)&t_owner;  // registers the thread-exit destructor
  auto* state = new internal::ThreadState();
  {
    ThreadList& list = GetThreadList();
    std::lock_guard<std::mutex> lock(list.mutex);
    list.states.push_back(state);
  }
  t_state = state;
  return state;
}

// Gives |w| a writer for the instance of |generation| in |slot|. Leaves
// w->generation 0 if that instance is gone already.
void CreateWriter(internal::InstanceWriter* w,
                  uint32_t slot,
                  uint64_t generation,
                  uint64_t now_ns) {
  std::shared_ptr<const Instance> instance;
  {
    std::lock_guard<std::mutex> lock(internal::GetRegistry().mutex);
    instance = GetInstances().slots[slot];
  }
  if (!instance || instance->generation != generation)
    return;  // stopped (and maybe restarted) since W2
  w->generation = generation;
  base::Status status;
  std::unique_ptr<shm_ring::TraceWriterV2> writer;
  if (instance->config.new_writer)
    writer = instance->config.new_writer(&status);
  IncrementalStateConfig incremental = GetIncrementalStateConfig();
  if (instance->config.clear_period_ms != 0)
    incremental.period_ms = instance->config.clear_period_ms;
  w->instance = std::move(instance);
  if (!writer)
    return;  // counted per event
  w->writer = std::move(writer);
  w->sequence.reset(
      new TrackEventSequence(w->writer.get(), incremental, now_ns));
  internal::CountInstanceWriterCreated();
}

void ReleaseStaleWriters(internal::ThreadState* state) {
  for (uint32_t slot = 1; slot <= kMaxInstances; slot++) {
    internal::InstanceWriter& w = state->writers[slot];
    // Relaxed: a hint; a writer wrongly kept is caught at its next use.
    if (w.generation != 0 && g_slot_generation[slot].load(
                                 std::memory_order_relaxed) != w.generation) {
      ReleaseWriter(&w);
    }
  }
}

}  // namespace

namespace internal {

void ApplyInstancesLocked(const CategoryTable* table) {
  Instances& instances = GetInstances();
  for (uint32_t slot = 1; slot <= kMaxInstances; slot++) {
    if (instances.slots[slot])
      SetBitsLocked(table, instances.slots[slot]->config, 1u << slot);
  }
}

void EventTargets::EnterInstances() {
  const uint32_t instances = pending_ & ~kStaticBit;
  state_ = GetOrCreateThreadState();
  if (RT_UNLIKELY(!state_)) {
    if (create_)
      CountEventsWithoutWriter(
          static_cast<uint64_t>(__builtin_popcount(instances)));
    pending_ &= kStaticBit;
    return;
  }
  // Relaxed load: only this thread stores in_event.
  previous_in_event_ = state_->in_event.load(std::memory_order_relaxed);
  // Writers are released outside of any event (see ThreadState::retired).
  const uint64_t stops = g_stops.load(std::memory_order_relaxed);
  if (RT_UNLIKELY(stops != state_->stops_seen) && previous_in_event_ == 0) {
    state_->stops_seen = stops;
    ReleaseStaleWriters(state_);
  }
  // W1, then the light side of the asymmetric fence whose heavy side is
  // StopInstance's, between S1 and S2 (see the header).
  state_->in_event.store(previous_in_event_ | instances,
                         std::memory_order_relaxed);
  base::AsymmetricLightFence();
}

void EventTargets::LeaveInstances() {
  // W3: pairs with StopInstance's seq_cst load (S2), which then knows this
  // event's writes are done.
  state_->in_event.store(previous_in_event_, std::memory_order_release);
  if (RT_UNLIKELY(state_->has_retired) && previous_in_event_ == 0) {
    state_->has_retired = false;
    for (InstanceWriter& w : state_->retired)
      ReleaseWriter(&w);
  }
}

void FlushThreadInstanceWriters() {
  ThreadState* state = t_state;
  if (!state)
    return;
  for (InstanceWriter& w : state->writers) {
    if (w.writer)
      w.writer->Flush();
  }
  for (InstanceWriter& w : state->retired) {
    if (w.writer)
      w.writer->Flush();
  }
}

TrackEventSequence* EventTargets::NextSlow() {
  if (pending_ & kStaticBit) {
    pending_ &= ~kStaticBit;
    if (TrackEventSequence* binding = t_bound_sequence) {
      written_mask_ |= kStaticBit;
      return binding;
    }
    CountEventsWithoutWriter(1);
  }
  while (pending_ != 0) {
    const uint32_t slot = static_cast<uint32_t>(__builtin_ctz(pending_));
    pending_ &= pending_ - 1;
    if (slot > kMaxInstances)
      continue;
    // W2.
    const uint64_t generation =
        g_slot_generation[slot].load(std::memory_order_seq_cst);
    if (generation == 0 || generation > generation_limit_)
      continue;  // stopped; or started after the slice this ends began
    InstanceWriter& w = state_->writers[slot];
    if (w.generation != generation) {
      if (!create_)
        continue;  // an end goes only where a begin could have gone
      if (w.generation != 0) {
        ReleaseWriter(&state_->retired[slot]);  // an older one, if any
        state_->retired[slot] = std::move(w);
        state_->has_retired = true;
        w = InstanceWriter();
      }
      CreateWriter(&w, slot, generation, Now());
      if (w.generation != generation)
        continue;  // the instance stopped meanwhile
    }
    if (RT_UNLIKELY(!w.sequence)) {
      CountEventsWithoutWriter(1);
      continue;
    }
    written_mask_ |= 1u << slot;
    max_generation_ = std::max(max_generation_, generation);
    return w.sequence.get();
  }
  return nullptr;
}

}  // namespace internal

std::vector<Category> DeclaredCategories() {
  internal::Registry& registry = internal::GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  std::vector<Category> out;
  std::set<std::string_view> names;
  for (const internal::CategoryTable* table : registry.tables) {
    if (!table->declared)
      continue;
    for (size_t i = 0; i < table->count; i++) {
      // The names are static strings: the views outlive the call.
      if (names.insert(table->categories[i].name()).second)
        out.push_back(table->categories[i]);
    }
  }
  return out;
}

InstanceHandle StartInstance(InstanceConfig config, base::Status* status) {
  // Once per process, before any event can see an instance bit: from then
  // on W1's fence is a compiler barrier where membarrier(2) is available.
  base::EnableAsymmetricFences();
  internal::Registry& registry = internal::GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  Instances& instances = GetInstances();
  uint32_t slot = 1;
  while (slot <= kMaxInstances && instances.slots[slot])
    slot++;
  if (slot > kMaxInstances) {
    if (status) {
      *status = base::ErrStatus(
          "TrackEvent: all %u instance slots are in use (instance %llu not "
          "started)",
          kMaxInstances, static_cast<unsigned long long>(config.instance_id));
    }
    return InstanceHandle();
  }
  auto instance = std::make_shared<Instance>();
  instance->generation = ++instances.last_generation;
  instance->config = std::move(config);
  const uint64_t generation = instance->generation;
  instances.slots[slot] = instance;
  // Before the mask bits: an event that sees a bit finds the generation (or
  // sees 0 a little longer and writes nothing: the start is asynchronous).
  g_slot_generation[slot].store(generation, std::memory_order_seq_cst);
  for (const internal::CategoryTable* table : registry.tables)
    SetBitsLocked(table, instance->config, 1u << slot);
  InstanceHandle handle;
  handle.slot = slot;
  handle.generation = generation;
  return handle;
}

void StopInstance(const InstanceHandle& handle) {
  if (!handle.valid() || handle.slot > kMaxInstances)
    return;
  const uint32_t bit = 1u << handle.slot;
  std::shared_ptr<const Instance> dropped;
  {
    internal::Registry& registry = internal::GetRegistry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    Instances& instances = GetInstances();
    if (!instances.slots[handle.slot] ||
        instances.slots[handle.slot]->generation != handle.generation) {
      return;  // stopped already
    }
    // S1.
    g_slot_generation[handle.slot].store(0, std::memory_order_seq_cst);
    for (const internal::CategoryTable* table : registry.tables) {
      for (size_t i = 0; i < table->count; i++)
        table->masks[i].fetch_and(~bit, std::memory_order_relaxed);
    }
    dropped = std::move(instances.slots[handle.slot]);
    g_stops.fetch_add(1, std::memory_order_relaxed);
  }
  // Between S1 and S2: every thread's W1 before its W2 is visible to S2,
  // or its W2 sees S1 (see the header).
  base::AsymmetricHeavyFence();
  // S2. The registry mutex is not held: a thread inside an event may need
  // it to create its writer.
  {
    ThreadList& list = GetThreadList();
    std::lock_guard<std::mutex> lock(list.mutex);
    for (internal::ThreadState* state : list.states) {
      for (uint32_t spins = 0;
           state->in_event.load(std::memory_order_seq_cst) & bit; spins++) {
        if (spins < 100) {
          sched_yield();
        } else {
          const struct timespec pause = {0, 50 * 1000};
          nanosleep(&pause, nullptr);
        }
      }
    }
  }
  // |dropped| goes here, outside the locks (the producer's last reference
  // may be in it).
}

uint32_t RunningInstances() {
  std::lock_guard<std::mutex> lock(internal::GetRegistry().mutex);
  uint32_t n = 0;
  for (uint32_t slot = 1; slot <= kMaxInstances; slot++)
    n += GetInstances().slots[slot] ? 1 : 0;
  return n;
}

void ReleaseStoppedInstanceWriters() {
  internal::ThreadState* state = t_state;
  // Relaxed: only this thread stores it. Not from inside an event.
  if (!state || state->in_event.load(std::memory_order_relaxed) != 0)
    return;
  ReleaseStaleWriters(state);
  state->has_retired = false;
  for (internal::InstanceWriter& w : state->retired)
    ReleaseWriter(&w);
}

}  // namespace track_event
}  // namespace ringtrace
