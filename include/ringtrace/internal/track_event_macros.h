/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The TrackEvent macros (RT_TRACE_EVENT, RT_TRACE_EVENT_BEGIN/END,
// RT_TRACE_INSTANT, RT_TRACE_COUNTER, RT_DEFINE_CATEGORIES) and the inline
// machinery they expand to (namespace internal: argument encoding, category
// lookup, per-instance dispatch). Apps include ringtrace/track_event.h, which
// documents the API and includes this header at its end, once everything
// it uses is declared; this one is not included on its own (it says so).
// Nothing in namespace internal is API: it may change with any release.

#ifndef INCLUDE_RINGTRACE_INTERNAL_TRACK_EVENT_MACROS_H_
#define INCLUDE_RINGTRACE_INTERNAL_TRACK_EVENT_MACROS_H_

#ifndef INCLUDE_RINGTRACE_TRACK_EVENT_H_
#error "include ringtrace/track_event.h, not this internal header"
#endif

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/logging.h"
#include "ringtrace/trace_writer_v2.h"

namespace ringtrace {
namespace track_event {

namespace internal {

// One RT_DEFINE_CATEGORIES table, registered with the runtime at static
// initialization (so SetCategoriesEnabled, the environment and the running
// instances reach it).
struct CategoryTable {
  CategoryTable(const Category* categories,
                std::atomic<uint32_t>* masks,
                size_t count);
  // A dynamic category's table of one: not registered by the constructor
  // (the caller registers it, registry mutex held), and not declared (the
  // producer does not publish it).
  struct Dynamic {};
  CategoryTable(const Category* categories,
                std::atomic<uint32_t>* masks,
                size_t count,
                Dynamic);
  const Category* categories;
  std::atomic<uint32_t>* masks;
  size_t count;
  bool declared;  // false: a dynamic category
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

// The index of |name| in |categories|, or |count| if absent (compile time).
constexpr size_t FindCategory(const Category* categories,
                              size_t count,
                              const char* name) {
  for (size_t i = 0; i < count; i++) {
    if (StrEq(categories[i].name(), name))
      return i;
  }
  return count;
}

// A name or tag RT_DEFINE_CATEGORIES accepts: non-empty, without '*'.
constexpr bool IsDeclarableName(const char* s) {
  if (s == nullptr || *s == '\0')
    return false;
  for (; *s != '\0'; ++s) {
    if (*s == '*')
      return false;
  }
  return true;
}

// Whether every category of the table has a declarable name and tags
// (compile time, see Category).
constexpr bool AreDeclarable(const Category* categories, size_t count) {
  for (size_t i = 0; i < count; i++) {
    if (!IsDeclarableName(categories[i].name()))
      return false;
    for (size_t t = 0; t < categories[i].tag_count(); t++) {
      if (!IsDeclarableName(categories[i].tag(t)))
        return false;
    }
  }
  return true;
}

struct ThreadState;  // track_event_instances.cc

// The calling thread's innermost ScopedThreadWriter (bit 0 of the macros),
// or null. __thread rather than thread_local: a plain pointer with no
// initializer to run, so other translation units read it directly instead
// of through a TLS wrapper call.
extern __thread TrackEventSequence* t_bound_sequence;
void CountEventsWithoutWriter(uint64_t n);

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
//
// The binding alone (bit 0, no instance) is handled inline: no thread state
// and no announcement are needed for it.
class EventTargets {
 public:
  explicit EventTargets(uint32_t mask,
                        bool create = true,
                        uint64_t generation_limit = UINT64_MAX)
      : pending_(mask), generation_limit_(generation_limit), create_(create) {
    if (RT_UNLIKELY((mask & ~kStaticBit) != 0))
      EnterInstances();
  }
  ~EventTargets() {
    if (RT_UNLIKELY(state_ != nullptr))
      LeaveInstances();
  }
  EventTargets(const EventTargets&) = delete;
  EventTargets& operator=(const EventTargets&) = delete;

  // The next sequence, or null when done. A target that has no writer is
  // counted in TrackEventStats::events_without_writer and skipped.
  TrackEventSequence* Next() {
    if (RT_LIKELY(pending_ == kStaticBit)) {
      pending_ = 0;
      if (TrackEventSequence* binding = t_bound_sequence) {
        written_mask_ |= kStaticBit;
        return binding;
      }
      CountEventsWithoutWriter(1);
      return nullptr;
    }
    return pending_ != 0 ? NextSlow() : nullptr;
  }

  // The bits of the targets Next() returned, and the largest instance
  // generation among them (0 if none).
  uint32_t written_mask() const { return written_mask_; }
  uint64_t max_generation() const { return max_generation_; }

  // The event's timestamp given by the app (a TraceTimestamp); 0: none.
  void SetTimestamp(uint64_t ns) { now_ = ns; }
  // The event's timestamp: read once, at the first call.
  uint64_t Now() {
    if (now_ == 0)
      now_ = NowNs();
    return now_;
  }

 private:
  // The instance paths (track_event_instances.cc).
  void EnterInstances();
  void LeaveInstances();
  TrackEventSequence* NextSlow();

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

// Does T write itself (a WriteIntoTrace(TracedValue) const member)?
template <typename T, typename = void>
struct HasWriteIntoTrace : std::false_type {};
template <typename T>
struct HasWriteIntoTrace<
    T,
    std::void_t<decltype(std::declval<const T&>().WriteIntoTrace(
        std::declval<TracedValue>()))>> : std::true_type {};

template <typename T>
void WriteValue(perfetto::protos::rtzero::DebugAnnotation annotation,
                const T& value) {
  if constexpr (HasWriteIntoTrace<T>::value)
    value.WriteIntoTrace(TracedValue(annotation));
  else
    SetValue(annotation, value);
}

// Is F the event's lambda (invocable with an EventContext)?
template <typename F>
constexpr bool IsEventLambda() {
  return std::is_invocable<std::decay_t<F>&, EventContext>::value;
}

// The arguments after an event's name (and Track): debug annotations as
// name/value pairs, and Flow / TerminatingFlow values anywhere among them.
template <typename T>
constexpr bool IsFlowArg() {
  using D = std::decay_t<T>;
  return std::is_same<D, Flow>::value ||
         std::is_same<D, TerminatingFlow>::value;
}
template <typename T>
constexpr bool IsTimestampArg() {
  return std::is_same<std::decay_t<T>, TraceTimestamp>::value;
}
template <typename... Args>
constexpr bool ArgsArePairsAndFlows() {
  return ((IsFlowArg<Args>() || IsTimestampArg<Args>() || IsEventLambda<Args>()
               ? 0
               : 1) +
          ... + 0) %
             2 ==
         0;
}
// The event's lambda is last, or absent.
template <typename... Args>
constexpr bool LambdaIsLastOrAbsent() {
  constexpr bool kIsLambda[] = {IsEventLambda<Args>()..., false};
  for (size_t i = 0; i + 1 < sizeof...(Args); i++) {
    if (kIsLambda[i])
      return false;
  }
  return true;
}
// A TraceTimestamp is first (after the Track) or absent.
template <typename... Args>
struct TimestampIsFirstOrAbsent : std::true_type {};
template <typename First, typename... Rest>
struct TimestampIsFirstOrAbsent<First, Rest...>
    : std::bool_constant<(!IsTimestampArg<Rest>() && ...)> {};

// Stamps |targets| with the TraceTimestamp first among the arguments, if
// any.
inline void ApplyTimestamp(EventTargets*) {}
template <typename First, typename... Rest>
inline void ApplyTimestamp(EventTargets* targets,
                           const First& first,
                           const Rest&...) {
  if constexpr (IsTimestampArg<First>()) {
    targets->SetTimestamp(first.ns());
  } else {
    (void)targets;
    (void)first;
  }
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
template <typename... Rest>
void WriteArgs(TrackEventSequence* binding,
               perfetto::protos::rtzero::TrackEvent event,
               TraceTimestamp,
               Rest&&... rest);
template <typename F, typename = std::enable_if_t<IsEventLambda<F>()>>
void WriteArgs(TrackEventSequence* binding,
               perfetto::protos::rtzero::TrackEvent event,
               F&& lambda);
template <typename V, typename... Rest>
void WriteArgs(TrackEventSequence* binding,
               perfetto::protos::rtzero::TrackEvent event,
               NameRef name,
               V&& value,
               Rest&&... rest);
template <typename F, typename = std::enable_if_t<IsEventLambda<F>()>>
void InternArgNames(TrackEventSequence* binding, F&&);
template <typename... Rest>
void InternArgNames(TrackEventSequence* binding,
                    TraceTimestamp,
                    Rest&&... rest);
template <typename... Rest>
void InternArgNames(TrackEventSequence* binding, Flow, Rest&&... rest);
template <typename... Rest>
void InternArgNames(TrackEventSequence* binding,
                    TerminatingFlow,
                    Rest&&... rest);
template <typename V, typename... Rest>
void InternArgNames(TrackEventSequence* binding,
                    NameRef name,
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
template <typename... Rest>
inline void WriteArgs(TrackEventSequence* binding,
                      perfetto::protos::rtzero::TrackEvent event,
                      TraceTimestamp,
                      Rest&&... rest) {
  WriteArgs(binding, event, static_cast<Rest&&>(rest)...);
}
template <typename F, typename>
inline void WriteArgs(TrackEventSequence* binding,
                      perfetto::protos::rtzero::TrackEvent event,
                      F&& lambda) {
  lambda(EventContext(binding, event));
}
template <typename V, typename... Rest>
inline void WriteArgs(TrackEventSequence* binding,
                      perfetto::protos::rtzero::TrackEvent event,
                      NameRef name,
                      V&& value,
                      Rest&&... rest) {
  perfetto::protos::rtzero::DebugAnnotation a = event.add_debug_annotations();
  a.set_name_iid(binding->InternArgName(name));
  WriteValue(a, value);
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
template <typename... Rest>
inline void InternArgNames(TrackEventSequence* binding,
                           TraceTimestamp,
                           Rest&&... rest) {
  InternArgNames(binding, static_cast<Rest&&>(rest)...);
}
template <typename F, typename>
inline void InternArgNames(TrackEventSequence*, F&&) {}
template <typename V, typename... Rest>
inline void InternArgNames(TrackEventSequence* binding,
                           NameRef name,
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
template <typename Name, typename... Args>
inline void WriteEvent(TrackEventSequence* binding,
                       uint64_t now,
                       perfetto::protos::rtzero::TrackEvent::Type type,
                       const Track& track,
                       NameRef category,
                       Name name,
                       Args&&... args) {
  static_assert(ArgsArePairsAndFlows<Args...>(),
                "arguments are name/value pairs, flows and one Track first");
  static_assert(TimestampIsFirstOrAbsent<Args...>::value,
                "a TraceTimestamp comes right after the name (or the Track)");
  static_assert(LambdaIsLastOrAbsent<Args...>(),
                "the EventContext lambda is the last argument");
  // MaybeClear() (false) and EnsureTrack() (0) report a lost packet that
  // this event needed: that packet is the event's counted loss, and the
  // event is not written.
  if (RT_UNLIKELY(!binding->MaybeClear(now)))
    return;
  const uint64_t track_uuid = binding->EnsureTrack(track, now);
  if (RT_UNLIKELY(track_uuid == 0))
    return;
  const uint64_t category_iid =
      category ? binding->InternCategory(category) : 0;
  uint64_t name_iid = 0;
  if constexpr (!std::is_same<Name, DynamicName>::value) {
    const NameRef interned = name;
    name_iid = interned ? binding->InternName(interned) : 0;
  }
  InternArgNames(binding, args...);
  auto handle = binding->writer()->NewTracePacket();
  perfetto::protos::rtzero::TracePacket packet(handle);
  binding->WriteEventPrologue(packet, now);
  perfetto::protos::rtzero::TrackEvent event = packet.set_track_event();
  event.set_type(type);
  if (track.id() != 0)  // the thread's track is the sequence's default
    event.set_track_uuid(track_uuid);
  if (category_iid)
    event.add_category_iids(category_iid);
  if constexpr (std::is_same<Name, DynamicName>::value)
    event.set_name(name.text());
  else if (name_iid)
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
template <typename Name, typename... Args>
inline SliceTargets BeginSliceOn(uint32_t mask,
                                 const Track& track,
                                 NameRef category,
                                 Name name,
                                 Args&&... args) {
  EventTargets targets(mask);
  ApplyTimestamp(&targets, args...);
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
template <typename Name, typename... Args>
inline TrackSliceTargets BeginSliceOnTrack(uint32_t mask,
                                           NameRef category,
                                           Name name,
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
template <typename Name, typename... Args>
inline auto BeginSlice(uint32_t mask,
                       NameRef category,
                       Name name,
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
  explicit ScopedSlice(Targets begun) : begun_(begun) {}
  ScopedSlice(const ScopedSlice&) = delete;
  ScopedSlice& operator=(const ScopedSlice&) = delete;
  ~ScopedSlice() {
    if (RT_UNLIKELY(begun_.mask != 0))
      EndSlice(begun_);
  }

 private:
  Targets begun_;
};

// RT_TRACE_EVENT's slice: begun by |begin|(mask) if |mask| is not 0, else
// not begun. The arguments reach BeginSlice() through |begin| (a lambda of
// the macro) rather than through a decltype of them, so that they may hold
// a lambda (C++17 allows none in an unevaluated operand). Returned as a
// prvalue: the caller's variable is the slice (no copy, no move).
template <typename Begin>
RT_ALWAYS_INLINE auto StartScopedSlice(uint32_t mask, const Begin& begin) {
  using Targets = decltype(begin(mask));
  return ScopedSlice<Targets>(RT_UNLIKELY(mask != 0) ? begin(mask) : Targets());
}

// One event of |type| on |track| into every target of |mask|.
template <typename Name, typename... Args>
inline void WriteEventOn(uint32_t mask,
                         perfetto::protos::rtzero::TrackEvent::Type type,
                         const Track& track,
                         NameRef category,
                         Name name,
                         Args&&... args) {
  EventTargets targets(mask);
  ApplyTimestamp(&targets, args...);
  while (TrackEventSequence* sequence = targets.Next())
    WriteEvent(sequence, targets.Now(), type, track, category, name, args...);
}
template <typename Name, typename... Args>
inline void WriteEventOnTrack(uint32_t mask,
                              perfetto::protos::rtzero::TrackEvent::Type type,
                              NameRef category,
                              Name name,
                              const Track& track,
                              Args&&... args) {
  WriteEventOn(mask, type, track, category, name, args...);
}

// RT_TRACE_EVENT_BEGIN / RT_TRACE_INSTANT: one event on the Track given
// first among |args|, else on the thread track.
template <typename Name, typename... Args>
inline void WriteThreadEvent(uint32_t mask,
                             perfetto::protos::rtzero::TrackEvent::Type type,
                             NameRef category,
                             Name name,
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
  ApplyTimestamp(&targets, args...);
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
    ApplyTimestamp(&targets, args...);
    while (TrackEventSequence* sequence = targets.Next()) {
      WriteEvent(sequence, targets.Now(),
                 perfetto::protos::rtzero::TrackEvent::Type::TYPE_SLICE_END,
                 Track(), nullptr, nullptr, args...);
    }
  }
}

void WriteCounter(uint32_t mask, NameRef category, NameRef name, int64_t value);
void WriteCounter(uint32_t mask, NameRef category, NameRef name, double value);
void WriteCounter(uint32_t mask,
                  NameRef category,
                  const CounterTrack& track,
                  int64_t value);
void WriteCounter(uint32_t mask,
                  NameRef category,
                  const CounterTrack& track,
                  double value);
// |track|: the counter's name (a string: a string literal is a stable
// NameRef, found by address) or a CounterTrack. A forwarding reference, so
// that a literal and a char buffer keep their own types.
template <typename Track, typename T>
inline void WriteCounterValue(uint32_t mask,
                              NameRef category,
                              Track&& track,
                              T value) {
  static_assert(std::is_arithmetic<T>::value, "counters are numbers");
  using Target =
      std::conditional_t<std::is_same<std::decay_t<Track>, CounterTrack>::value,
                         const CounterTrack&, NameRef>;
  if constexpr (std::is_floating_point<T>::value)
    WriteCounter(mask, category, static_cast<Target>(track),
                 static_cast<double>(value));
  else
    WriteCounter(mask, category, static_cast<Target>(track),
                 static_cast<int64_t>(value));
}

}  // namespace internal
}  // namespace track_event
}  // namespace ringtrace

// Declares the program's categories: string literals, or
// ringtrace::track_event::Category values (a name with a description and
// tags), in any mix.
#define RT_DEFINE_CATEGORIES(...)                                        \
  namespace RT_TRACK_EVENT_NAMESPACE {                                   \
  inline constexpr ::ringtrace::track_event::Category kCategories[] = {  \
      __VA_ARGS__};                                                      \
  inline constexpr size_t kCategoryCount =                               \
      sizeof(kCategories) / sizeof(kCategories[0]);                      \
  static_assert(                                                         \
      ::ringtrace::track_event::internal::AreDeclarable(kCategories,     \
                                                        kCategoryCount), \
      "a category name or tag is empty or holds a '*'");                 \
  inline std::atomic<uint32_t> g_category_mask[kCategoryCount] = {};     \
  inline const ::ringtrace::track_event::internal::CategoryTable         \
      g_category_table(kCategories, g_category_mask, kCategoryCount);    \
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
            ::RT_TRACK_EVENT_NAMESPACE::kCategories,                     \
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

// Whether an event of the declared |category| would be written now: by the
// static spec or by any running instance (Perfetto's
// TRACE_EVENT_CATEGORY_ENABLED). A bool; costs what a disabled event does,
// one relaxed load of the mask, and an undeclared category is a compile
// error. For work done only to trace:
//   if (RT_TRACE_EVENT_CATEGORY_ENABLED("gfx")) Summarize(&frame);
#define RT_TRACE_EVENT_CATEGORY_ENABLED(category) \
  (RT_INTERNAL_CATEGORY_MASK(category) != 0)

// A slice on the thread's track from here to the end of the scope.
// RT_TRACE_EVENT("cat", "name", "arg", value, ...). Optionally a Track
// right after the name (the slice is on that track), and Flow /
// TerminatingFlow values among the arguments.
#define RT_TRACE_EVENT(category, name, ...)                              \
  auto RT_INTERNAL_UID(rt_scoped_slice_) =                               \
      ::ringtrace::track_event::internal::StartScopedSlice(              \
          RT_INTERNAL_CATEGORY_MASK(category), [&](uint32_t rt_mask) {   \
            return ::ringtrace::track_event::internal::BeginSlice(       \
                rt_mask, category,                                       \
                ::ringtrace::track_event::internal::MakeEventName(name), \
                ##__VA_ARGS__);                                          \
          })

// Explicit slice begin and end on the thread's track; every BEGIN needs an
// END on the same thread. END is written when its category is enabled.
// With a Track (right after the name; END's first argument) they are on
// that track and may be on different threads (an async slice):
// RT_TRACE_EVENT_BEGIN("net", "Fetch", track, ...); RT_TRACE_EVENT_END("net",
// track). Arguments as for RT_TRACE_EVENT, END's too (after its Track):
// RT_TRACE_EVENT_END("net", TerminatingFlow::Global(id), "status", 200).
#define RT_TRACE_EVENT_BEGIN(category, name, ...)                            \
  do {                                                                       \
    if (const uint32_t rt_mask = RT_INTERNAL_CATEGORY_MASK(category);        \
        RT_UNLIKELY(rt_mask != 0))                                           \
      ::ringtrace::track_event::internal::WriteThreadEvent(                  \
          rt_mask,                                                           \
          ::perfetto::protos::rtzero::TrackEvent::Type::TYPE_SLICE_BEGIN,    \
          category, ::ringtrace::track_event::internal::MakeEventName(name), \
          ##__VA_ARGS__);                                                    \
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
          category, ::ringtrace::track_event::internal::MakeEventName(name),   \
          ##__VA_ARGS__);                                                      \
  } while (0)

// Dynamic categories: |category| is any string (std::string_view) known only
// at run time, e.g. a plugin's name. Matched like the declared ones (the
// static spec, every instance's patterns) when first used. Costs more than
// a declared category even when disabled: a lookup of the name in a
// per-thread cache (an ordered map of the names this thread used).
#define RT_TRACE_EVENT_DYNAMIC(category, name, ...)                          \
  const ::ringtrace::track_event::internal::DynamicCategory RT_INTERNAL_UID( \
      rt_dyn_) =                                                             \
      ::ringtrace::track_event::internal::GetDynamicCategory(category);      \
  auto RT_INTERNAL_UID(rt_scoped_slice_) =                                   \
      ::ringtrace::track_event::internal::StartScopedSlice(                  \
          RT_INTERNAL_UID(rt_dyn_).mask, [&](uint32_t rt_mask) {             \
            return ::ringtrace::track_event::internal::BeginSlice(           \
                rt_mask,                                                     \
                ::ringtrace::track_event::internal::NameRef::Stable(         \
                    RT_INTERNAL_UID(rt_dyn_).registered),                    \
                ::ringtrace::track_event::internal::MakeEventName(name),     \
                ##__VA_ARGS__);                                              \
          })

#define RT_TRACE_INSTANT_DYNAMIC(category, name, ...)                         \
  do {                                                                        \
    if (const ::ringtrace::track_event::internal::DynamicCategory rt_dyn =    \
            ::ringtrace::track_event::internal::GetDynamicCategory(category); \
        RT_UNLIKELY(rt_dyn.mask != 0))                                        \
      ::ringtrace::track_event::internal::WriteThreadEvent(                   \
          rt_dyn.mask,                                                        \
          ::perfetto::protos::rtzero::TrackEvent::Type::TYPE_INSTANT,         \
          ::ringtrace::track_event::internal::NameRef::Stable(                \
              rt_dyn.registered),                                             \
          ::ringtrace::track_event::internal::MakeEventName(name),            \
          ##__VA_ARGS__);                                                     \
  } while (0)

// A counter value (integer or floating point) on the counter track |name|
// (a string: a track of this process by that name) or on a CounterTrack.
#define RT_TRACE_COUNTER(category, name, value)                                \
  do {                                                                         \
    if (const uint32_t rt_mask = RT_INTERNAL_CATEGORY_MASK(category);          \
        RT_UNLIKELY(rt_mask != 0))                                             \
      ::ringtrace::track_event::internal::WriteCounterValue(rt_mask, category, \
                                                            name, value);      \
  } while (0)

#endif  // INCLUDE_RINGTRACE_INTERNAL_TRACK_EVENT_MACROS_H_
