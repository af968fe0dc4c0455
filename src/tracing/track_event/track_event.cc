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

#include <mutex>
#include <vector>

namespace ringtrace {
namespace track_event {

namespace {

namespace rt = perfetto::protos::rtzero;

constexpr char kEnvVar[] = "RT_TRACE_CATEGORIES";
constexpr uint64_t kLow62 = (uint64_t{1} << 62) - 1;

struct Registry {
  std::mutex mutex;
  std::vector<const internal::CategoryTable*> tables;  // guarded by mutex
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();  // never destroyed
  return *registry;
}

// Events dropped for want of a writer. Relaxed: a statistic, read alone.
std::atomic<uint64_t> g_events_without_writer{0};

thread_local ScopedThreadWriter* t_binding = nullptr;

// Does |term| (a name, "*" or "prefix*") match |name|?
bool Matches(std::string_view term, std::string_view name) {
  if (!term.empty() && term.back() == '*') {
    const std::string_view prefix = term.substr(0, term.size() - 1);
    return name.substr(0, prefix.size()) == prefix;
  }
  return term == name;
}

size_t ApplySpecLocked(
    const std::vector<const internal::CategoryTable*>& tables,
    std::string_view spec) {
  size_t matches = 0;
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
    if (term.empty())
      continue;
    for (const internal::CategoryTable* table : tables) {
      for (size_t i = 0; i < table->count; i++) {
        if (Matches(term, table->names[i])) {
          // Relaxed: pairs with the macros' relaxed load; publishes no data.
          table->enabled[i].store(enable, std::memory_order_relaxed);
          matches++;
        }
      }
    }
  }
  return matches;
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

CategoryTable::CategoryTable(const char* const* names_in,
                             std::atomic<bool>* enabled_in,
                             size_t count_in)
    : names(names_in), enabled(enabled_in), count(count_in) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.tables.push_back(this);
  const char* env = getenv(kEnvVar);
  if (env)
    ApplySpecLocked({this}, env);
}

ScopedThreadWriter* BindingOrCountDrop() {
  ScopedThreadWriter* binding = t_binding;
  if (RT_UNLIKELY(!binding))
    g_events_without_writer.fetch_add(1, std::memory_order_relaxed);
  return binding;
}

rt::TrackEvent BeginEvent(
    const shm_ring::TraceWriterV2::TracePacketHandle& handle,
    rt::TrackEvent::Type type,
    uint64_t track_uuid) {
  rt::TracePacket packet(handle);
  packet.set_timestamp(NowNs());
  rt::TrackEvent event = packet.set_track_event();
  event.set_type(type);
  event.set_track_uuid(track_uuid);
  return event;
}

void ScopedSlice::End() {
  const uint64_t track_uuid = track_uuid_;
  track_uuid_ = 0;
  ScopedThreadWriter* binding = BindingOrCountDrop();
  if (!binding)
    return;  // the binding went away inside the slice; counted
  auto handle = binding->writer()->NewTracePacket();
  BeginEvent(handle, rt::TrackEvent::Type::TYPE_SLICE_END, track_uuid);
}

namespace {
template <typename T>
void WriteCounterImpl(const char* category, const char* name, T value) {
  ScopedThreadWriter* binding = BindingOrCountDrop();
  if (!binding)
    return;
  const uint64_t uuid = binding->EnsureCounterTrack(name);
  auto handle = binding->writer()->NewTracePacket();
  rt::TrackEvent event =
      BeginEvent(handle, rt::TrackEvent::Type::TYPE_COUNTER, uuid);
  event.add_categories(category);
  if constexpr (std::is_floating_point<T>::value)
    event.set_double_counter_value(value);
  else
    event.set_counter_value(value);
}
}  // namespace

void WriteCounter(const char* category, const char* name, int64_t value) {
  WriteCounterImpl(category, name, value);
}
void WriteCounter(const char* category, const char* name, double value) {
  WriteCounterImpl(category, name, value);
}

}  // namespace internal

size_t SetCategoriesEnabled(std::string_view spec) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return ApplySpecLocked(registry.tables, spec);
}

size_t ApplyCategoriesFromEnvironment() {
  const char* env = getenv(kEnvVar);
  return env ? SetCategoriesEnabled(env) : 0;
}

bool IsCategoryEnabled(std::string_view name) {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (const internal::CategoryTable* table : registry.tables) {
    for (size_t i = 0; i < table->count; i++) {
      if (name == table->names[i])
        return table->enabled[i].load(std::memory_order_relaxed);
    }
  }
  return false;
}

TrackEventStats Stats() {
  TrackEventStats stats;
  stats.events_without_writer =
      g_events_without_writer.load(std::memory_order_relaxed);
  return stats;
}

uint64_t ProcessTrackUuid() {
  return (uint64_t{1} << 62) | static_cast<uint32_t>(getpid());
}

uint64_t ThreadTrackUuid(int64_t tid) {
  return (uint64_t{2} << 62) |
         (static_cast<uint64_t>(static_cast<uint32_t>(getpid())) << 30) |
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
  return CounterTrackUuidForPid(name, static_cast<int32_t>(getpid()));
}

uint64_t NowNs() {
  struct timespec ts = {};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

ScopedThreadWriter::ScopedThreadWriter(shm_ring::TraceWriterV2* writer)
    : writer_(writer),
      previous_(t_binding),
      pid_(static_cast<int32_t>(getpid())),
      process_track_uuid_(ProcessTrackUuid()) {
  RT_CHECK(writer != nullptr);
  const int64_t tid = GetTid();
  thread_track_uuid_ = ThreadTrackUuid(tid);
  char thread_name[17] = {};
  prctl(PR_GET_NAME, thread_name, 0, 0, 0);
  const uint64_t now = NowNs();
  {
    auto handle = writer_->NewTracePacket();
    rt::TracePacket packet(handle);
    packet.set_timestamp(now);
    packet.set_sequence_flags(static_cast<uint32_t>(
        rt::TracePacket::SequenceFlags::SEQ_INCREMENTAL_STATE_CLEARED));
    rt::TrackDescriptor track = packet.set_track_descriptor();
    track.set_uuid(process_track_uuid_);
    rt::ProcessDescriptor process = track.set_process();
    process.set_pid(pid_);
    process.set_process_name(program_invocation_short_name);
  }
  {
    auto handle = writer_->NewTracePacket();
    rt::TracePacket packet(handle);
    packet.set_timestamp(now);
    rt::TrackDescriptor track = packet.set_track_descriptor();
    track.set_uuid(thread_track_uuid_);
    track.set_parent_uuid(process_track_uuid_);
    rt::ThreadDescriptor thread = track.set_thread();
    thread.set_pid(pid_);
    thread.set_tid(tid);
    thread.set_thread_name(thread_name);
  }
  t_binding = this;
}

ScopedThreadWriter::~ScopedThreadWriter() {
  RT_CHECK(t_binding == this);  // destroyed on its thread, innermost first
  t_binding = previous_;
  writer_->Flush();
}

ScopedThreadWriter* ScopedThreadWriter::Current() {
  return t_binding;
}

uint64_t ScopedThreadWriter::EnsureCounterTrack(std::string_view name) {
  const uint64_t uuid = CounterTrackUuidForPid(name, pid_);
  if (!counter_tracks_.insert(uuid).second)
    return uuid;
  auto handle = writer_->NewTracePacket();
  rt::TracePacket packet(handle);
  packet.set_timestamp(NowNs());
  rt::TrackDescriptor track = packet.set_track_descriptor();
  track.set_uuid(uuid);
  track.set_parent_uuid(process_track_uuid_);
  track.set_name(name);
  track.set_counter();
  return uuid;
}

}  // namespace track_event
}  // namespace ringtrace
