/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TrackEvent API: one line per event, Perfetto TrackEvent semantics and
// field numbers, written through the generated typed writers
// (protos/perfetto/trace/trace_packet.rtzero.h, docs/encoding.md).
//
//   // Once per program, at namespace scope, in a header every tracing file
//   // includes (it defines inline variables):
//   RT_DEFINE_CATEGORIES(
//       "io",
//       ringtrace::track_event::Category("gfx").SetDescription("Frames"),
//       ringtrace::track_event::Category("gfx.debug").SetTags("debug"));
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
// Categories. Declared statically (a name, or a Category with a description
// and tags, see there); using an undeclared name in a macro is a compile
// error (RT_TRACE_EVENT_DYNAMIC and RT_TRACE_INSTANT_DYNAMIC take a
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
// Every sequence starts with a clear packet (SEQ_INCREMENTAL_STATE_CLEARED,
// the sequence's packet defaults and incremental clock), then the process
// and thread TrackDescriptors (pid, tid, names from the kernel);
// slices go on the thread's track (or on an app Track given to the macro,
// see Track), counters on a counter track per name (its descriptor, like an
// app track's, written once per incremental-state generation, before its
// first use). Flows link events (see Flow).
//
// Timestamps are CLOCK_BOOTTIME nanoseconds, Perfetto's default trace clock,
// read cheaply from the TSC where possible (see NowNs()).
//
// Debug annotations: RT_TRACE_EVENT takes name/value pairs after the event
// name. Values: bool, signed and unsigned integers, float/double, strings
// (const char*, std::string, std::string_view), pointers, and any type with
// a WriteIntoTrace(TracedValue) const member (nested dictionaries and
// arrays, see TracedValue). A lambda taking an EventContext, as the last
// argument, writes further fields and annotations (see EventContext).
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

// A category declaration for RT_DEFINE_CATEGORIES: a name and, optionally,
// a description and up to kMaxTags tags, as Perfetto's perfetto::Category
// has them (TrackEventCategory in its TrackEventDescriptor):
//   RT_DEFINE_CATEGORIES(
//       "io",  // a plain name: no description, no tags
//       ringtrace::track_event::Category("gfx").SetDescription("Frames"),
//       ringtrace::track_event::Category("gfx.frames")
//           .SetDescription("One slice per frame stage")
//           .SetTags("slow"));
// Tags select categories in a TrackEventConfig (enabled_tags,
// disabled_tags): a session enables a category tagged "slow" or "debug" only
// when it asks for it (docs/track_event.md, "Category matching"). The
// producer publishes every declared category, description and tags to the
// service when it registers the track_event data source.
//
// Everything is a compile-time constant: the declarations are read-only
// data, and an event macro still costs one relaxed load of the category's
// mask, whatever the category declares. The strings must live for the
// whole program (string literals). RT_DEFINE_CATEGORIES checks at compile
// time that every name and tag is non-empty and holds no '*' (a '*' is a
// pattern in TrackEventConfig, so such a name could not be selected alone).
class Category {
 public:
  static constexpr size_t kMaxTags = 4;

  constexpr Category(const char* name)  // NOLINT(runtime/explicit)
      : name_(name) {}

  // A copy with |description| (one line of text, null: none).
  constexpr Category SetDescription(const char* description) const {
    Category copy = *this;
    copy.description_ = description;
    return copy;
  }
  // A copy whose tags are |tags| (1..kMaxTags strings), replacing any.
  template <typename... Tags>
  constexpr Category SetTags(Tags... tags) const {
    static_assert(sizeof...(Tags) >= 1 && sizeof...(Tags) <= kMaxTags,
                  "a category has 1..Category::kMaxTags tags");
    static_assert((std::is_convertible<Tags, const char*>::value && ...),
                  "tags are strings");
    const char* const given[] = {tags...};
    Category copy = *this;
    for (size_t i = 0; i < kMaxTags; i++)
      copy.tags_[i] = i < sizeof...(Tags) ? given[i] : nullptr;
    copy.tag_count_ = sizeof...(Tags);
    return copy;
  }

  constexpr const char* name() const { return name_; }
  constexpr const char* description() const { return description_; }
  constexpr size_t tag_count() const { return tag_count_; }
  constexpr const char* tag(size_t i) const { return tags_[i]; }

 private:
  const char* name_;
  const char* description_ = nullptr;
  const char* tags_[kMaxTags] = {};
  size_t tag_count_ = 0;
};

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

// Whether an event of |name| would be written now: the static spec (bit 0)
// or any running instance (a tracing session's "track_event" data source)
// enables it, as Perfetto's TrackEvent::IsCategoryEnabled(). False for an
// unknown name. Takes the registry mutex and looks the name up: for a
// declared category in a hot path, RT_TRACE_EVENT_CATEGORY_ENABLED is one
// relaxed load.
bool IsCategoryEnabled(std::string_view name);
// |name|'s whole mask (0 for an unknown name): bit 0 the static spec, bit i
// the instance in slot i.
uint32_t CategoryMask(std::string_view name);

TrackEventStats Stats();

// Flushes every writer the calling thread writes events into: the writers
// of its ScopedThreadWriter bindings (the innermost and the ones it nests
// in) and its per-thread writers of the data-source instances (running or
// stopped but not yet released), as Perfetto's TrackEvent::Flush(). Each
// writer's finished packets are already published (trace_writer_v2.h, the
// per-packet guarantee); Flush() also publishes those of a writer with
// deferred publication (Publication::kPerChunkRisksLossOnCrash) and tells
// the service a chunk is ready, so a reader sees them without waiting for
// the writer's destruction or the thread's exit. Affects no other thread.
// Not from inside an event's lambda (the event's packet is open).
void Flush();

namespace internal {

// A name the macros intern (an event name, a category, an argument name),
// as the caller gave it. A string literal (a const char array) cannot
// change while the program runs, so it is interned by its address alone: a
// small per-sequence cache, no hashing of the text, no compare. Anything
// else (a char pointer, a writable array) may be a buffer whose text
// changes under the same address, so it is interned by its content. Hence
// a const char array must hold the same text for as long as it may be
// traced (a string literal or a static array does; a const local array
// on the stack does not, pass it as a pointer: `&name[0]`).
class NameRef {
 public:
  template <size_t N>
  constexpr NameRef(const char (&s)[N])  // NOLINT(runtime/explicit)
      : str_(s), stable_(true) {}
  template <size_t N>
  constexpr NameRef(char (&s)[N])  // NOLINT(runtime/explicit)
      : str_(s), stable_(false) {}
  template <typename T,
            typename = std::enable_if_t<std::is_same<T, const char*>::value ||
                                        std::is_same<T, char*>::value>>
  constexpr NameRef(T s)  // NOLINT(runtime/explicit)
      : str_(s), stable_(false) {}
  constexpr NameRef(std::nullptr_t)  // NOLINT(runtime/explicit)
      : str_(nullptr), stable_(false) {}
  // A name whose text never changes at |s| (a registered category name).
  static constexpr NameRef Stable(const char* s) { return NameRef(s, true); }

  constexpr const char* str() const { return str_; }
  constexpr bool stable() const { return stable_; }
  constexpr explicit operator bool() const { return str_ != nullptr; }

 private:
  constexpr NameRef(const char* s, bool stable) : str_(s), stable_(stable) {}

  const char* str_;
  bool stable_;
};

}  // namespace internal

// Event names known only at run time (Perfetto's perfetto::DynamicString):
//   RT_TRACE_EVENT("io", ringtrace::track_event::DynamicString{file_name});
// The name points to the bytes for the duration of the macro's call only
// (they may change or go right after). Such a name is written as it is, in
// TrackEvent.name (23), on every event: not interned, since its text may
// differ at each call, so it costs its length in each event instead of an
// interning lookup. A std::string or std::string_view given as the name is
// the same thing without the wrapper. A string literal keeps the fast
// path: interned by its address (EventName.iid in interned_data, the event
// carries name_iid).
class DynamicString {
 public:
  constexpr explicit DynamicString(std::string_view text)
      : text_(text.data() ? text : std::string_view("")) {}
  explicit DynamicString(const std::string& text) : text_(text) {}
  // Null reads as "".
  constexpr explicit DynamicString(const char* text)
      : text_(text ? std::string_view(text) : std::string_view("")) {}
  constexpr std::string_view text() const { return text_; }

 private:
  std::string_view text_;
};

// A name in a char pointer whose text never changes while the program runs
// (Perfetto's perfetto::StaticString): interned by its address, like a
// string literal. A plain char pointer is interned by its content instead
// (it may be a buffer that changes).
class StaticString {
 public:
  constexpr explicit StaticString(const char* text) : text_(text) {}
  constexpr const char* text() const { return text_; }

 private:
  const char* text_;
};

namespace internal {

// A run-time event name, written as it is (see DynamicString).
class DynamicName {
 public:
  // A null view (std::string_view()) reads as "".
  constexpr explicit DynamicName(std::string_view text)
      : text_(text.data() ? text : std::string_view("")) {}
  constexpr std::string_view text() const { return text_; }

 private:
  std::string_view text_;
};

// The event name of a macro as the event path takes it: a NameRef
// (interned; a string literal stays the address-keyed fast path, with the
// same code as before there were dynamic names), or a DynamicName. The
// type, not a flag, tells them apart, so neither path tests at run time.
template <typename T>
constexpr auto MakeEventName(T&& s) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same<D, DynamicString>::value) {
    return DynamicName(s.text());
  } else if constexpr (std::is_same<D, StaticString>::value) {
    return NameRef::Stable(s.text());
  } else if constexpr (std::is_constructible<NameRef, T&&>::value) {
    return NameRef(static_cast<T&&>(s));
  } else {
    static_assert(std::is_convertible<T&&, std::string_view>::value,
                  "an event name is a string");
    return DynamicName(std::string_view(s));
  }
}

}  // namespace internal

// Track uuids of this process's tracks (distinct for distinct arguments).
uint64_t ProcessTrackUuid();
// The uuid of Track(id) in this process: |id| mixed with
// ProcessTrackUuid() (tag 0 in the top two bits, as Named() tracks; never
// 0).
uint64_t ProcessScopedTrackUuid(uint64_t id);
uint64_t ThreadTrackUuid(int64_t tid);
uint64_t CounterTrackUuid(std::string_view name);

// The process_name of the process TrackDescriptor written by bindings
// created afterwards. Default: program_invocation_short_name.
void SetProcessName(std::string_view name);

// The timestamp of events: CLOCK_BOOTTIME in ns, read from the CPU's
// invariant TSC where the kernel uses it too (scaled and re-anchored to
// CLOCK_BOOTTIME every 10 ms per thread; never decreasing on a thread),
// else from clock_gettime. RINGTRACE_TRACE_CLOCK=boottime forces the latter.
uint64_t NowNs();

// An event's timestamp given by the app, on the NowNs() clock (CLOCK_BOOTTIME
// ns), as Perfetto's TraceTimestamp: for an event that happened before it
// is traced (a completion seen later, a span replayed from a log). Given to
// RT_TRACE_EVENT_BEGIN, RT_TRACE_EVENT_END and RT_TRACE_INSTANT right after
// the name (after the Track, when there is one; END's first argument, or
// second after its Track):
//   RT_TRACE_EVENT_BEGIN("io", "Read",
//   ringtrace::track_event::TraceTimestamp{t0}); RT_TRACE_EVENT_END("io",
//   ringtrace::track_event::TraceTimestamp{t1});
// A type of its own, not a bare integer: the arguments after the name are
// name/value pairs and a number there would read as one of them (or as the
// timestamp when a value was meant). Timestamps need not grow: an earlier
// one than the sequence's latest is written absolute. 0 is not a
// timestamp: such an event is stamped at the call, as without one. With
// RT_TRACE_EVENT the begin carries it; the end is stamped at scope exit.
class TraceTimestamp {
 public:
  constexpr explicit TraceTimestamp(uint64_t ns) : ns_(ns) {}
  constexpr uint64_t ns() const { return ns_; }

 private:
  uint64_t ns_;
};

class TracedDictionary;
class TracedArray;
class TrackEventSequence;

namespace internal {
// A debug annotation's value (defined in internal/track_event_macros.h).
template <typename T>
void WriteValue(perfetto::protos::rtzero::DebugAnnotation annotation,
                const T& value);
}  // namespace internal

// Writes one debug annotation value (Perfetto's perfetto::TracedValue): a
// scalar, or a dictionary or an array of further values (DebugAnnotation's
// dict_entries = 11 and array_values = 12), to any depth. The extension
// point for the app's types: a type with
//   void WriteIntoTrace(ringtrace::track_event::TracedValue v) const;
// is accepted wherever a debug annotation value is (the macros' name/value
// pairs, EventContext::AddDebugAnnotation, TracedDictionary::Add,
// TracedArray::Append), and writes itself through |v|:
//   struct Point {
//     int x, y;
//     void WriteIntoTrace(ringtrace::track_event::TracedValue v) const {
//       auto dict = std::move(v).WriteDictionary();
//       dict.Add("x", x);
//       dict.Add("y", y);
//     }
//   };
//   RT_TRACE_EVENT("gfx", "Move", "to", Point{1, 2});
// A TracedValue is written once (one of the calls below), then dropped; the
// dictionary or array it begins is written before anything else is written
// into the event. Nesting deeper than the writer's limit
// (TraceWriterV2::kMaxNestingDepth, the packet's levels included) writes
// nothing there, and the packet stays well-formed.
class TracedValue {
 public:
  explicit TracedValue(perfetto::protos::rtzero::DebugAnnotation annotation)
      : annotation_(annotation) {}
  TracedValue(TracedValue&&) = default;
  TracedValue(const TracedValue&) = delete;
  TracedValue& operator=(const TracedValue&) = delete;

  void WriteInt64(int64_t v) && { annotation_.set_int_value(v); }
  void WriteUInt64(uint64_t v) && { annotation_.set_uint_value(v); }
  void WriteDouble(double v) && { annotation_.set_double_value(v); }
  void WriteBoolean(bool v) && { annotation_.set_bool_value(v); }
  void WriteString(std::string_view v) && { annotation_.set_string_value(v); }
  void WritePointer(const void* v) && {
    annotation_.set_pointer_value(reinterpret_cast<uintptr_t>(v));
  }
  // Any value the macros take (a scalar, or a type with WriteIntoTrace).
  template <typename T>
  void Write(const T& value) && {
    internal::WriteValue(annotation_, value);
  }
  inline TracedDictionary WriteDictionary() &&;
  inline TracedArray WriteArray() &&;

 private:
  perfetto::protos::rtzero::DebugAnnotation annotation_;
};

// Named entries of a dictionary value (each a dict_entries annotation with
// its name, not interned: the key is written as it is).
class TracedDictionary {
 public:
  explicit TracedDictionary(
      perfetto::protos::rtzero::DebugAnnotation annotation)
      : annotation_(annotation) {}
  template <typename T>
  void Add(std::string_view key, const T& value) {
    AddItem(key).Write(value);
  }
  // The value of entry |key|, to be written by the caller.
  TracedValue AddItem(std::string_view key) {
    perfetto::protos::rtzero::DebugAnnotation entry =
        annotation_.add_dict_entries();
    entry.set_name(key);
    return TracedValue(entry);
  }

 private:
  perfetto::protos::rtzero::DebugAnnotation annotation_;
};

// The values of an array value, in order (array_values annotations).
class TracedArray {
 public:
  explicit TracedArray(perfetto::protos::rtzero::DebugAnnotation annotation)
      : annotation_(annotation) {}
  template <typename T>
  void Append(const T& value) {
    AppendItem().Write(value);
  }
  TracedValue AppendItem() {
    return TracedValue(annotation_.add_array_values());
  }

 private:
  perfetto::protos::rtzero::DebugAnnotation annotation_;
};

TracedDictionary TracedValue::WriteDictionary() && {
  return TracedDictionary(annotation_);
}
TracedArray TracedValue::WriteArray() && {
  return TracedArray(annotation_);
}

// The event a lambda given as the last argument of an event macro writes
// into (Perfetto's perfetto::EventContext):
//   RT_TRACE_EVENT("gfx", "Draw", [&](ringtrace::track_event::EventContext ctx)
//   {
//     ctx.event().add_flow_ids(id);               // typed TrackEvent fields
//     ctx.AddDebugAnnotation("frame", frame);     // and annotations
//   });
// The lambda runs only when the event is written, once per target (the
// binding, each instance), after the macro's other arguments were written
// and before the packet ends. event() is the packet's rtzero TrackEvent
// writer (protos/perfetto/trace/trace_packet.proto: the fields ringtrace
// defines); its type, name, categories and track are written already.
// Its annotation names are written as they are (DebugAnnotation.name), not
// interned: an interned string must come before the event in its packet,
// which is written by then. Not valid after the lambda returns; the lambda
// must not trace (the thread is inside the event) nor call Flush().
class EventContext {
 public:
  EventContext(TrackEventSequence* sequence,
               perfetto::protos::rtzero::TrackEvent event)
      : sequence_(sequence), event_(event) {}

  perfetto::protos::rtzero::TrackEvent event() const { return event_; }
  // A debug annotation |name| = |value| (any value the macros take).
  template <typename T>
  void AddDebugAnnotation(std::string_view name, const T& value) {
    perfetto::protos::rtzero::DebugAnnotation a =
        event_.add_debug_annotations();
    a.set_name(name);
    internal::WriteValue(a, value);
  }
  // The sequence the event goes to (its writer, its interning state).
  TrackEventSequence* sequence() const { return sequence_; }

 private:
  TrackEventSequence* sequence_;
  perfetto::protos::rtzero::TrackEvent event_;
};

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
// Track(id) is scoped to this process, as Perfetto's Track(id) is: its
// uuid in the trace mixes |id| with this process's track uuid, so two
// processes (two copies of one app) that both use Track(7) get two tracks,
// each under its own process. Track::Global(uuid) is the explicit
// exception: that uuid is used as given, one timeline for every process
// that names it. Named() derives a process-scoped uuid from a name and an
// id. A track uses one name per uuid (every descriptor of a uuid must be
// the same). |name| is a string literal or outlives every event on the
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
  // The track |id| (not 0) of this process: a child of the process's
  // track (trace_processor's process-scoped async track) whose uuid is
  // ProcessScopedTrackUuid(id).
  constexpr explicit Track(uint64_t id, const char* name = nullptr)
      : id_(id), name_(name) {}
  // |uuid| (not 0) as given, without a parent: a track of the whole trace,
  // not of this process (trace_processor's global async track).
  static constexpr Track Global(uint64_t uuid, const char* name = nullptr) {
    return Track(uuid, name, Scope::kGlobal);
  }
  // A track of this process whose uuid is derived from the process, |name|
  // and |id|: distinct (name, id) pairs are distinct tracks.
  static Track Named(const char* name, uint64_t id = 0);

  // What the track was made from: the id of Track(id), the uuid of
  // Global() and Named(); 0 for the thread's track.
  constexpr uint64_t id() const { return id_; }
  // The track's uuid in the trace (0: the thread's track, which the
  // sequence's default names).
  uint64_t uuid() const;
  constexpr const char* name() const { return name_; }
  constexpr bool global() const { return scope_ == Scope::kGlobal; }

 private:
  friend class TrackEventSequence;
  enum class Scope : uint8_t {
    kProcessId,  // id_ is mixed with the process track's uuid
    kResolved,   // id_ is the uuid, a child of the process track (Named)
    kGlobal,     // id_ is the uuid, no parent
  };
  constexpr Track(uint64_t uuid, const char* name, Scope scope)
      : id_(uuid), name_(name), scope_(scope) {}
  // uuid() given the process track's uuid (the sequence keeps it, so the
  // event path reads no pid).
  uint64_t UuidUnder(uint64_t process_track_uuid) const;

  uint64_t id_ = 0;
  const char* name_ = nullptr;
  Scope scope_ = Scope::kProcessId;
};

// A counter track the app describes (Perfetto's TrackDescriptor with a
// CounterDescriptor), given to RT_TRACE_COUNTER in place of a bare name:
//   constexpr ringtrace::track_event::CounterTrack kQueue(
//       "queue_depth", ringtrace::track_event::CounterTrack::Unit::UNIT_COUNT);
//   RT_TRACE_COUNTER("io", kQueue, depth);
//   RT_TRACE_COUNTER("mem", CounterTrack::Global("free_bytes",
//                       CounterTrack::Unit::UNIT_SIZE_BYTES), n);
// A CounterTrack is of this process (a child of its process track: the same
// track as RT_TRACE_COUNTER with the bare name, whose descriptor has no
// unit), or global: no parent, one timeline for the whole trace that every
// process writing it shares. Each sequence writes the descriptor (uuid,
// parent, name, unit) before its first value, and again after each
// incremental-state clear, as for app tracks. One name has one unit: a
// process must not describe a track with two. |name| is a string literal
// or outlives every event on the track.
class CounterTrack {
 public:
  using Unit = perfetto::protos::rtzero::CounterDescriptor_Unit;

  constexpr explicit CounterTrack(const char* name,
                                  Unit unit = Unit::UNIT_UNSPECIFIED)
      : name_(name), unit_(unit) {}
  static constexpr CounterTrack Global(const char* name,
                                       Unit unit = Unit::UNIT_UNSPECIFIED) {
    return CounterTrack(name, unit, /*global=*/true);
  }

  constexpr const char* name() const { return name_; }
  constexpr Unit unit() const { return unit_; }
  constexpr bool global() const { return global_; }

 private:
  constexpr CounterTrack(const char* name, Unit unit, bool global)
      : name_(name), unit_(unit), global_(global) {}

  const char* name_;
  Unit unit_;
  bool global_ = false;
};

// The uuid of the global counter track |name| (the same in every process).
uint64_t GlobalCounterTrackUuid(std::string_view name);

// Incremental state. Each binding is one packet sequence. Its incremental
// state (the track descriptors and the interned strings the sequence's
// events refer to) is cleared, and the clear packet (with
// SEQ_INCREMENTAL_STATE_CLEARED) and the process and thread descriptors are
// written again, when any of these holds
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
  // Returns 0 if that descriptor was lost: the event must not be written
  // (the lost descriptor is its counted loss, as for MaybeClear()).
  uint64_t EnsureCounterTrack(std::string_view name, uint64_t now_ns);
  // The same for |track|: its uuid, and its descriptor with its unit.
  uint64_t EnsureCounterTrack(const CounterTrack& track, uint64_t now_ns);
  // Internal, for the macros: EnsureCounterTrack(name), with a stable name
  // found by its address first (a direct-mapped cache emptied at every
  // clear, so a hit means its descriptor is in this generation).
  uint64_t EnsureNamedCounterTrack(internal::NameRef name, uint64_t now_ns) {
    if (RT_LIKELY(name.stable())) {
      const CounterSlot& slot = counter_cache_[CounterCacheIndex(name.str())];
      if (RT_LIKELY(slot.name == name.str()))
        return slot.uuid;
    }
    return EnsureNamedCounterTrackSlow(name, now_ns);
  }
  // Returns |track|'s uuid (the thread track's for Track()), and writes its
  // descriptor (uuid, parent, name) at |now_ns| the first time it is used
  // since the last clear; 0 if that descriptor was lost, as above.
  uint64_t EnsureTrack(const Track& track, uint64_t now_ns) {
    if (RT_LIKELY(track.id() == 0))
      return thread_track_uuid_;
    return EnsureAppTrack(track, now_ns);
  }

  // Number of incremental-state clears written whole (the first one
  // included); a clear whose packets were lost is not counted.
  uint64_t clears() const { return clears_; }

  // Internal, for the macros. Clears the incremental state if due (see
  // IncrementalStateConfig); call before interning for an event. Returns
  // false when the event must not be written: a packet of the clear was
  // lost (the ring had no room), so the event could not be resolved. That
  // lost packet is the event's counted loss (one per event, as if the
  // event itself had been dropped), and the clear is tried again at the
  // next event. The loss and period triggers cost a load and two compares;
  // the byte trigger (the writer's out-of-line stats()) is looked at after
  // as many events as the bytes left before it, at kBytesPerEventAssumed
  // bytes each, allow: at most every kBytesCheckEvents events, and at every
  // event once it is nearer than kBytesPerEventAssumed bytes.
  bool MaybeClear(uint64_t now_ns) {
    if (RT_LIKELY(writer_->loss_events() == loss_events_seen_ &&
                  now_ns - last_clear_ns_ < period_ns_ &&
                  --bytes_check_countdown_ != 0)) {
      return true;
    }
    return MaybeClearSlow(now_ns);
  }
  static constexpr uint32_t kBytesCheckEvents = 16;
  static constexpr uint32_t kBytesPerEventAssumed = 256;
  // The sequence's iid of |s|; a new one is queued for the next
  // WriteEventPrologue(). A stable NameRef is looked up by address in a
  // direct-mapped cache first; a miss, or any other name, by content.
  uint64_t InternName(internal::NameRef s) { return Intern(&names_, s); }
  uint64_t InternCategory(internal::NameRef s) {
    return Intern(&categories_, s);
  }
  uint64_t InternArgName(internal::NameRef s) { return Intern(&arg_names_, s); }
  // Writes timestamp, SEQ_NEEDS_INCREMENTAL_STATE and the queued interned
  // strings into |packet|.
  void WriteEventPrologue(perfetto::protos::rtzero::TracePacket packet,
                          uint64_t now_ns) {
    WritePacketPrologue(packet, now_ns);
    if (RT_UNLIKELY(!names_.pending.empty() || !categories_.pending.empty() ||
                    !arg_names_.pending.empty())) {
      WriteInternedData(packet);
    }
  }

 private:
  struct InternTable {
    // Stable names by address. Emptied at every clear, with the rest.
    struct Slot {
      const char* str = nullptr;
      uint64_t iid = 0;
    };
    static constexpr size_t kCacheBits = 6;
    Slot cache[size_t{1} << kCacheBits];
    std::unordered_map<std::string, uint64_t> by_content;
    // New iids for the next WriteEventPrologue(), with their text (valid
    // until then: the event that interned them writes it).
    std::vector<std::pair<uint64_t, const char*>> pending;
  };
  // The slot of |s| in a direct-mapped cache of 2^kBits slots keyed by
  // address. Fibonacci hashing: the top bits of the address times 2^64/phi.
  template <size_t kBits>
  static size_t AddressSlot(const char* s) {
    return static_cast<size_t>(
        (reinterpret_cast<uintptr_t>(s) * uint64_t{0x9e3779b97f4a7c15}) >>
        (64 - kBits));
  }
  static size_t CacheIndex(const char* s) {
    return AddressSlot<InternTable::kCacheBits>(s);
  }
  uint64_t Intern(InternTable* table, internal::NameRef s) {
    if (RT_LIKELY(s.stable())) {
      const InternTable::Slot& slot = table->cache[CacheIndex(s.str())];
      if (RT_LIKELY(slot.str == s.str()))
        return slot.iid;
    }
    return InternSlow(table, s);
  }
  uint64_t InternSlow(InternTable* table, internal::NameRef s);
  struct CounterSlot {
    const char* name = nullptr;
    uint64_t uuid = 0;
  };
  static constexpr size_t kCounterCacheBits = 4;
  static size_t CounterCacheIndex(const char* s) {
    return AddressSlot<kCounterCacheBits>(s);
  }
  uint64_t EnsureNamedCounterTrackSlow(internal::NameRef name, uint64_t now_ns);
  bool MaybeClearSlow(uint64_t now_ns);
  // The byte trigger is looked at again after the events |bytes_left|
  // (before it fires) allow; see MaybeClear().
  void ScheduleBytesCheck(uint64_t bytes_left);
  // A new generation: the tables emptied, then its packets. Returns false,
  // and stops there, at the first packet of the generation that is lost.
  bool WriteDescriptors(uint64_t now_ns);
  // Has the writer dropped a packet since stats().packets_dropped was
  // |dropped_before|?
  bool LostSince(uint64_t dropped_before) const;
  // A counter track's descriptor (no unit: UNIT_UNSPECIFIED). Returns false
  // if it was lost.
  bool WriteCounterDescriptor(uint64_t uuid,
                              std::string_view name,
                              bool global,
                              CounterTrack::Unit unit,
                              uint64_t now_ns);
  void WriteClearPacket(uint64_t now_ns);
  // Timestamp (on the incremental clock when it can) and
  // SEQ_NEEDS_INCREMENTAL_STATE of every packet after the clear packet.
  void WritePacketPrologue(perfetto::protos::rtzero::TracePacket packet,
                           uint64_t now_ns) {
    if (RT_LIKELY(now_ns >= incremental_clock_ns_)) {
      packet.set_timestamp(now_ns - incremental_clock_ns_);
      incremental_clock_ns_ = now_ns;
    } else {
      WriteAbsoluteTimestamp(packet, now_ns);
    }
    packet.set_sequence_flags(
        static_cast<uint32_t>(perfetto::protos::rtzero::TracePacket::
                                  SequenceFlags::SEQ_NEEDS_INCREMENTAL_STATE));
  }
  // A timestamp before the incremental clock's value, on CLOCK_BOOTTIME.
  static void WriteAbsoluteTimestamp(
      perfetto::protos::rtzero::TracePacket packet,
      uint64_t now_ns);
  // The queued interned strings, emptying the queues.
  void WriteInternedData(perfetto::protos::rtzero::TracePacket packet);
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
  // Counter tracks named by a stable name whose descriptor this generation
  // wrote, by the name's address.
  CounterSlot counter_cache_[size_t{1} << kCounterCacheBits];
  InternTable names_;
  InternTable categories_;
  InternTable arg_names_;
  uint64_t next_iid_ = 1;  // shared by the three tables; 0 is never an iid
  uint64_t last_clear_ns_ = 0;
  // config_.period_ms in ns; UINT64_MAX when that trigger is off.
  const uint64_t period_ns_;
  // The incremental clock's value: the latest timestamp written on it.
  uint64_t incremental_clock_ns_ = 0;
  uint64_t bytes_at_clear_ = 0;
  // writer_->loss_events() after the latest clear that was written whole.
  uint64_t loss_events_seen_ = 0;
  uint32_t bytes_check_countdown_ = kBytesCheckEvents;
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
  friend void Flush();

  ScopedThreadWriter* previous_;
};

}  // namespace track_event
}  // namespace ringtrace

// The machinery the macros expand to, and the macros themselves.
#include "ringtrace/internal/track_event_macros.h"  // IWYU pragma: export

#endif  // INCLUDE_RINGTRACE_TRACK_EVENT_H_
