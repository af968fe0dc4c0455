/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TrackEvent API: one line per event, Perfetto TrackEvent semantics and
// field numbers, written through the generated typed writers
// (protos/perfetto/trace/trace_packet.rtzero.h, docs/encoding.md).
//
//   // Once per program, at namespace scope, in a header every tracing file
//   // includes (it defines inline variables):
//   RT_DEFINE_CATEGORIES("gfx", "io");
//
//   // On each thread that traces, bind a writer (from Producer) for a scope:
//   auto writer = producer->NewTraceWriter();
//   ringtrace::track_event::ScopedThreadWriter bind(writer.get());
//
//   void Draw(int frame) {
//     RT_TRACE_EVENT("gfx", "Draw", "frame", frame);  // slice until scope end
//     RT_TRACE_COUNTER("io", "queue_depth", depth);   // int or double
//   }
//
// Categories. Declared statically; using an undeclared name in a macro is a
// compile error (RT_TRACE_EVENT_DYNAMIC and RT_TRACE_INSTANT_DYNAMIC take a
// name known only at run time instead, see there). Each has an instance mask
// (std::atomic<uint32_t>): bit 0 is the static enabling (SetCategoriesEnabled()
// and the RT_TRACE_CATEGORIES environment variable, same syntax, applied when
// the categories are registered at static initialization); bit i, 1 <= i <=
// kMaxInstances, is set while the data-source instance in slot i (a tracing
// session's "track_event" instance,
// src/tracing/track_event/track_event_instances.h) enables the category. A
// macro of a category whose mask is 0 costs one relaxed load of the mask and a
// branch; its arguments are not evaluated.
//
// Memory order. The mask is stored and loaded relaxed: it publishes no data
// and decides nothing alone. A thread may see a change a little late. For
// bit 0 that is all (the writer is the thread's own binding); for an
// instance bit, the event re-checks the instance's generation after
// announcing itself (see track_event_instances.h), so a stopped instance
// never gets an event that began after its stop returned.
//
// Writers. An enabled event is written once per target:
//   - bit 0: into the TraceWriterV2 bound to the thread by the innermost
//     live ScopedThreadWriter (the app owns that writer and destroys it
//     before its Producer); an event with bit 0 on a thread without a
//     binding is counted in Stats().events_without_writer;
//   - each instance bit: into the calling thread's writer for that
//     instance, created on the thread's first event for it (through the
//     instance's writer factory, i.e. the producer), one packet sequence per
//     thread and instance, with that instance's interning tables and
//     incremental state; flushed and released when the thread exits, or at
//     the thread's next event after its instance stopped.
// Every sequence starts with the process and thread TrackDescriptors (pid,
// tid, names from the kernel), the first with SEQ_INCREMENTAL_STATE_CLEARED;
// slices go on the thread's track (or on an app Track given to the macro,
// see Track), counters on a counter track per name (its descriptor, like an
// app track's, written once per incremental-state generation, before its
// first use). Flows link events (see Flow).
//
// Timestamps are CLOCK_BOOTTIME nanoseconds, Perfetto's default trace clock.
//
// Debug annotations: RT_TRACE_EVENT takes name/value pairs after the event
// name. Values: bool, signed and unsigned integers, float/double, strings
// (const char*, std::string, std::string_view) and pointers.
//
// Thread model: the macros and SetCategoriesEnabled() may be called from any
// thread; a ScopedThreadWriter is created and destroyed on its thread. A
// signal handler must not trace (the per-thread state is not reentrant).
//
// One RT_DEFINE_CATEGORIES per namespace: the macros look the categories up
// in namespace RT_TRACK_EVENT_NAMESPACE (default ringtrace_categories); a
// library that defines its own categories sets RT_TRACK_EVENT_NAMESPACE to a
// namespace of its own before including this header.

#ifndef INCLUDE_RINGTRACE_TRACK_EVENT_H_
#define INCLUDE_RINGTRACE_TRACK_EVENT_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/logging.h"
#include "ringtrace/trace_writer_v2.h"

#ifndef RT_TRACK_EVENT_NAMESPACE
#define RT_TRACK_EVENT_NAMESPACE ringtrace_categories
#endif

namespace ringtrace {
namespace track_event {

// Data-source instance slots: bits 1..kMaxInstances of a category's mask.
constexpr uint32_t kMaxInstances = 8;
constexpr uint32_t kStaticBit = 1u;  // bit 0: SetCategoriesEnabled()

struct TrackEventStats {
  // Enabled events not written for want of a writer: bit 0 on a thread
  // without a ScopedThreadWriter, or an instance whose writer could not be
  // created (the producer had none to give), or an event on a thread whose
  // per-thread state was already destroyed (thread exit). Each event counts
  // once per target it missed.
  uint64_t events_without_writer = 0;
  // Per-thread instance writers created, and released (thread exit, or the
  // thread's next event after the instance stopped). created - released is
  // the number alive.
  uint64_t instance_writers_created = 0;
  uint64_t instance_writers_released = 0;
};

// Applies a category spec to bit 0 of every registered category, in order:
// a comma-separated list of names, "*" (all), "prefix*", each optionally
// preceded by '-' to disable. Returns the number of (category, term)
// matches, so a spec that names no declared category returns 0. Instances
// are not affected.
size_t SetCategoriesEnabled(std::string_view spec);

// Applies $RT_TRACE_CATEGORIES, if set; returns SetCategoriesEnabled()'s.
size_t ApplyCategoriesFromEnvironment();

// Bit 0 of |name|'s mask (false for an undeclared name).
bool IsCategoryEnabled(std::string_view name);
// |name|'s whole mask (0 for an undeclared name).
uint32_t CategoryMask(std::string_view name);

TrackEventStats Stats();

// Track uuids of this process's tracks (distinct for distinct arguments).
uint64_t ProcessTrackUuid();
uint64_t ThreadTrackUuid(int64_t tid);
uint64_t CounterTrackUuid(std::string_view name);

// The process_name of the process TrackDescriptor written by bindings
// created afterwards. Default: program_invocation_short_name.
void SetProcessName(std::string_view name);

// CLOCK_BOOTTIME in ns.
uint64_t NowNs();

// Flows (Perfetto's TrackEvent.flow_ids = 47 and terminating_flow_ids =
// 48): arrows between events, on any tracks, threads or processes. An event
// that carries Flow(id) is linked to the previous event that carried the
// same id, and the flow goes on; TerminatingFlow(id) links and ends it (a
// later event with that id starts a new flow). Given to the macros among
// the debug annotations, in any position:
//   RT_TRACE_EVENT("io", "Submit", ringtrace::track_event::Flow::Global(id));
//   RT_TRACE_INSTANT("io", "Done", "bytes", n,
//                    ringtrace::track_event::TerminatingFlow::Global(id));
// Ids are the app's. Global ids are shared by every process of the trace;
// ProcessScoped ids are mixed with this process's track uuid, so two
// processes that use the same number do not meet. FromPointer is the
// process-scoped id of an address (a request object, a task).
class Flow {
 public:
  static constexpr Flow Global(uint64_t id) { return Flow(id); }
  static Flow ProcessScoped(uint64_t id);
  static Flow FromPointer(const void* pointer) {
    return ProcessScoped(reinterpret_cast<uintptr_t>(pointer));
  }
  constexpr uint64_t id() const { return id_; }

 private:
  explicit constexpr Flow(uint64_t id) : id_(id) {}
  uint64_t id_;
};

class TerminatingFlow {
 public:
  static constexpr TerminatingFlow Global(uint64_t id) {
    return TerminatingFlow(id);
  }
  static TerminatingFlow ProcessScoped(uint64_t id) {
    return TerminatingFlow(Flow::ProcessScoped(id).id());
  }
  static TerminatingFlow FromPointer(const void* pointer) {
    return TerminatingFlow(Flow::FromPointer(pointer).id());
  }
  constexpr uint64_t id() const { return id_; }

 private:
  explicit constexpr TerminatingFlow(uint64_t id) : id_(id) {}
  uint64_t id_;
};

// A track of the app's own (Perfetto's TrackDescriptor with a uuid, a name
// and a parent): a timeline that is not a thread's. Slices on it nest by
// begin and end, whatever thread writes them, so a slice may begin on one
// thread and end on another (an async track: a request, a frame in
// flight). Given to the macros right after the event name:
//   constexpr ringtrace::track_event::Track kRequests(0x5eed, "requests");
//   RT_TRACE_EVENT_BEGIN("net", "Fetch", kRequests, "id", 7);  // thread A
//   RT_TRACE_EVENT_END("net", kRequests);                      // thread B
//   RT_TRACE_EVENT("net", "Parse", kRequests);  // scoped, on the track
//   RT_TRACE_INSTANT("net", "Retry", kRequests);
//
// Each sequence (each thread's writer, per session) writes the track's
// TrackDescriptor before its first event on the track, and again after each
// incremental-state clear, as for counter tracks; events carry its uuid in
// TrackEvent.track_uuid.
//
// The uuid identifies the track in the whole trace: the app keeps it unique
// and never 0, and uses one name and parent per uuid (every descriptor of a
// uuid must be the same). Named() derives one from this process, the name
// and an id. |name| is a string literal or outlives every event on the
// track (descriptors are written lazily); null: an unnamed track.
//
// Tracks end their slices by themselves: two slices open at once on one
// track must nest (the second ends first); for overlapping operations use
// one track per operation (Named(name, operation_id)).
class Track {
 public:
  // The track of the thread that writes the event (what the macros use
  // when given no Track).
  constexpr Track() = default;
  // |uuid| (not 0), a child of this process's track: listed under the
  // process (trace_processor's process-scoped async track).
  constexpr explicit Track(uint64_t uuid, const char* name = nullptr)
      : uuid_(uuid), name_(name) {}
  // |uuid| (not 0) without a parent: a track of the whole trace, not of
  // this process (trace_processor's global async track).
  static constexpr Track Global(uint64_t uuid, const char* name = nullptr) {
    return Track(uuid, name, /*global=*/true);
  }
  // A track of this process whose uuid is derived from the process, |name|
  // and |id|: distinct (name, id) pairs are distinct tracks.
  static Track Named(const char* name, uint64_t id = 0);

  constexpr uint64_t uuid() const { return uuid_; }  // 0: the thread's
  constexpr const char* name() const { return name_; }
  constexpr bool global() const { return global_; }

 private:
  constexpr Track(uint64_t uuid, const char* name, bool global)
      : uuid_(uuid), name_(name), global_(global) {}

  uint64_t uuid_ = 0;
  const char* name_ = nullptr;
  bool global_ = false;
};

// Incremental state. Each binding is one packet sequence. Its incremental
// state (the track descriptors and the interned strings the sequence's
// events refer to) is cleared, and the process and thread descriptors are
// written again with SEQ_INCREMENTAL_STATE_CLEARED, when any of these holds
// at an event:
//   - |period_ms| passed since the last clear (Perfetto's
//     incremental_state_config.clear_period_ms);
//   - the sequence wrote |period_bytes| since the last clear, so that a ring
//     buffer that keeps only the newest part of a fast sequence still holds
//     a clear near its start;
//   - the writer counted a loss (TraceWriterV2Stats::packets_dropped grew):
//     the lost packet may have been the one that defined an iid or a track.
// Every event packet carries SEQ_NEEDS_INCREMENTAL_STATE, so a reader drops
// the events of a sequence between a loss and the next clear instead of
// resolving them wrongly. 0 disables a trigger; losses always clear.
struct IncrementalStateConfig {
  uint32_t period_ms = 2000;
  uint32_t period_bytes = 16 * 1024;
};
// Applies to sequences created afterwards (an instance's clear_period_ms,
// when not 0, replaces period_ms for that instance's sequences).
void SetIncrementalStateConfig(const IncrementalStateConfig& config);
IncrementalStateConfig GetIncrementalStateConfig();

// One packet sequence of the calling thread: a writer plus the sequence's
// incremental state (interning tables, counter tracks written, clear
// triggers). Created on the thread that writes it; writes the process and
// thread descriptors at once. Used by one thread.
class TrackEventSequence {
 public:
  // |now_ns|: the timestamp of the descriptors written at once (0: now);
  // an event that creates its sequence passes its own timestamp, so that
  // nothing in the sequence predates its first packet.
  TrackEventSequence(shm_ring::TraceWriterV2* writer,
                     const IncrementalStateConfig& config,
                     uint64_t now_ns = 0);
  TrackEventSequence(const TrackEventSequence&) = delete;
  TrackEventSequence& operator=(const TrackEventSequence&) = delete;

  shm_ring::TraceWriterV2* writer() const { return writer_; }
  uint64_t thread_track_uuid() const { return thread_track_uuid_; }

  // Returns the uuid of the counter track |name| (CounterTrackUuid()), and
  // writes its descriptor the first time it is used since the last clear.
  uint64_t EnsureCounterTrack(std::string_view name);
  // Returns |track|'s uuid (the thread track's for Track()), and writes its
  // descriptor (uuid, parent, name) at |now_ns| the first time it is used
  // since the last clear.
  uint64_t EnsureTrack(const Track& track, uint64_t now_ns) {
    if (RT_LIKELY(track.uuid() == 0))
      return thread_track_uuid_;
    return EnsureAppTrack(track, now_ns);
  }

  // Number of incremental-state clears written (the first one included).
  uint64_t clears() const { return clears_; }

  // Internal, for the macros. Clears the incremental state if due (see
  // IncrementalStateConfig); call before interning for an event.
  void MaybeClear(uint64_t now_ns);
  // The sequence's iid of |s|; a new one is queued for the next
  // WriteEventPrologue(). |s| is a string literal or outlives the binding's
  // use of it: it is looked up by address first, then by content.
  uint64_t InternName(const char* s) { return Intern(&names_, s); }
  uint64_t InternCategory(const char* s) { return Intern(&categories_, s); }
  uint64_t InternArgName(const char* s) { return Intern(&arg_names_, s); }
  // Writes timestamp, SEQ_NEEDS_INCREMENTAL_STATE and the queued interned
  // strings into |packet|.
  void WriteEventPrologue(perfetto::protos::rtzero::TracePacket packet,
                          uint64_t now_ns);

 private:
  struct InternTable {
    struct Cached {
      uint64_t iid;
      std::string text;
    };
    std::unordered_map<const char*, Cached> by_address;
    std::unordered_map<std::string, uint64_t> by_content;
    std::vector<std::pair<uint64_t, const char*>> pending;
  };
  uint64_t Intern(InternTable* table, const char* s);
  void WriteDescriptors(uint64_t now_ns);
  uint64_t EnsureAppTrack(const Track& track, uint64_t now_ns);

  shm_ring::TraceWriterV2* writer_;
  const int32_t pid_;  // getpid() is a system call: taken once
  const uint64_t process_track_uuid_;
  const IncrementalStateConfig config_;
  const std::string process_name_;
  uint64_t thread_track_uuid_;
  int64_t tid_;
  char thread_name_[17] = {};
  // Counter and app tracks whose descriptor this generation wrote.
  std::unordered_set<uint64_t> tracks_written_;
  InternTable names_;
  InternTable categories_;
  InternTable arg_names_;
  uint64_t next_iid_ = 1;  // shared by the three tables; 0 is never an iid
  uint64_t last_clear_ns_ = 0;
  uint64_t bytes_at_clear_ = 0;
  uint64_t dropped_seen_ = 0;
  uint64_t clears_ = 0;
};

// Binds |writer| to the calling thread for bit 0 of the macros until
// destroyed, and writes the process and thread descriptors into it. Nests:
// the previous binding is restored on destruction. Flushes the writer when
// destroyed.
class ScopedThreadWriter : public TrackEventSequence {
 public:
  explicit ScopedThreadWriter(shm_ring::TraceWriterV2* writer);
  ~ScopedThreadWriter();

  // The calling thread's innermost binding, or null.
  static ScopedThreadWriter* Current();

 private:
  ScopedThreadWriter* previous_;
};

namespace internal {

// One RT_DEFINE_CATEGORIES table, registered with the runtime at static
// initialization (so SetCategoriesEnabled and the environment reach it).
struct CategoryTable {
  CategoryTable(const char* const* names,
                std::atomic<uint32_t>* masks,
                size_t count);
  // Not registered (the caller registers it, registry mutex held).
  struct Unregistered {};
  CategoryTable(const char* const* names,
                std::atomic<uint32_t>* masks,
                size_t count,
                Unregistered);
  const char* const* names;
  std::atomic<uint32_t>* masks;
  size_t count;
};

// A category named at run time: its registered name (stable for the
// process's life, so it can be interned by address) and its mask as loaded
// now (relaxed).
// (The fields are not called "name" or "category": the macros' parameters
// are.)
struct DynamicCategory {
  const char* registered;
  uint32_t mask;
};
// Looks |name| up in the calling thread's cache, else in the registry (a
// new name is registered, with the static specs applied so far and the bits
// of the running instances that enable it). Never fails; names are never
// forgotten.
DynamicCategory GetDynamicCategory(std::string_view name);

constexpr bool StrEq(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

// The index of |name| in |names|, or |count| if absent (compile time).
constexpr size_t FindCategory(const char* const* names,
                              size_t count,
                              const char* name) {
  for (size_t i = 0; i < count; i++) {
    if (StrEq(names[i], name))
      return i;
  }
  return count;
}

struct ThreadState;  // track_event_instances.cc

// The sequences one event goes to, for the bits of |mask| (a category mask
// as the macro loaded it): first the thread's binding (bit 0), then the
// thread's writer of each live instance, in slot order. Lives on the stack
// for the duration of one event; while it lives, the thread is announced as
// "inside an event" of the instances of |mask| (track_event_instances.h
// explains why a stop waits for that).
//
// |create|: create the thread's writer of an instance that has none yet
// (false for slice ends: an end is only written where its begin could be).
// |generation_limit|: skip instance sequences of a later generation than
// this (a slice end must not reach an instance started after its begin).
class EventTargets {
 public:
  explicit EventTargets(uint32_t mask,
                        bool create = true,
                        uint64_t generation_limit = UINT64_MAX);
  ~EventTargets();
  EventTargets(const EventTargets&) = delete;
  EventTargets& operator=(const EventTargets&) = delete;

  // The next sequence, or null when done. A target that has no writer is
  // counted in TrackEventStats::events_without_writer and skipped.
  TrackEventSequence* Next();

  // The bits of the targets Next() returned, and the largest instance
  // generation among them (0 if none).
  uint32_t written_mask() const { return written_mask_; }
  uint64_t max_generation() const { return max_generation_; }

  // The event's timestamp: read once, at the first call.
  uint64_t Now() {
    if (now_ == 0)
      now_ = NowNs();
    return now_;
  }

 private:
  ThreadState* state_ = nullptr;
  uint32_t pending_;
  uint32_t previous_in_event_ = 0;
  uint32_t written_mask_ = 0;
  uint64_t max_generation_ = 0;
  uint64_t now_ = 0;
  uint64_t generation_limit_;
  bool create_;
};

// Debug annotation values, by type.
inline void SetValue(perfetto::protos::rtzero::DebugAnnotation a, bool v) {
  a.set_bool_value(v);
}
inline void SetValue(perfetto::protos::rtzero::DebugAnnotation a,
                     std::string_view v) {
  a.set_string_value(v);
}
inline void SetValue(perfetto::protos::rtzero::DebugAnnotation a,
                     const char* v) {
  a.set_string_value(v ? std::string_view(v) : std::string_view("(null)"));
}
inline void SetValue(perfetto::protos::rtzero::DebugAnnotation a,
                     const std::string& v) {
  a.set_string_value(v);
}
template <typename T>
inline void SetValue(perfetto::protos::rtzero::DebugAnnotation a, T v) {
  if constexpr (std::is_pointer<T>::value) {
    a.set_pointer_value(reinterpret_cast<uintptr_t>(v));
  } else if constexpr (std::is_floating_point<T>::value) {
    a.set_double_value(static_cast<double>(v));
  } else if constexpr (std::is_enum<T>::value) {
    SetValue(a, static_cast<std::underlying_type_t<T>>(v));
  } else if constexpr (std::is_signed<T>::value) {
    static_assert(std::is_integral<T>::value, "unsupported argument type");
    a.set_int_value(static_cast<int64_t>(v));
  } else {
    static_assert(std::is_integral<T>::value, "unsupported argument type");
    a.set_uint_value(static_cast<uint64_t>(v));
  }
}

// The arguments after an event's name (and Track): debug annotations as
// name/value pairs, and Flow / TerminatingFlow values anywhere among them.
template <typename T>
constexpr bool IsFlowArg() {
  using D = std::decay_t<T>;
  return std::is_same<D, Flow>::value ||
         std::is_same<D, TerminatingFlow>::value;
}
template <typename... Args>
constexpr bool ArgsArePairsAndFlows() {
  return ((IsFlowArg<Args>() ? 0 : 1) + ... + 0) % 2 == 0;
}

// Declared first: each overload recurses into the others.
template <typename... Rest>
void WriteArgs(TrackEventSequence* binding,
               perfetto::protos::rtzero::TrackEvent event,
               Flow flow,
               Rest&&... rest);
template <typename... Rest>
void WriteArgs(TrackEventSequence* binding,
               perfetto::protos::rtzero::TrackEvent event,
               TerminatingFlow flow,
               Rest&&... rest);
template <typename V, typename... Rest>
void WriteArgs(TrackEventSequence* binding,
               perfetto::protos::rtzero::TrackEvent event,
               const char* name,
               V&& value,
               Rest&&... rest);
template <typename... Rest>
void InternArgNames(TrackEventSequence* binding, Flow, Rest&&... rest);
template <typename... Rest>
void InternArgNames(TrackEventSequence* binding,
                    TerminatingFlow,
                    Rest&&... rest);
template <typename V, typename... Rest>
void InternArgNames(TrackEventSequence* binding,
                    const char* name,
                    V&&,
                    Rest&&... rest);

inline void WriteArgs(TrackEventSequence*,
                      perfetto::protos::rtzero::TrackEvent) {}
template <typename... Rest>
inline void WriteArgs(TrackEventSequence* binding,
                      perfetto::protos::rtzero::TrackEvent event,
                      Flow flow,
                      Rest&&... rest) {
  event.add_flow_ids(flow.id());
  WriteArgs(binding, event, static_cast<Rest&&>(rest)...);
}
template <typename... Rest>
inline void WriteArgs(TrackEventSequence* binding,
                      perfetto::protos::rtzero::TrackEvent event,
                      TerminatingFlow flow,
                      Rest&&... rest) {
  event.add_terminating_flow_ids(flow.id());
  WriteArgs(binding, event, static_cast<Rest&&>(rest)...);
}
template <typename V, typename... Rest>
inline void WriteArgs(TrackEventSequence* binding,
                      perfetto::protos::rtzero::TrackEvent event,
                      const char* name,
                      V&& value,
                      Rest&&... rest) {
  perfetto::protos::rtzero::DebugAnnotation a = event.add_debug_annotations();
  a.set_name_iid(binding->InternArgName(name));
  SetValue(a, value);
  WriteArgs(binding, event, static_cast<Rest&&>(rest)...);
}

inline void InternArgNames(TrackEventSequence*) {}
template <typename... Rest>
inline void InternArgNames(TrackEventSequence* binding, Flow, Rest&&... rest) {
  InternArgNames(binding, static_cast<Rest&&>(rest)...);
}
template <typename... Rest>
inline void InternArgNames(TrackEventSequence* binding,
                           TerminatingFlow,
                           Rest&&... rest) {
  InternArgNames(binding, static_cast<Rest&&>(rest)...);
}
template <typename V, typename... Rest>
inline void InternArgNames(TrackEventSequence* binding,
                           const char* name,
                           V&&,
                           Rest&&... rest) {
  binding->InternArgName(name);
  InternArgNames(binding, static_cast<Rest&&>(rest)...);
}

// Writes one event packet of |type| at |now| (NowNs(), one reading for
// every target of the event) on |track| (Track(): the thread's; an app
// track's descriptor is written first if this generation has not) with
// interned |category| and |name| (either may be null: not written) and
// |args| (debug annotations and flows).
template <typename... Args>
inline void WriteEvent(TrackEventSequence* binding,
                       uint64_t now,
                       perfetto::protos::rtzero::TrackEvent::Type type,
                       const Track& track,
                       const char* category,
                       const char* name,
                       Args&&... args) {
  static_assert(ArgsArePairsAndFlows<Args...>(),
                "arguments are name/value pairs, flows and one Track first");
  binding->MaybeClear(now);
  const uint64_t track_uuid = binding->EnsureTrack(track, now);
  const uint64_t category_iid =
      category ? binding->InternCategory(category) : 0;
  const uint64_t name_iid = name ? binding->InternName(name) : 0;
  InternArgNames(binding, args...);
  auto handle = binding->writer()->NewTracePacket();
  perfetto::protos::rtzero::TracePacket packet(handle);
  binding->WriteEventPrologue(packet, now);
  perfetto::protos::rtzero::TrackEvent event = packet.set_track_event();
  event.set_type(type);
  event.set_track_uuid(track_uuid);
  if (category_iid)
    event.add_category_iids(category_iid);
  if (name_iid)
    event.set_name_iid(name_iid);
  WriteArgs(binding, event, static_cast<Args&&>(args)...);
}

// Is the first of |Args| a Track (the macros' optional track argument)?
template <typename... Args>
struct FirstIsTrack : std::false_type {};
template <typename First, typename... Rest>
struct FirstIsTrack<First, Rest...> : std::is_same<std::decay_t<First>, Track> {
};

// The targets a slice's begin went to: the bits written, and the largest
// instance generation among them (an instance of a later generation started
// inside the slice and gets no end). A slice on the thread track.
struct SliceTargets {
  uint32_t mask = 0;  // 0: not begun anywhere
  uint64_t generation_limit = 0;
};
// The same for a slice on an app Track, which its end needs again. A type
// of its own, so that a thread-track slice's state stays two words (see
// ScopedSlice).
struct TrackSliceTargets {
  uint32_t mask = 0;
  uint64_t generation_limit = 0;
  Track track;
};

// SLICE_BEGIN on |track| into every target of |mask|.
template <typename... Args>
inline SliceTargets BeginSliceOn(uint32_t mask,
                                 const Track& track,
                                 const char* category,
                                 const char* name,
                                 Args&&... args) {
  EventTargets targets(mask);
  while (TrackEventSequence* sequence = targets.Next()) {
    WriteEvent(sequence, targets.Now(),
               perfetto::protos::rtzero::TrackEvent::Type::TYPE_SLICE_BEGIN,
               track, category, name, args...);
  }
  SliceTargets begun;
  begun.mask = targets.written_mask();
  begun.generation_limit = targets.max_generation();
  return begun;
}
template <typename... Args>
inline TrackSliceTargets BeginSliceOnTrack(uint32_t mask,
                                           const char* category,
                                           const char* name,
                                           const Track& track,
                                           Args&&... args) {
  const SliceTargets targets =
      BeginSliceOn(mask, track, category, name, args...);
  TrackSliceTargets begun;
  begun.mask = targets.mask;
  begun.generation_limit = targets.generation_limit;
  begun.track = track;
  return begun;
}

// RT_TRACE_EVENT's begin: SLICE_BEGIN into every target of |mask|, on the
// Track given first among |args| (returns TrackSliceTargets), else on the
// thread track (SliceTargets).
template <typename... Args>
inline auto BeginSlice(uint32_t mask,
                       const char* category,
                       const char* name,
                       Args&&... args) {
  if constexpr (FirstIsTrack<Args...>::value)
    return BeginSliceOnTrack(mask, category, name, args...);
  else
    return BeginSliceOn(mask, Track(), category, name, args...);
}

// SLICE_END on the slice's track into the targets that got the begin: the
// thread's binding (bit 0, if one is bound now) and each instance whose
// writer got the begin, as long as that instance still runs. By value: a
// reference would let the ScopedSlice's address escape, and a disabled
// slice would then pay for storing its state.
void EndSlice(SliceTargets begun);
void EndSlice(TrackSliceTargets begun);

// The slice of RT_TRACE_EVENT, ended by the destructor. Its state is a
// value handed over by BeginSlice() and its address never escapes, so a
// disabled slice costs no memory access: the compiler knows it is not begun
// (with the larger TrackSliceTargets, gcc 12 still stores its zeroes each
// time, so thread-track slices keep the two-word SliceTargets).
template <typename Targets>
class ScopedSlice {
 public:
  ScopedSlice() = default;
  ScopedSlice(const ScopedSlice&) = delete;
  ScopedSlice& operator=(const ScopedSlice&) = delete;
  ~ScopedSlice() {
    if (RT_UNLIKELY(begun_.mask != 0))
      EndSlice(begun_);
  }
  void Begun(Targets begun) { begun_ = begun; }

 private:
  Targets begun_;
};

// The ScopedSlice type for RT_TRACE_EVENT's arguments (only named in
// decltype: the arguments are not evaluated).
template <typename... Args>
ScopedSlice<std::conditional_t<FirstIsTrack<Args...>::value,
                               TrackSliceTargets,
                               SliceTargets>>
ScopedSliceFor(Args&&... args);

// One event of |type| on |track| into every target of |mask|.
template <typename... Args>
inline void WriteEventOn(uint32_t mask,
                         perfetto::protos::rtzero::TrackEvent::Type type,
                         const Track& track,
                         const char* category,
                         const char* name,
                         Args&&... args) {
  EventTargets targets(mask);
  while (TrackEventSequence* sequence = targets.Next())
    WriteEvent(sequence, targets.Now(), type, track, category, name, args...);
}
template <typename... Args>
inline void WriteEventOnTrack(uint32_t mask,
                              perfetto::protos::rtzero::TrackEvent::Type type,
                              const char* category,
                              const char* name,
                              const Track& track,
                              Args&&... args) {
  WriteEventOn(mask, type, track, category, name, args...);
}

// RT_TRACE_EVENT_BEGIN / RT_TRACE_INSTANT: one event on the Track given
// first among |args|, else on the thread track.
template <typename... Args>
inline void WriteThreadEvent(uint32_t mask,
                             perfetto::protos::rtzero::TrackEvent::Type type,
                             const char* category,
                             const char* name,
                             Args&&... args) {
  if constexpr (FirstIsTrack<Args...>::value)
    WriteEventOnTrack(mask, type, category, name, args...);
  else
    WriteEventOn(mask, type, Track(), category, name, args...);
}

// RT_TRACE_EVENT_END: SLICE_END on the thread track, into the binding and
// the instance writers the thread already has (none is created for it).
void WriteSliceEnd(uint32_t mask);
// RT_TRACE_EVENT_END with a Track: SLICE_END on |track| into every target
// of |mask|, creating the thread's instance writers as an event does (the
// slice may have begun on another thread).
void WriteSliceEnd(uint32_t mask, const Track& track);

// RT_TRACE_EVENT_END with arguments after the optional Track (flows,
// debug annotations): as the two above, with |args| on the end event.
template <typename... Args>
inline void WriteSliceEndOnTrackWith(uint32_t mask,
                                     const Track& track,
                                     Args&&... args) {
  EventTargets targets(mask);
  while (TrackEventSequence* sequence = targets.Next()) {
    WriteEvent(sequence, targets.Now(),
               perfetto::protos::rtzero::TrackEvent::Type::TYPE_SLICE_END,
               track, nullptr, nullptr, args...);
  }
}
template <typename... Args>
inline void WriteSliceEndFor(uint32_t mask, Args&&... args) {
  if constexpr (sizeof...(Args) == 0) {
    WriteSliceEnd(mask);
  } else if constexpr (FirstIsTrack<Args...>::value) {
    if constexpr (sizeof...(Args) == 1)
      WriteSliceEnd(mask, args...);
    else
      WriteSliceEndOnTrackWith(mask, args...);
  } else {
    EventTargets targets(mask, /*create=*/false);
    while (TrackEventSequence* sequence = targets.Next()) {
      WriteEvent(sequence, targets.Now(),
                 perfetto::protos::rtzero::TrackEvent::Type::TYPE_SLICE_END,
                 Track(), nullptr, nullptr, args...);
    }
  }
}

void WriteCounter(uint32_t mask,
                  const char* category,
                  const char* name,
                  int64_t value);
void WriteCounter(uint32_t mask,
                  const char* category,
                  const char* name,
                  double value);
template <typename T>
inline void WriteCounterValue(uint32_t mask,
                              const char* category,
                              const char* name,
                              T value) {
  static_assert(std::is_arithmetic<T>::value, "counters are numbers");
  if constexpr (std::is_floating_point<T>::value)
    WriteCounter(mask, category, name, static_cast<double>(value));
  else
    WriteCounter(mask, category, name, static_cast<int64_t>(value));
}

}  // namespace internal
}  // namespace track_event
}  // namespace ringtrace

// Declares the program's categories (string literals).
#define RT_DEFINE_CATEGORIES(...)                                        \
  namespace RT_TRACK_EVENT_NAMESPACE {                                   \
  inline constexpr const char* kCategoryNames[] = {__VA_ARGS__};         \
  inline constexpr size_t kCategoryCount =                               \
      sizeof(kCategoryNames) / sizeof(kCategoryNames[0]);                \
  inline std::atomic<uint32_t> g_category_mask[kCategoryCount] = {};     \
  inline const ::ringtrace::track_event::internal::CategoryTable         \
      g_category_table(kCategoryNames, g_category_mask, kCategoryCount); \
  }                                                                      \
  static_assert(true, "")

#define RT_INTERNAL_CONCAT2(a, b) a##b
#define RT_INTERNAL_CONCAT(a, b) RT_INTERNAL_CONCAT2(a, b)
#define RT_INTERNAL_UID(prefix) RT_INTERNAL_CONCAT(prefix, __LINE__)

// The category's index, checked at compile time.
#define RT_INTERNAL_CATEGORY_INDEX(category)                             \
  ([] {                                                                  \
    constexpr size_t rt_index =                                          \
        ::ringtrace::track_event::internal::FindCategory(                \
            ::RT_TRACK_EVENT_NAMESPACE::kCategoryNames,                  \
            ::RT_TRACK_EVENT_NAMESPACE::kCategoryCount, category);       \
    static_assert(rt_index < ::RT_TRACK_EVENT_NAMESPACE::kCategoryCount, \
                  "category not declared in RT_DEFINE_CATEGORIES");      \
    return rt_index;                                                     \
  }())

// The category's mask: one relaxed load (see "Memory order" above).
#define RT_INTERNAL_CATEGORY_MASK(category)                               \
  ::RT_TRACK_EVENT_NAMESPACE::g_category_mask[RT_INTERNAL_CATEGORY_INDEX( \
                                                  category)]              \
      .load(std::memory_order_relaxed)

// A slice on the thread's track from here to the end of the scope.
// RT_TRACE_EVENT("cat", "name", "arg", value, ...). Optionally a Track
// right after the name (the slice is on that track), and Flow /
// TerminatingFlow values among the arguments.
#define RT_TRACE_EVENT(category, name, ...)                         \
  decltype(::ringtrace::track_event::internal::ScopedSliceFor(      \
      __VA_ARGS__)) RT_INTERNAL_UID(rt_scoped_slice_);              \
  if (const uint32_t rt_mask = RT_INTERNAL_CATEGORY_MASK(category); \
      RT_UNLIKELY(rt_mask != 0))                                    \
  RT_INTERNAL_UID(rt_scoped_slice_)                                 \
      .Begun(::ringtrace::track_event::internal::BeginSlice(        \
          rt_mask, category, name, ##__VA_ARGS__))

// Explicit slice begin and end on the thread's track; every BEGIN needs an
// END on the same thread. END is written when its category is enabled.
// With a Track (right after the name; END's first argument) they are on
// that track and may be on different threads (an async slice):
// RT_TRACE_EVENT_BEGIN("net", "Fetch", track, ...); RT_TRACE_EVENT_END("net",
// track). Arguments as for RT_TRACE_EVENT, END's too (after its Track):
// RT_TRACE_EVENT_END("net", TerminatingFlow::Global(id), "status", 200).
#define RT_TRACE_EVENT_BEGIN(category, name, ...)                         \
  do {                                                                    \
    if (const uint32_t rt_mask = RT_INTERNAL_CATEGORY_MASK(category);     \
        RT_UNLIKELY(rt_mask != 0))                                        \
      ::ringtrace::track_event::internal::WriteThreadEvent(               \
          rt_mask,                                                        \
          ::perfetto::protos::rtzero::TrackEvent::Type::TYPE_SLICE_BEGIN, \
          category, name, ##__VA_ARGS__);                                 \
  } while (0)
#define RT_TRACE_EVENT_END(category, ...)                                  \
  do {                                                                     \
    if (const uint32_t rt_mask = RT_INTERNAL_CATEGORY_MASK(category);      \
        RT_UNLIKELY(rt_mask != 0))                                         \
      ::ringtrace::track_event::internal::WriteSliceEndFor(rt_mask,        \
                                                           ##__VA_ARGS__); \
  } while (0)

// A zero-duration event on the thread's track, or on a Track given right
// after the name. Arguments as for RT_TRACE_EVENT.
#define RT_TRACE_INSTANT(category, name, ...)                                  \
  do {                                                                         \
    if (const uint32_t rt_mask = RT_INTERNAL_CATEGORY_MASK(category);          \
        RT_UNLIKELY(rt_mask != 0))                                             \
      ::ringtrace::track_event::internal::WriteThreadEvent(                    \
          rt_mask, ::perfetto::protos::rtzero::TrackEvent::Type::TYPE_INSTANT, \
          category, name, ##__VA_ARGS__);                                      \
  } while (0)

// Dynamic categories: |category| is any string (std::string_view) known only
// at run time, e.g. a plugin's name. Matched like the declared ones (the
// static spec, every instance's patterns) when first used. Costs more than
// a declared category even when disabled: a lookup of the name in a
// per-thread cache (an ordered map of the names this thread used).
#define RT_TRACE_EVENT_DYNAMIC(category, name, ...)                         \
  decltype(::ringtrace::track_event::internal::ScopedSliceFor(              \
      __VA_ARGS__)) RT_INTERNAL_UID(rt_scoped_slice_);                      \
  if (const ::ringtrace::track_event::internal::DynamicCategory rt_dyn =    \
          ::ringtrace::track_event::internal::GetDynamicCategory(category); \
      RT_UNLIKELY(rt_dyn.mask != 0))                                        \
  RT_INTERNAL_UID(rt_scoped_slice_)                                         \
      .Begun(::ringtrace::track_event::internal::BeginSlice(                \
          rt_dyn.mask, rt_dyn.registered, name, ##__VA_ARGS__))

#define RT_TRACE_INSTANT_DYNAMIC(category, name, ...)                         \
  do {                                                                        \
    if (const ::ringtrace::track_event::internal::DynamicCategory rt_dyn =    \
            ::ringtrace::track_event::internal::GetDynamicCategory(category); \
        RT_UNLIKELY(rt_dyn.mask != 0))                                        \
      ::ringtrace::track_event::internal::WriteThreadEvent(                   \
          rt_dyn.mask,                                                        \
          ::perfetto::protos::rtzero::TrackEvent::Type::TYPE_INSTANT,         \
          rt_dyn.registered, name, ##__VA_ARGS__);                            \
  } while (0)

// A counter value (integer or floating point) on the counter track |name|.
#define RT_TRACE_COUNTER(category, name, value)                                \
  do {                                                                         \
    if (const uint32_t rt_mask = RT_INTERNAL_CATEGORY_MASK(category);          \
        RT_UNLIKELY(rt_mask != 0))                                             \
      ::ringtrace::track_event::internal::WriteCounterValue(rt_mask, category, \
                                                            name, value);      \
  } while (0)

#endif  // INCLUDE_RINGTRACE_TRACK_EVENT_H_
