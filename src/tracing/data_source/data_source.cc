/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The runtime of DataSource<T> (include/ringtrace/data_source.h): one
// TypeImpl per registered type, the DataSourceHandler of that type's name,
// with its instance slots; per thread, one TypeThreadState per type it
// traced, with its writer and incremental state per slot.
//
// Stop. Completing an instance's stop (FinishStop) guarantees that no
// Trace() lambda runs for it once it returns, that every lambda that began
// for it has returned, and only then destroys the app's object and acks.
// It does not wait for threads that are not inside a Trace() of the type.
// The argument (as TrackEvent's, track_event_instances.h; every access
// below sequentially consistent unless stated; W1 is relaxed, followed by
// the light fence of src/base/asymmetric_fence.h, and S1 by its heavy one):
//
//   Trace() (thread T, type t)                 FinishStop (type t, slot i)
//   W0 T.types[t].store(state) (first time)    S1 slot_generation[i].store(0)
//   W1 state.in_trace.store(mask incl. i)         heavy fence
//      light fence                             S2 for each registered thread:
//   W2 g = slot_generation[i].load()              s = T.types[t].load();
//      run the lambda only if g is the            wait while s and
//      generation of the thread's writer          s.in_trace.load() has i
//   W3 state.in_trace.store(0), release
//
// The fence pair orders like two seq_cst fences: either W0 and W1 are
// visible to S2's loads, which see the state and bit i (or W3): S2 waits
// until W3, whose release makes the lambda's writes happen-before the
// stop's end; or S1 is visible to W2, which reads 0 or a later generation,
// and nothing runs for the stopped instance.
// A thread registers its ThreadState in the thread list (whose mutex S2
// holds) before its first W0, outside of any Trace(). A type's state is
// published by W0 alone, without that mutex: a thread inside a Trace() of
// another type may create it while S2 waits for that other type.
//
// Completing a stop from inside a Trace() of the same type on the same
// thread (the app calls the stop closure in its lambda) would wait for
// itself: S1 is done at once and the rest runs when that thread's Trace()
// ends (after its W3). Completing it while the instance's OnStop is still
// running (the closure called before OnStop returned, on any thread) runs
// the rest when OnStop returned, on the reader thread: the object is never
// destroyed under its own callback.
//
// Writers. A thread's writer for a slot is released when the thread exits,
// and at its next Trace() of the type after the instance stopped; never
// while the thread is inside any Trace() (releasing a writer may destroy
// the Producer, whose destructor joins the reader thread, which may be in
// S2 waiting for this thread). A writer replaced inside a Trace() is
// retired and released when the thread's outermost Trace() ends.

#include "ringtrace/data_source.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ringtrace/proto_field_reader.h"
#include "src/base/asymmetric_fence.h"
#include "src/base/time.h"
#include "src/tracing/ipc/wire_protocol.h"

namespace ringtrace {

DataSourceBase::~DataSourceBase() = default;
void DataSourceBase::OnSetup(const SetupArgs&) {}
void DataSourceBase::OnStart(const StartArgs&) {}
void DataSourceBase::OnStop(const StopArgs&) {}
void DataSourceBase::OnFlush(const FlushArgs&) {}

namespace internal {

class DataSourceStopper {
 public:
  static void Prepare(DataSourceBase::StopArgs* args,
                      uint32_t instance_index,
                      bool* async,
                      std::function<void()> complete) {
    args->instance_index = instance_index;
    args->async_ = async;
    args->complete_ = std::move(complete);
  }
};

namespace {

constexpr uint32_t kAllSlots = (1u << kMaxDataSourceInstances) - 1;
static_assert(kMaxDataSourceInstances <= 32, "one bit per slot");

class TypeImpl;

// The calling thread's state of one type.
struct TypeThreadState {
  // The slots of the Trace() this thread is inside (W1/W3). Stored only by
  // the thread; loaded by FinishStop (S2).
  std::atomic<uint32_t> in_trace{0};
  uint64_t stops_seen = 0;
  DataSourceThreadInstance instances[kMaxDataSourceInstances];
};

struct ThreadState {
  // W0: stored (seq_cst) once by the thread, loaded (seq_cst) by S2 under
  // the thread list's mutex (which keeps the state alive).
  std::atomic<TypeThreadState*> types[kMaxDataSourceTypes] = {};
  uint32_t depth = 0;  // Trace() scopes open on this thread, of any type
  // Writers replaced inside a Trace(), released when the outermost ends.
  std::vector<DataSourceThreadInstance> retired;
  // Stop completions asked for inside a Trace(), run when the outermost
  // ends (S2 must not wait for this thread, nor hold the thread list's
  // mutex while this thread is inside a Trace() that another stop waits
  // for).
  std::vector<std::function<void()>> after_trace;
};

// Every thread that has a ThreadState.
struct ThreadList {
  std::mutex mutex;
  std::vector<ThreadState*> states;  // guarded by mutex
};
ThreadList& GetThreadList() {
  static ThreadList* list = new ThreadList();  // never destroyed
  return *list;
}

thread_local ThreadState* t_state = nullptr;
thread_local bool t_state_destroyed = false;

void ReleaseThreadInstance(DataSourceThreadInstance* ti) {
  ResetIncrementalState(ti);
  ti->writer.reset();  // finishes an open packet and flushes
  ti->instance.reset();
  ti->generation = 0;
}

// Destroyed at thread exit: unregisters the thread, then releases its
// writers and states.
struct ThreadStateOwner {
  ~ThreadStateOwner() {
    ThreadState* state = t_state;
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
    for (std::atomic<TypeThreadState*>& slot : state->types) {
      // Relaxed: only this thread stores it, and no stopper can see the
      // state any more.
      TypeThreadState* type_state = slot.load(std::memory_order_relaxed);
      if (!type_state)
        continue;
      for (DataSourceThreadInstance& ti : type_state->instances)
        ReleaseThreadInstance(&ti);
      delete type_state;
    }
    for (DataSourceThreadInstance& ti : state->retired)
      ReleaseThreadInstance(&ti);
    delete state;
  }
};
thread_local ThreadStateOwner t_owner;

// Null once the thread's state was destroyed (a thread_local destructor
// that runs after ours traces).
ThreadState* GetOrCreateThreadState() {
  if (RT_LIKELY(t_state != nullptr))
    return t_state;
  if (t_state_destroyed)
    return nullptr;
  (void)&t_owner;  // registers the thread-exit destructor
  auto* state = new ThreadState();
  {
    ThreadList& list = GetThreadList();
    std::lock_guard<std::mutex> lock(list.mutex);
    list.states.push_back(state);
  }
  t_state = state;
  return state;
}

// One instance slot's occupant.
struct Instance {
  uint64_t generation = 0;
  uint32_t instance_id = 0;
  shm_ring::BufferID target_buffer = 0;
  uint64_t clear_period_ns = 0;
  std::weak_ptr<Producer> producer;
  std::shared_ptr<DataSourceInstanceShared> shared;
  // Guarded by the type's mutex:
  bool finishing = false;         // S1 done
  bool in_stop_callback = false;  // OnStop is running
  bool complete_after_callback = false;
};

// The payload of |field| in the serialized DataSourceConfig |config| (its
// occurrences concatenated). False if the bytes are malformed or the field
// is not length-delimited.
bool ReadOwnConfig(const std::string& config,
                   uint32_t field,
                   std::string* out) {
  encoding::FieldReader reader(config);
  encoding::Field f;
  while (reader.Next(&f)) {
    if (f.id != field)
      continue;
    if (f.wire_type != encoding::kWireLengthDelimited)
      return false;
    out->append(f.bytes.data(), f.bytes.size());
  }
  return reader.ok();
}

class TypeImpl final : public DataSourceHandler {
 public:
  TypeImpl(DataSourceTypeState* state,
           uint32_t index,
           const DataSourceDescriptor& descriptor,
           std::function<std::unique_ptr<DataSourceBase>()> factory,
           bool has_incremental_state)
      : state_(state),
        index_(index),
        name_(descriptor.name),
        config_field_(descriptor.config_field),
        factory_(std::move(factory)),
        has_incremental_state_(has_incremental_state) {}

  uint32_t index() const { return index_; }
  bool Describes(const DataSourceDescriptor& descriptor) const {
    return descriptor.name == name_ && descriptor.config_field == config_field_;
  }
  bool has_incremental_state() const { return has_incremental_state_; }

  // W2.
  uint64_t SlotGeneration(uint32_t slot) const {
    return slot_generation_[slot].load(std::memory_order_seq_cst);
  }
  // A hint (relaxed): a thread that sees a new value releases its writers
  // of stopped instances.
  uint64_t stops() const { return stops_.load(std::memory_order_relaxed); }

  void OnStart(const DataSourceInstanceConfig& config) override;
  void OnStop(uint32_t instance_id) override;
  void OnStopRequested(uint32_t instance_id,
                       std::function<void()> ack) override;
  void OnFlush(uint32_t flush_id) override;

  // Gives |ti| a writer for the instance of |generation| in |slot|; leaves
  // ti->generation 0 if that instance is gone already.
  void CreateWriter(DataSourceThreadInstance* ti,
                    uint32_t slot,
                    uint64_t generation);

  // Waits for the threads inside a Trace() of |slot| (S2), destroys the
  // app's object, frees the slot and acks.
  void CompleteStop(uint32_t slot,
                    const std::shared_ptr<Instance>& instance,
                    const std::function<void()>& ack);

  DataSourceStats stats() const;
  void Count(std::atomic<uint64_t>* counter, uint64_t n = 1) {
    counter->fetch_add(n, std::memory_order_relaxed);  // statistics
  }

  // Counters (relaxed: statistics).
  std::atomic<uint64_t> started_{0};
  std::atomic<uint64_t> stopped_{0};
  std::atomic<uint64_t> start_failures_{0};
  std::atomic<uint64_t> without_writer_{0};
  std::atomic<uint64_t> nested_{0};
  std::atomic<uint64_t> resets_{0};
  std::atomic<uint64_t> config_errors_{0};

 private:
  // The stop of |instance_id| was asked for (by the service or the end of
  // the connection): OnStop, then the completion, now or deferred.
  void Stop(uint32_t instance_id, std::function<void()> ack);
  // Called by the stop's closure: S1, then CompleteStop here, at the end of
  // this thread's Trace(), or after OnStop returned.
  void FinishStop(uint32_t slot,
                  uint64_t generation,
                  const std::function<void()>& ack);

  DataSourceTypeState* const state_;
  const uint32_t index_;
  const std::string name_;
  const uint32_t config_field_;
  const std::function<std::unique_ptr<DataSourceBase>()> factory_;
  const bool has_incremental_state_;

  // The generation of the instance running in each slot, 0 when none:
  // stored (seq_cst, mutex_ held) by OnStart and FinishStop (S1).
  std::atomic<uint64_t> slot_generation_[kMaxDataSourceInstances] = {};
  std::atomic<uint64_t> stops_{0};

  std::mutex mutex_;
  std::shared_ptr<Instance> slots_[kMaxDataSourceInstances];  // mutex_
  // The started instances whose stop was not asked for yet: id -> slot.
  std::map<uint32_t, uint32_t> ids_;  // mutex_
  uint64_t last_generation_ = 0;      // mutex_
};

void TypeImpl::OnStart(const DataSourceInstanceConfig& config) {
  auto instance = std::make_shared<Instance>();
  instance->instance_id = config.instance_id;
  instance->target_buffer = config.target_buffer;
  instance->clear_period_ns = uint64_t{config.clear_period_ms} * 1000000u;
  if (config.producer)
    instance->producer = config.producer->weak_from_this();
  instance->shared = std::make_shared<DataSourceInstanceShared>();
  uint32_t slot = 0;
  bool clash = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    clash = ids_.count(config.instance_id) != 0;
    while (slot < kMaxDataSourceInstances && slots_[slot])
      slot++;
    if (!clash && slot < kMaxDataSourceInstances) {
      instance->generation = ++last_generation_;
      slots_[slot] = instance;  // reserved; Trace() waits for the generation
      ids_[config.instance_id] = slot;
    }
  }
  if (clash || slot == kMaxDataSourceInstances) {
    Count(&start_failures_);
    RT_ELOG(
        "ringtrace: data source '%s': instance %u not started (%s); its "
        "session gets no data from it",
        name_.c_str(), config.instance_id,
        clash ? "its id is running already" : "all instance slots are in use");
    return;
  }
  // The app's code runs outside mutex_.
  instance->shared->object = factory_();
  DataSourceBase::SetupArgs setup;
  setup.instance_index = slot;
  setup.config = &config;
  std::string own_config;
  if (config_field_ != 0 &&
      !ReadOwnConfig(config.config, config_field_, &own_config)) {
    Count(&config_errors_);
    RT_ELOG(
        "ringtrace: data source '%s': instance %u: the DataSourceConfig "
        "bytes are malformed or field %u is not a message; own_config is "
        "empty",
        name_.c_str(), config.instance_id, config_field_);
    own_config.clear();
  }
  setup.own_config = own_config;
  {
    std::lock_guard<std::recursive_mutex> lock(instance->shared->mutex);
    instance->shared->object->OnSetup(setup);
  }
  // Once per process, before a Trace() can see the enabled bit: from then
  // on W1's fence is a compiler barrier where membarrier(2) is available.
  base::EnableAsymmetricFences();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Before the enabled bit: a Trace() that sees the bit finds the
    // generation (or sees 0 a little longer and writes nothing).
    slot_generation_[slot].store(instance->generation,
                                 std::memory_order_seq_cst);
    // release: pairs with the acquire load in DataSource<T>::Trace(), which
    // then sees the type's impl.
    state_->enabled.fetch_or(1u << slot, std::memory_order_release);
  }
  Count(&started_);
  DataSourceBase::StartArgs start;
  start.instance_index = slot;
  std::lock_guard<std::recursive_mutex> lock(instance->shared->mutex);
  instance->shared->object->OnStart(start);
}

void TypeImpl::OnStop(uint32_t instance_id) {
  // The connection ended or the Producer stopped: nobody to ack.
  Stop(instance_id, [] {});
}

void TypeImpl::OnStopRequested(uint32_t instance_id,
                               std::function<void()> ack) {
  Stop(instance_id, std::move(ack));
}

void TypeImpl::Stop(uint32_t instance_id, std::function<void()> ack) {
  std::shared_ptr<Instance> instance;
  uint32_t slot = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = ids_.find(instance_id);
    if (it != ids_.end()) {
      slot = it->second;
      instance = slots_[slot];
      ids_.erase(it);
      instance->in_stop_callback = true;
    }
  }
  if (!instance) {
    ack();  // its start failed: nothing runs
    return;
  }
  bool async = false;
  const uint64_t generation = instance->generation;
  DataSourceBase::StopArgs args;
  DataSourceStopper::Prepare(
      &args, slot, &async,
      [this, slot, generation, ack] { FinishStop(slot, generation, ack); });
  {
    std::lock_guard<std::recursive_mutex> lock(instance->shared->mutex);
    instance->shared->object->OnStop(args);
  }
  bool complete = !async;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    instance->in_stop_callback = false;
    complete = complete || instance->complete_after_callback;
  }
  if (complete)
    FinishStop(slot, generation, ack);
}

void TypeImpl::FinishStop(uint32_t slot,
                          uint64_t generation,
                          const std::function<void()>& ack) {
  std::shared_ptr<Instance> instance;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    instance = slots_[slot];
    if (!instance || instance->generation != generation || instance->finishing)
      return;  // completed already (a second call)
    if (instance->in_stop_callback) {
      instance->complete_after_callback = true;  // Stop() completes it
      return;
    }
    instance->finishing = true;
    // S1.
    slot_generation_[slot].store(0, std::memory_order_seq_cst);
    // relaxed: the bit is a hint (see DataSourceTypeState::enabled).
    state_->enabled.fetch_and(~(1u << slot), std::memory_order_relaxed);
    stops_.fetch_add(1, std::memory_order_relaxed);
  }
  // Inside a Trace() on this thread: S2 would wait for this very thread
  // (same type) or hold the thread list's mutex that another stop's S2
  // holds while it waits for this thread (another type); the rest runs
  // when the thread's outermost Trace() ends.
  ThreadState* thread = t_state;
  if (thread && thread->depth != 0) {
    thread->after_trace.push_back(
        [this, slot, instance, ack] { CompleteStop(slot, instance, ack); });
    return;
  }
  CompleteStop(slot, instance, ack);
}

void TypeImpl::CompleteStop(uint32_t slot,
                            const std::shared_ptr<Instance>& instance,
                            const std::function<void()>& ack) {
  const uint32_t bit = 1u << slot;
  // After S1 (on this thread, or on another before it queued this call):
  // every thread's W0 and W1 before its W2 is visible to S2, or its W2
  // sees S1 (see the file comment).
  base::AsymmetricHeavyFence();
  // S2. mutex_ is not held: a thread inside a Trace() may need it to
  // create its writer.
  {
    ThreadList& list = GetThreadList();
    std::lock_guard<std::mutex> lock(list.mutex);
    for (ThreadState* thread : list.states) {
      TypeThreadState* state =
          thread->types[index_].load(std::memory_order_seq_cst);
      if (!state)
        continue;
      for (uint32_t spins = 0;
           state->in_trace.load(std::memory_order_seq_cst) & bit; spins++) {
        if (spins < 100) {
          sched_yield();
        } else {
          const struct timespec pause = {0, 50 * 1000};
          nanosleep(&pause, nullptr);
        }
      }
    }
  }
  {
    std::lock_guard<std::recursive_mutex> lock(instance->shared->mutex);
    instance->shared->object.reset();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (slots_[slot] == instance)
      slots_[slot].reset();
  }
  Count(&stopped_);
  ack();
}

void TypeImpl::OnFlush(uint32_t flush_id) {
  std::vector<std::pair<uint32_t, std::shared_ptr<Instance>>> running;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (uint32_t slot = 0; slot < kMaxDataSourceInstances; slot++) {
      if (slots_[slot] && !slots_[slot]->finishing &&
          slot_generation_[slot].load(std::memory_order_relaxed) != 0) {
        running.emplace_back(slot, slots_[slot]);
      }
    }
  }
  for (const auto& [slot, instance] : running) {
    DataSourceBase::FlushArgs args;
    args.instance_index = slot;
    args.flush_id = flush_id;
    std::lock_guard<std::recursive_mutex> lock(instance->shared->mutex);
    if (instance->shared->object)
      instance->shared->object->OnFlush(args);
  }
}

void TypeImpl::CreateWriter(DataSourceThreadInstance* ti,
                            uint32_t slot,
                            uint64_t generation) {
  std::shared_ptr<Instance> instance;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    instance = slots_[slot];
  }
  if (!instance || instance->generation != generation)
    return;  // stopped (and maybe restarted) since W2
  ti->generation = generation;
  ti->instance = instance->shared;
  ti->clear_period_ns = instance->clear_period_ns;
  std::shared_ptr<Producer> producer = instance->producer.lock();
  if (!producer)
    return;  // counted per call
  base::Status status;
  ti->writer = producer->NewTraceWriter(instance->target_buffer, &status);
  if (!ti->writer) {
    RT_ELOG("ringtrace: data source '%s': no writer: %s", name_.c_str(),
            status.message().c_str());
    return;
  }
  ti->incremental_state_cleared = true;
  ti->loss_events_seen = ti->writer->loss_events();
  ti->last_reset_ns = has_incremental_state_ ? base::MonotonicNs() : 0;
}

DataSourceStats TypeImpl::stats() const {
  // relaxed: statistics.
  DataSourceStats s;
  s.instances_started = started_.load(std::memory_order_relaxed);
  s.instances_stopped = stopped_.load(std::memory_order_relaxed);
  s.start_failures = start_failures_.load(std::memory_order_relaxed);
  s.trace_calls_without_writer =
      without_writer_.load(std::memory_order_relaxed);
  s.nested_trace_calls = nested_.load(std::memory_order_relaxed);
  s.incremental_state_resets = resets_.load(std::memory_order_relaxed);
  s.config_errors = config_errors_.load(std::memory_order_relaxed);
  return s;
}

// The registered types, by index.
struct TypeRegistry {
  std::mutex mutex;
  uint32_t count = 0;  // guarded by mutex
};
TypeRegistry& GetTypeRegistry() {
  static TypeRegistry* registry = new TypeRegistry();  // never destroyed
  return *registry;
}

TypeImpl* TypeOf(const DataSourceTypeState* type) {
  // acquire: pairs with the release store in RegisterDataSourceType().
  return static_cast<TypeImpl*>(type->impl.load(std::memory_order_acquire));
}

void ReleaseStaleWriters(TypeImpl* impl, TypeThreadState* state) {
  for (uint32_t slot = 0; slot < kMaxDataSourceInstances; slot++) {
    DataSourceThreadInstance& ti = state->instances[slot];
    // A relaxed look would do (a writer wrongly kept is caught at its next
    // use); SlotGeneration is the one accessor.
    if (ti.generation != 0 && impl->SlotGeneration(slot) != ti.generation)
      ReleaseThreadInstance(&ti);
  }
}

// Resets the incremental state if the sequence lost a packet or the clear
// period passed.
void MaybeResetIncrementalState(TypeImpl* impl, DataSourceThreadInstance* ti) {
  const uint64_t losses = ti->writer->loss_events();
  bool due = losses != ti->loss_events_seen;
  uint64_t now = 0;
  if (ti->clear_period_ns != 0) {
    now = base::MonotonicNs();
    due = due || now - ti->last_reset_ns >= ti->clear_period_ns;
  }
  if (RT_LIKELY(!due))
    return;
  ResetIncrementalState(ti);
  ti->loss_events_seen = losses;
  ti->last_reset_ns = now != 0 ? now : base::MonotonicNs();
  impl->Count(&impl->resets_);
}

}  // namespace

void ResetIncrementalState(DataSourceThreadInstance* ti) {
  if (ti->incremental_state) {
    ti->delete_incremental_state(ti->incremental_state);
    ti->incremental_state = nullptr;
  }
  ti->incremental_state_cleared = true;
}

base::Status RegisterDataSourceType(
    DataSourceTypeState* type,
    Tracing* tracing,
    const DataSourceDescriptor& descriptor,
    std::function<std::unique_ptr<DataSourceBase>()> factory,
    bool has_incremental_state) {
  if (!tracing)
    return base::ErrStatus("data source '%s': no Tracing",
                           descriptor.name.c_str());
  // Checked before the type is created: a type keeps its first descriptor.
  if (!ipc::IsValidDataSourceName(descriptor.name)) {
    return base::ErrStatus(
        "invalid data source name '%s' (1..%zu printable ASCII characters)",
        descriptor.name.c_str(), ipc::kMaxDataSourceNameSize);
  }
  if (descriptor.config_field != 0 &&
      (descriptor.config_field < 100 ||
       descriptor.config_field > encoding::kMaxFieldId ||
       (descriptor.config_field >= 19000 &&
        descriptor.config_field <= 19999))) {
    return base::ErrStatus(
        "data source '%s': config_field %u: DataSourceConfig fields below "
        "100 are the service's; use 100..%u (not 19000..19999)",
        descriptor.name.c_str(), descriptor.config_field,
        encoding::kMaxFieldId);
  }
  TypeImpl* impl = nullptr;
  {
    TypeRegistry& registry = GetTypeRegistry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    // Relaxed: written only here, under the registry's mutex.
    if (void* existing = type->impl.load(std::memory_order_relaxed)) {
      // The same type again, for another Tracing (one that replaced a
      // destroyed one): the same descriptor.
      impl = static_cast<TypeImpl*>(existing);
      if (!impl->Describes(descriptor)) {
        return base::ErrStatus(
            "data source '%s': this DataSource type is registered already "
            "under another descriptor",
            descriptor.name.c_str());
      }
      return tracing->RegisterDataSource(descriptor.name, impl);
    }
    if (registry.count == kMaxDataSourceTypes) {
      return base::ErrStatus("data source '%s': more than %u data source types",
                             descriptor.name.c_str(), kMaxDataSourceTypes);
    }
    // Never destroyed: threads may trace while the process exits.
    impl = new TypeImpl(type, registry.count++, descriptor, std::move(factory),
                        has_incremental_state);
    // release: pairs with the acquire loads of TypeOf() (and, through the
    // handler's registration and OnStart's release RMW of |enabled|, with
    // Trace()'s acquire load).
    type->impl.store(impl, std::memory_order_release);
  }
  return tracing->RegisterDataSource(descriptor.name, impl);
}

TraceScope::TraceScope(DataSourceTypeState* type, uint32_t mask) : type_(type) {
  TypeImpl* impl = TypeOf(type);
  ThreadState* thread = GetOrCreateThreadState();
  if (RT_UNLIKELY(!thread)) {
    impl->Count(&impl->without_writer_,
                static_cast<uint64_t>(__builtin_popcount(mask)));
    return;
  }
  // Relaxed: only this thread stores its slot.
  TypeThreadState* state =
      thread->types[impl->index()].load(std::memory_order_relaxed);
  if (RT_UNLIKELY(!state)) {
    state = new TypeThreadState();
    // W0.
    thread->types[impl->index()].store(state, std::memory_order_seq_cst);
  }
  // Relaxed: only this thread stores in_trace.
  if (RT_UNLIKELY(state->in_trace.load(std::memory_order_relaxed) != 0)) {
    impl->Count(&impl->nested_,
                static_cast<uint64_t>(__builtin_popcount(mask)));
    return;
  }
  // Writers are released outside of any Trace() (see the file comment).
  const uint64_t stops = impl->stops();
  if (RT_UNLIKELY(stops != state->stops_seen) && thread->depth == 0) {
    state->stops_seen = stops;
    ReleaseStaleWriters(impl, state);
  }
  // W1, then the light side of the asymmetric fence whose heavy side is
  // CompleteStop's, between S1 and S2 (see the file comment).
  state->in_trace.store(mask & kAllSlots, std::memory_order_relaxed);
  base::AsymmetricLightFence();
  thread->depth++;
  thread_ = state;
  pending_ = mask & kAllSlots;
}

TraceScope::~TraceScope() {
  auto* state = static_cast<TypeThreadState*>(thread_);
  if (!state)
    return;
  // W3: pairs with FinishStop's seq_cst load (S2), which then knows this
  // call's writes are done.
  state->in_trace.store(0, std::memory_order_release);
  ThreadState* thread = t_state;
  if (--thread->depth != 0)
    return;
  if (RT_UNLIKELY(!thread->after_trace.empty())) {
    std::vector<std::function<void()>> completions;
    completions.swap(thread->after_trace);
    for (const std::function<void()>& complete : completions)
      complete();
  }
  if (RT_UNLIKELY(!thread->retired.empty())) {
    std::vector<DataSourceThreadInstance> retired;
    retired.swap(thread->retired);
    for (DataSourceThreadInstance& ti : retired)
      ReleaseThreadInstance(&ti);
  }
}

DataSourceThreadInstance* TraceScope::Next() {
  TypeImpl* impl = TypeOf(type_);
  auto* state = static_cast<TypeThreadState*>(thread_);
  while (pending_ != 0) {
    const uint32_t slot = static_cast<uint32_t>(__builtin_ctz(pending_));
    pending_ &= pending_ - 1;
    // W2.
    const uint64_t generation = impl->SlotGeneration(slot);
    if (generation == 0)
      continue;
    DataSourceThreadInstance& ti = state->instances[slot];
    if (ti.generation != generation) {
      if (ti.generation != 0) {
        // Released when the outermost Trace() ends. The moved-from raw
        // incremental-state pointer goes with it: |ti| starts anew.
        t_state->retired.push_back(std::move(ti));
        ti = DataSourceThreadInstance();
      }
      impl->CreateWriter(&ti, slot, generation);
      if (ti.generation != generation)
        continue;  // stopped meanwhile
    }
    if (RT_UNLIKELY(!ti.writer)) {
      impl->Count(&impl->without_writer_);
      continue;
    }
    if (impl->has_incremental_state())
      MaybeResetIncrementalState(impl, &ti);
    index_ = slot;
    return &ti;
  }
  return nullptr;
}

DataSourceStats GetDataSourceStats(const DataSourceTypeState* type) {
  const TypeImpl* impl = TypeOf(type);
  return impl ? impl->stats() : DataSourceStats();
}

}  // namespace internal
}  // namespace ringtrace
