/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/track_event.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "src/base/current_pid.h"
#include "src/base/hash.h"
#include "src/base/time.h"
#include "src/base/trace_clock.h"
#include "src/tracing/track_event/track_event_internal.h"

namespace ringtrace {
namespace track_event {

namespace {

// The sequence's incremental clock: Perfetto's clock ids 64-127 are clocks
// of the packet sequence that snapshots them (ClockSnapshot in
// protos/perfetto/trace/trace_packet.proto); 64 is the first.
constexpr uint32_t kIncrementalClockId = 64;

namespace rt = perfetto::protos::rtzero;

constexpr char kEnvVar[] = "RT_TRACE_CATEGORIES";
constexpr uint64_t kLow62 = (uint64_t{1} << 62) - 1;

using base::Mix64;
using internal::GetRegistry;
using internal::Registry;

// Statistics (TrackEventStats). Relaxed: each is a counter read alone.
std::atomic<uint64_t> g_events_without_writer{0};
std::atomic<uint64_t> g_instance_writers_created{0};
std::atomic<uint64_t> g_instance_writers_released{0};

// Guarded by the registry's mutex.
IncrementalStateConfig g_incremental_state_config;
std::string* g_process_name = nullptr;  // null: the kernel's short name

std::string GetProcessName() {
  std::lock_guard<std::mutex> lock(internal::GetRegistry().mutex);
  return g_process_name ? *g_process_name
                        : std::string(program_invocation_short_name);
}

// Does |term| (a name, "*" or "prefix*") match |name|?
bool Matches(std::string_view term, std::string_view name) {
  if (!term.empty() && term.back() == '*') {
    const std::string_view prefix = term.substr(0, term.size() - 1);
    return name.substr(0, prefix.size()) == prefix;
  }
  return term == name;
}

// Calls |fn(term, enable)| for each term of |spec|, in order.
template <typename Fn>
void ForEachTerm(std::string_view spec, Fn fn) {
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    std::string_view term = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view()
                                           : spec.substr(comma + 1);
    while (!term.empty() && term.front() == ' ')
      term.remove_prefix(1);
    while (!term.empty() && term.back() == ' ')
      term.remove_suffix(1);
    bool enable = true;
    if (!term.empty() && term.front() == '-') {
      enable = false;
      term.remove_prefix(1);
    }
    if (!term.empty())
      fn(term, enable);
  }
}

size_t ApplyTermLocked(
    const std::vector<const internal::CategoryTable*>& tables,
    std::string_view term,
    bool enable) {
  size_t matches = 0;
  for (const internal::CategoryTable* table : tables) {
    for (size_t i = 0; i < table->count; i++) {
      if (Matches(term, table->categories[i].name())) {
        // Relaxed: pairs with the macros' relaxed load; publishes no data.
        // An RMW, because the instance bits change concurrently.
        if (enable)
          table->masks[i].fetch_or(kStaticBit, std::memory_order_relaxed);
        else
          table->masks[i].fetch_and(~kStaticBit, std::memory_order_relaxed);
        matches++;
      }
    }
  }
  return matches;
}

size_t ApplySpecLocked(
    const std::vector<const internal::CategoryTable*>& tables,
    std::string_view spec) {
  size_t matches = 0;
  ForEachTerm(spec, [&](std::string_view term, bool enable) {
    matches += ApplyTermLocked(tables, term, enable);
  });
  return matches;
}

// Appends |spec|'s terms to |terms| (the registry's static_terms). A term
// decides bit 0 for the same names wherever it comes, so an earlier equal
// term (either sign) is dropped, and "*" drops everything before it: the
// list stays as long as the number of distinct terms used.
void RecordSpecLocked(std::vector<std::pair<std::string, bool>>* terms,
                      std::string_view spec) {
  ForEachTerm(spec, [terms](std::string_view term, bool enable) {
    if (term == "*") {
      terms->clear();
    } else {
      terms->erase(
          std::remove_if(terms->begin(), terms->end(),
                         [term](const auto& t) { return t.first == term; }),
          terms->end());
    }
    terms->emplace_back(std::string(term), enable);
  });
}

int64_t GetTid() {
  return static_cast<int64_t>(syscall(SYS_gettid));
}

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace

namespace internal {

Registry& GetRegistry() {
  static Registry* registry = [] {
    auto* r = new Registry();  // never destroyed
    const char* env = getenv(kEnvVar);
    if (env)
      RecordSpecLocked(&r->static_terms, env);
    return r;
  }();
  return *registry;
}

void CountEventsWithoutWriter(uint64_t n) {
  g_events_without_writer.fetch_add(n, std::memory_order_relaxed);
}
void CountInstanceWriterCreated() {
  g_instance_writers_created.fetch_add(1, std::memory_order_relaxed);
}
void CountInstanceWriterReleased() {
  g_instance_writers_released.fetch_add(1, std::memory_order_relaxed);
}

__thread TrackEventSequence* t_bound_sequence = nullptr;

CategoryTable::CategoryTable(const Category* categories_in,
                             std::atomic<uint32_t>* masks_in,
                             size_t count_in)
    : categories(categories_in),
      masks(masks_in),
      count(count_in),
      declared(true) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.tables.push_back(this);
  const char* env = getenv(kEnvVar);
  if (env)
    ApplySpecLocked({this}, env);
  ApplyInstancesLocked(this);
}

CategoryTable::CategoryTable(const Category* categories_in,
                             std::atomic<uint32_t>* masks_in,
                             size_t count_in,
                             Dynamic)
    : categories(categories_in),
      masks(masks_in),
      count(count_in),
      declared(false) {}

namespace {

// One dynamic category: a table of one, registered like the declared ones
// (so SetCategoriesEnabled, StartInstance and StopInstance reach it).
// Never destroyed.
struct DynamicEntry {
  explicit DynamicEntry(std::string_view n)
      : name(n),
        category(name.c_str()),
        table(&category, &mask, 1, CategoryTable::Dynamic()) {}
  const std::string name;
  const Category category;  // no description, no tags
  std::atomic<uint32_t> mask{0};
  const CategoryTable table;
};

// Guarded by the registry mutex.
std::map<std::string, DynamicEntry*, std::less<>>* g_dynamic = nullptr;

// This thread's view of the names it used (std::less<>: looked up by
// string_view without a copy).
thread_local std::map<std::string, DynamicEntry*, std::less<>> t_dynamic;

DynamicEntry* FindOrRegisterDynamic(std::string_view name) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (!g_dynamic)
    g_dynamic = new std::map<std::string, DynamicEntry*, std::less<>>();
  auto it = g_dynamic->find(name);
  if (it != g_dynamic->end())
    return it->second;
  auto* entry = new DynamicEntry(name);
  g_dynamic->emplace(std::string(name), entry);
  for (const auto& [term, enable] : registry.static_terms)
    ApplyTermLocked({&entry->table}, term, enable);
  ApplyInstancesLocked(&entry->table);
  registry.tables.push_back(&entry->table);
  return entry;
}

}  // namespace

DynamicCategory GetDynamicCategory(std::string_view name) {
  DynamicEntry* entry;
  auto it = t_dynamic.find(name);
  if (RT_LIKELY(it != t_dynamic.end())) {
    entry = it->second;
  } else {
    entry = FindOrRegisterDynamic(name);
    t_dynamic.emplace(std::string(name), entry);
  }
  DynamicCategory category;
  category.registered = entry->category.name();
  // Relaxed: as the declared categories' masks.
  category.mask = entry->mask.load(std::memory_order_relaxed);
  return category;
}

void EndSlice(SliceTargets begun) {
  EventTargets targets(begun.mask, /*create=*/false, begun.generation_limit);
  while (TrackEventSequence* sequence = targets.Next()) {
    WriteEvent(sequence, targets.Now(), rt::TrackEvent::Type::TYPE_SLICE_END,
               Track(), nullptr, nullptr);
  }
}

void EndSlice(TrackSliceTargets begun) {
  // A scoped slice ends on the thread it began on, on its track.
  EventTargets targets(begun.mask, /*create=*/false, begun.generation_limit);
  while (TrackEventSequence* sequence = targets.Next()) {
    WriteEvent(sequence, targets.Now(), rt::TrackEvent::Type::TYPE_SLICE_END,
               begun.track, nullptr, nullptr);
  }
}

void WriteSliceEnd(uint32_t mask) {
  EventTargets targets(mask, /*create=*/false);
  while (TrackEventSequence* sequence = targets.Next()) {
    WriteEvent(sequence, targets.Now(), rt::TrackEvent::Type::TYPE_SLICE_END,
               Track(), nullptr, nullptr);
  }
}

void WriteSliceEnd(uint32_t mask, const Track& track) {
  // The begin may have been written by another thread: this thread gets
  // its writers as for any event.
  EventTargets targets(mask);
  while (TrackEventSequence* sequence = targets.Next()) {
    WriteEvent(sequence, targets.Now(), rt::TrackEvent::Type::TYPE_SLICE_END,
               track, nullptr, nullptr);
  }
}

namespace {
uint64_t EnsureCounterUuid(TrackEventSequence* sequence,
                           NameRef name,
                           uint64_t now) {
  return sequence->EnsureNamedCounterTrack(name, now);
}
uint64_t EnsureCounterUuid(TrackEventSequence* sequence,
                           const CounterTrack& track,
                           uint64_t now) {
  return sequence->EnsureCounterTrack(track, now);
}

// |track|: a counter's name (NameRef) or a CounterTrack.
template <typename Track, typename T>
void WriteCounterImpl(TrackEventSequence* sequence,
                      uint64_t now,
                      NameRef category,
                      const Track& track,
                      T value) {
  if (RT_UNLIKELY(!sequence->MaybeClear(now)))
    return;  // the clear's lost packet is the event's counted loss
  const uint64_t uuid = EnsureCounterUuid(sequence, track, now);
  if (RT_UNLIKELY(uuid == 0))
    return;  // as above, its lost descriptor
  const uint64_t category_iid = sequence->InternCategory(category);
  auto handle = sequence->writer()->NewTracePacket();
  rt::TracePacket packet(handle);
  sequence->WriteEventPrologue(packet, now);
  rt::TrackEvent event = packet.set_track_event();
  event.set_type(rt::TrackEvent::Type::TYPE_COUNTER);
  event.set_track_uuid(uuid);
  event.add_category_iids(category_iid);
  if constexpr (std::is_floating_point<T>::value)
    event.set_double_counter_value(value);
  else
    event.set_counter_value(value);
}
// One counter value into every target of |mask|.
template <typename Track, typename T>
void WriteCounterToTargets(uint32_t mask,
                           NameRef category,
                           const Track& track,
                           T value) {
  EventTargets targets(mask);
  while (TrackEventSequence* sequence = targets.Next())
    WriteCounterImpl(sequence, targets.Now(), category, track, value);
}
}  // namespace

void WriteCounter(uint32_t mask,
                  NameRef category,
                  NameRef name,
                  int64_t value) {
  WriteCounterToTargets(mask, category, name, value);
}
void WriteCounter(uint32_t mask, NameRef category, NameRef name, double value) {
  WriteCounterToTargets(mask, category, name, value);
}
void WriteCounter(uint32_t mask,
                  NameRef category,
                  const CounterTrack& track,
                  int64_t value) {
  WriteCounterToTargets(mask, category, track, value);
}
void WriteCounter(uint32_t mask,
                  NameRef category,
                  const CounterTrack& track,
                  double value) {
  WriteCounterToTargets(mask, category, track, value);
}

}  // namespace internal

size_t SetCategoriesEnabled(std::string_view spec) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  RecordSpecLocked(&registry.static_terms, spec);
  return ApplySpecLocked(registry.tables, spec);
}

size_t ApplyCategoriesFromEnvironment() {
  const char* env = getenv(kEnvVar);
  return env ? SetCategoriesEnabled(env) : 0;
}

uint32_t CategoryMask(std::string_view name) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (const internal::CategoryTable* table : registry.tables) {
    for (size_t i = 0; i < table->count; i++) {
      if (name == table->categories[i].name())
        return table->masks[i].load(std::memory_order_relaxed);
    }
  }
  return 0;
}

bool IsCategoryEnabled(std::string_view name) {
  return CategoryMask(name) != 0;
}

TrackEventStats Stats() {
  TrackEventStats stats;
  stats.events_without_writer =
      g_events_without_writer.load(std::memory_order_relaxed);
  stats.instance_writers_created =
      g_instance_writers_created.load(std::memory_order_relaxed);
  stats.instance_writers_released =
      g_instance_writers_released.load(std::memory_order_relaxed);
  return stats;
}

uint64_t ProcessTrackUuid() {
  return (uint64_t{1} << 62) | static_cast<uint32_t>(base::CurrentPid());
}

uint64_t ThreadTrackUuid(int64_t tid) {
  return (uint64_t{2} << 62) |
         (static_cast<uint64_t>(static_cast<uint32_t>(base::CurrentPid()))
          << 30) |
         (static_cast<uint64_t>(tid) & ((uint64_t{1} << 30) - 1));
}

namespace {
uint64_t CounterTrackUuidForPid(std::string_view name, int32_t pid) {
  const uint64_t p = static_cast<uint32_t>(pid);
  return (uint64_t{3} << 62) |
         ((Fnv1a(name) ^ (p * 0x9e3779b97f4a7c15ull)) & kLow62);
}
}  // namespace

uint64_t CounterTrackUuid(std::string_view name) {
  return CounterTrackUuidForPid(name, base::CurrentPid());
}

uint64_t GlobalCounterTrackUuid(std::string_view name) {
  // Tag 0 (as Named() tracks), mixed with a constant of its own so that a
  // global counter track and a Named() track of one name differ.
  const uint64_t uuid = Mix64(Fnv1a(name) ^ 0x6c6f62616c636e74ull) & kLow62;
  return uuid != 0 ? uuid : 1;
}

Flow Flow::ProcessScoped(uint64_t id) {
  return Flow(Mix64(ProcessTrackUuid() ^ Mix64(id)));
}

namespace {
// Tag 0 in the top two bits: no process, thread or counter track has it.
// The constant keeps Track(id) apart from Named(name, id') of the same
// process (Named mixes a name hash where this mixes a constant).
uint64_t ScopedTrackUuid(uint64_t process_track_uuid, uint64_t id) {
  const uint64_t uuid =
      Mix64(process_track_uuid ^ Mix64(id ^ 0x7472616b2d696473ull)) & kLow62;
  return uuid != 0 ? uuid : 1;
}
}  // namespace

uint64_t ProcessScopedTrackUuid(uint64_t id) {
  return ScopedTrackUuid(ProcessTrackUuid(), id);
}

Track Track::Named(const char* name, uint64_t id) {
  // Tag 0 in the top two bits: no process, thread or counter track has it.
  const uint64_t uuid =
      Mix64(ProcessTrackUuid() ^ Mix64(Fnv1a(name ? name : "") ^ id)) & kLow62;
  return Track(uuid != 0 ? uuid : 1, name, Scope::kResolved);
}

uint64_t Track::uuid() const {
  return id_ == 0 ? 0 : UuidUnder(ProcessTrackUuid());
}

uint64_t Track::UuidUnder(uint64_t process_track_uuid) const {
  if (id_ == 0 || scope_ != Scope::kProcessId)
    return id_;
  return ScopedTrackUuid(process_track_uuid, id_);
}

uint64_t NowNs() {
  return base::TraceClockNs();
}

void SetIncrementalStateConfig(const IncrementalStateConfig& config) {
  std::lock_guard<std::mutex> lock(internal::GetRegistry().mutex);
  g_incremental_state_config = config;
}

void SetProcessName(std::string_view name) {
  std::lock_guard<std::mutex> lock(internal::GetRegistry().mutex);
  if (!g_process_name)
    g_process_name = new std::string();  // never destroyed, as the registry
  g_process_name->assign(name.data(), name.size());
}

IncrementalStateConfig GetIncrementalStateConfig() {
  std::lock_guard<std::mutex> lock(internal::GetRegistry().mutex);
  return g_incremental_state_config;
}

TrackEventSequence::TrackEventSequence(shm_ring::TraceWriterV2* writer,
                                       const IncrementalStateConfig& config,
                                       uint64_t now_ns)
    : writer_(writer),
      pid_(base::CurrentPid()),
      process_track_uuid_(ProcessTrackUuid()),
      config_(config),
      process_name_(GetProcessName()),
      period_ns_(config.period_ms != 0 ? uint64_t{config.period_ms} * 1000000u
                                       : UINT64_MAX) {
  RT_CHECK(writer != nullptr);
  tid_ = GetTid();
  thread_track_uuid_ = ThreadTrackUuid(tid_);
  prctl(PR_GET_NAME, thread_name_, 0, 0, 0);
  thread_name_[sizeof(thread_name_) - 1] = '\0';
  // A clear lost here (a full ring) is tried again at the first event.
  WriteDescriptors(now_ns != 0 ? now_ns : NowNs());
}

ScopedThreadWriter::ScopedThreadWriter(shm_ring::TraceWriterV2* writer)
    : TrackEventSequence(writer, GetIncrementalStateConfig()),
      previous_(Current()) {
  internal::t_bound_sequence = this;
}

ScopedThreadWriter::~ScopedThreadWriter() {
  // Destroyed on its thread, innermost first.
  RT_CHECK(internal::t_bound_sequence == this);
  internal::t_bound_sequence = previous_;
  writer()->Flush();
}

void Flush() {
  for (ScopedThreadWriter* binding = ScopedThreadWriter::Current(); binding;
       binding = binding->previous_) {
    binding->writer()->Flush();
  }
  internal::FlushThreadInstanceWriters();
}

ScopedThreadWriter* ScopedThreadWriter::Current() {
  // Only a ScopedThreadWriter stores itself there.
  return static_cast<ScopedThreadWriter*>(internal::t_bound_sequence);
}

// A new incremental-state generation: the tables emptied, then its first
// packets (WriteClearPacket(), the process and thread descriptors), each
// written only if the one before it reached the ring.
bool TrackEventSequence::WriteDescriptors(uint64_t now_ns) {
  tracks_written_.clear();
  for (CounterSlot& slot : counter_cache_)
    slot = CounterSlot();
  for (InternTable* table : {&names_, &categories_, &arg_names_}) {
    for (InternTable::Slot& slot : table->cache)
      slot = InternTable::Slot();
    table->by_content.clear();
    table->pending.clear();
  }
  next_iid_ = 1;
  const uint64_t dropped_before = writer_->stats().packets_dropped;
  WriteClearPacket(now_ns);
  if (LostSince(dropped_before))
    return false;
  {
    auto handle = writer_->NewTracePacket();
    rt::TracePacket packet(handle);
    WritePacketPrologue(packet, now_ns);
    rt::TrackDescriptor track = packet.set_track_descriptor();
    track.set_uuid(process_track_uuid_);
    rt::ProcessDescriptor process = track.set_process();
    process.set_pid(pid_);
    process.set_process_name(process_name_);
  }
  if (LostSince(dropped_before))
    return false;
  {
    auto handle = writer_->NewTracePacket();
    rt::TracePacket packet(handle);
    WritePacketPrologue(packet, now_ns);
    rt::TrackDescriptor track = packet.set_track_descriptor();
    track.set_uuid(thread_track_uuid_);
    track.set_parent_uuid(process_track_uuid_);
    rt::ThreadDescriptor thread = track.set_thread();
    thread.set_pid(pid_);
    thread.set_tid(tid_);
    thread.set_thread_name(thread_name_);
  }
  if (LostSince(dropped_before))
    return false;
  const shm_ring::TraceWriterV2Stats stats = writer_->stats();
  last_clear_ns_ = now_ns;
  bytes_at_clear_ = stats.bytes_written + stats.bytes_dropped;
  if (config_.period_bytes != 0)
    ScheduleBytesCheck(config_.period_bytes);
  else
    bytes_check_countdown_ = kBytesCheckEvents;  // the trigger is off
  loss_events_seen_ = writer_->loss_events();
  clears_++;
  return true;
}

bool TrackEventSequence::LostSince(uint64_t dropped_before) const {
  // Each packet is finished here, so a loss of any part of it is counted.
  RT_DCHECK(!writer_->packet_open());
  return writer_->stats().packets_dropped != dropped_before;
}

// The generation's first packet, SEQ_INCREMENTAL_STATE_CLEARED, at
// |now_ns| on CLOCK_BOOTTIME: the defaults of the sequence's packets (the
// incremental clock; the thread track for events that name no track) and
// the snapshot that starts the incremental clock at |now_ns|.
void TrackEventSequence::WriteClearPacket(uint64_t now_ns) {
  constexpr uint32_t kBootTime =
      static_cast<uint32_t>(rt::BuiltinClock::BUILTIN_CLOCK_BOOTTIME);
  auto handle = writer_->NewTracePacket();
  rt::TracePacket packet(handle);
  packet.set_timestamp(now_ns);
  packet.set_timestamp_clock_id(kBootTime);
  packet.set_sequence_flags(static_cast<uint32_t>(
      rt::TracePacket::SequenceFlags::SEQ_INCREMENTAL_STATE_CLEARED));
  rt::TracePacketDefaults defaults = packet.set_trace_packet_defaults();
  defaults.set_timestamp_clock_id(kIncrementalClockId);
  defaults.set_track_event_defaults().set_track_uuid(thread_track_uuid_);
  rt::ClockSnapshot snapshot = packet.set_clock_snapshot();
  rt::ClockSnapshot_Clock incremental = snapshot.add_clocks();
  incremental.set_clock_id(kIncrementalClockId);
  incremental.set_timestamp(now_ns);
  incremental.set_is_incremental(true);
  rt::ClockSnapshot_Clock boot = snapshot.add_clocks();
  boot.set_clock_id(kBootTime);
  boot.set_timestamp(now_ns);
  incremental_clock_ns_ = now_ns;
}

void TrackEventSequence::WriteAbsoluteTimestamp(rt::TracePacket packet,
                                                uint64_t now_ns) {
  // Before the clock's value (a timestamp read before one written
  // already): absolute, which leaves the incremental clock as it is.
  packet.set_timestamp(now_ns);
  packet.set_timestamp_clock_id(
      static_cast<uint32_t>(rt::BuiltinClock::BUILTIN_CLOCK_BOOTTIME));
}

bool TrackEventSequence::MaybeClearSlow(uint64_t now_ns) {
  const bool lost = writer_->loss_events() != loss_events_seen_;
  const bool period_due =
      now_ns > last_clear_ns_ && now_ns - last_clear_ns_ >= period_ns_;
  bool bytes_due = false;
  bytes_check_countdown_ = kBytesCheckEvents;
  if (config_.period_bytes != 0) {
    const shm_ring::TraceWriterV2Stats stats = writer_->stats();
    const uint64_t since_clear =
        stats.bytes_written + stats.bytes_dropped - bytes_at_clear_;
    bytes_due = since_clear >= config_.period_bytes;
    if (!bytes_due)
      ScheduleBytesCheck(config_.period_bytes - since_clear);
  }
  if (RT_UNLIKELY(lost || period_due || bytes_due))
    return WriteDescriptors(now_ns);
  return true;
}

void TrackEventSequence::ScheduleBytesCheck(uint64_t bytes_left) {
  // Events of up to kBytesPerEventAssumed bytes cannot pass the threshold
  // between two checks; larger ones pass it by less than kBytesCheckEvents
  // events.
  bytes_check_countdown_ = static_cast<uint32_t>(std::clamp<uint64_t>(
      bytes_left / kBytesPerEventAssumed, 1, kBytesCheckEvents));
}

uint64_t TrackEventSequence::InternSlow(InternTable* table,
                                        internal::NameRef s) {
  auto [it, inserted] = table->by_content.emplace(s.str(), next_iid_);
  if (inserted) {
    next_iid_++;
    table->pending.emplace_back(it->second, it->first.c_str());
  }
  if (s.stable())
    table->cache[CacheIndex(s.str())] = InternTable::Slot{s.str(), it->second};
  return it->second;
}

void TrackEventSequence::WriteInternedData(rt::TracePacket packet) {
  rt::InternedData interned = packet.set_interned_data();
  for (const auto& [iid, text] : categories_.pending) {
    rt::EventCategory c = interned.add_event_categories();
    c.set_iid(iid);
    c.set_name(text);
  }
  for (const auto& [iid, text] : names_.pending) {
    rt::EventName n = interned.add_event_names();
    n.set_iid(iid);
    n.set_name(text);
  }
  for (const auto& [iid, text] : arg_names_.pending) {
    rt::DebugAnnotationName n = interned.add_debug_annotation_names();
    n.set_iid(iid);
    n.set_name(text);
  }
  names_.pending.clear();
  categories_.pending.clear();
  arg_names_.pending.clear();
}

uint64_t TrackEventSequence::EnsureAppTrack(const Track& track,
                                            uint64_t now_ns) {
  const uint64_t uuid = track.UuidUnder(process_track_uuid_);
  if (RT_LIKELY(!tracks_written_.insert(uuid).second))
    return uuid;
  const uint64_t dropped_before = writer_->stats().packets_dropped;
  {
    auto handle = writer_->NewTracePacket();
    rt::TracePacket packet(handle);
    WritePacketPrologue(packet, now_ns);
    rt::TrackDescriptor descriptor = packet.set_track_descriptor();
    descriptor.set_uuid(uuid);
    if (!track.global())
      descriptor.set_parent_uuid(process_track_uuid_);
    if (track.name())
      descriptor.set_name(track.name());
  }
  // Lost: the next event clears (the loss), which writes it again.
  return LostSince(dropped_before) ? 0 : uuid;
}

uint64_t TrackEventSequence::EnsureCounterTrack(std::string_view name,
                                                uint64_t now_ns) {
  const uint64_t uuid = CounterTrackUuidForPid(name, pid_);
  if (RT_UNLIKELY(tracks_written_.insert(uuid).second)) {
    return WriteCounterDescriptor(uuid, name, /*global=*/false,
                                  CounterTrack::Unit::UNIT_UNSPECIFIED, now_ns)
               ? uuid
               : 0;
  }
  return uuid;
}

uint64_t TrackEventSequence::EnsureNamedCounterTrackSlow(internal::NameRef name,
                                                         uint64_t now_ns) {
  const uint64_t uuid = EnsureCounterTrack(
      std::string_view(name.str() ? name.str() : ""), now_ns);
  if (uuid != 0 && name.stable())
    counter_cache_[CounterCacheIndex(name.str())] =
        CounterSlot{name.str(), uuid};
  return uuid;
}

uint64_t TrackEventSequence::EnsureCounterTrack(const CounterTrack& track,
                                                uint64_t now_ns) {
  const std::string_view name(track.name() ? track.name() : "");
  const uint64_t uuid = track.global() ? GlobalCounterTrackUuid(name)
                                       : CounterTrackUuidForPid(name, pid_);
  if (RT_UNLIKELY(tracks_written_.insert(uuid).second)) {
    return WriteCounterDescriptor(uuid, name, track.global(), track.unit(),
                                  now_ns)
               ? uuid
               : 0;
  }
  return uuid;
}

bool TrackEventSequence::WriteCounterDescriptor(uint64_t uuid,
                                                std::string_view name,
                                                bool global,
                                                CounterTrack::Unit unit,
                                                uint64_t now_ns) {
  const uint64_t dropped_before = writer_->stats().packets_dropped;
  {
    auto handle = writer_->NewTracePacket();
    rt::TracePacket packet(handle);
    WritePacketPrologue(packet, now_ns);
    rt::TrackDescriptor track = packet.set_track_descriptor();
    track.set_uuid(uuid);
    if (!global)
      track.set_parent_uuid(process_track_uuid_);
    track.set_name(name);
    rt::CounterDescriptor counter = track.set_counter();
    if (unit != CounterTrack::Unit::UNIT_UNSPECIFIED)
      counter.set_unit(unit);
  }
  return !LostSince(dropped_before);
}

}  // namespace track_event
}  // namespace ringtrace
