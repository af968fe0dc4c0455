/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The C API (include/ringtrace/c/ringtrace.h) over the C++ SDK: one
// process-wide ringtrace::TracingBackends (the system connection with the
// track_event data source, the in-process backend, or both), sessions that
// are ringtrace::TracingSessions, run-time category tables registered with
// the TrackEvent registry, and events written through the SDK's per-thread
// sequences (EventTargets, TrackEventSequence) and generated typed writers,
// as the macros write them.

#include "ringtrace/c/ringtrace.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/tracing_backends.h"
#include "ringtrace/tracing_session.h"
#include "ringtrace/track_event.h"
#include "src/tracing/track_event/track_event_instances.h"

namespace rt = perfetto::protos::rtzero;
using ringtrace::track_event::Category;
using ringtrace::track_event::TrackEventSequence;
using ringtrace::track_event::internal::CategoryTable;
using ringtrace::track_event::internal::EventTargets;
using ringtrace::track_event::internal::NameRef;

namespace {
// What a category keeps besides its mask: the strings (which never move:
// the object is never freed nor changed after construction), the SDK's
// declaration pointing into them, and the registered table.
struct CategoryDetails {
  std::string name;
  std::string description;
  std::vector<std::string> tags;
  Category category{""};
  std::unique_ptr<CategoryTable> table;
};
}  // namespace

// The handle. Its first member is the mask RINGTRACE_CATEGORY_ENABLED loads
// (the ABI of the header): a std::atomic<uint32_t> that is a plain 32-bit
// word, stored by the TrackEvent registry (relaxed, see track_event.h
// "Memory order": it publishes no data) and loaded relaxed here and by the
// C side.
struct ringtrace_category {
  std::atomic<uint32_t> mask{0};
  const char* name = nullptr;  // details->name: stable, interned by address
  CategoryDetails* details = nullptr;
};

// A session: the C++ session and the trace once read (read_trace is called
// twice, for the size and for the bytes).
struct ringtrace_session {
  std::unique_ptr<ringtrace::TracingSession> session;
  bool trace_read = false;
  std::string trace;
};

static_assert(std::is_standard_layout<ringtrace_category>::value,
              "the mask must be at offset 0 of the handle");
static_assert(offsetof(ringtrace_category, mask) == 0,
              "RINGTRACE_CATEGORY_ENABLED loads the handle's first word");
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  alignof(std::atomic<uint32_t>) == alignof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "the mask is a plain 32-bit word to C");

namespace {

// The calling thread's last error (a fixed buffer: no allocation and no
// thread-exit destructor).
__thread char t_last_error[256];

int Fail(int code, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
int Fail(int code, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  vsnprintf(t_last_error, sizeof(t_last_error), format, ap);
  va_end(ap);
  return code;
}

// The backends: created by ringtrace_init, destroyed by
// ringtrace_shutdown, both under g_init_mutex. The event paths never touch
// them (they reach the service through the data source's instances).
std::mutex g_init_mutex;
ringtrace::TracingBackends* g_backends = nullptr;  // guarded by g_init_mutex

constexpr uint32_t kAllBackends =
    RINGTRACE_BACKEND_SYSTEM | RINGTRACE_BACKEND_IN_PROCESS;
static_assert(static_cast<uint32_t>(RINGTRACE_BACKEND_SYSTEM) ==
                      static_cast<uint32_t>(ringtrace::kSystemBackend) &&
                  static_cast<uint32_t>(RINGTRACE_BACKEND_IN_PROCESS) ==
                      static_cast<uint32_t>(ringtrace::kInProcessBackend),
              "the C backend bits are the C++ ones");

// The registered categories by name. Never destroyed (the handles live for
// the process).
std::mutex g_categories_mutex;
std::map<std::string, ringtrace_category*>* g_categories =
    nullptr;  // guarded by g_categories_mutex

bool IsPrintableAscii(const char* s, size_t max_length, size_t* length) {
  size_t n = 0;
  for (; s[n] != '\0'; n++) {
    if (n >= max_length || s[n] < 0x20 || s[n] > 0x7e)
      return false;
  }
  *length = n;
  return true;
}

// A category name or tag: 1..RINGTRACE_MAX_NAME_LENGTH printable ASCII, no
// '*' (a pattern in a TrackEventConfig).
bool IsCategoryName(const char* s) {
  size_t length = 0;
  return s != nullptr &&
         IsPrintableAscii(s, RINGTRACE_MAX_NAME_LENGTH, &length) &&
         length > 0 && strchr(s, '*') == nullptr;
}

Category WithTags(Category c, const std::vector<std::string>& tags) {
  static_assert(Category::kMaxTags == RINGTRACE_MAX_TAGS,
                "the C API's tag limit is the SDK's");
  switch (tags.size()) {
    case 1:
      return c.SetTags(tags[0].c_str());
    case 2:
      return c.SetTags(tags[0].c_str(), tags[1].c_str());
    case 3:
      return c.SetTags(tags[0].c_str(), tags[1].c_str(), tags[2].c_str());
    case 4:
      return c.SetTags(tags[0].c_str(), tags[1].c_str(), tags[2].c_str(),
                       tags[3].c_str());
    default:
      return c;
  }
}

// The argument checks of the event functions; RINGTRACE_OK if the event may
// be written.
int CheckEvent(const ringtrace_category* category,
               const char* name,
               uint32_t flags,
               const ringtrace_arg* args,
               size_t arg_count) {
  if (category == nullptr)
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null category");
  if (name == nullptr)
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null event name");
  if ((flags & ~static_cast<uint32_t>(RINGTRACE_STATIC_NAMES)) != 0)
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "unknown flags 0x%x", flags);
  if (arg_count > RINGTRACE_MAX_ARGS) {
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "%zu arguments (at most %d)",
                arg_count, RINGTRACE_MAX_ARGS);
  }
  if (arg_count > 0 && args == nullptr)
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null args, arg_count %zu",
                arg_count);
  for (size_t i = 0; i < arg_count; i++) {
    if (args[i].name == nullptr)
      return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "argument %zu: null name", i);
    if (args[i].type < RINGTRACE_ARG_INT64 ||
        args[i].type > RINGTRACE_ARG_STRING) {
      return Fail(RINGTRACE_ERR_INVALID_ARGUMENT,
                  "argument %zu (%s): unknown type %u", i, args[i].name,
                  args[i].type);
    }
  }
  return RINGTRACE_OK;
}

NameRef Name(const char* s, uint32_t flags) {
  return (flags & RINGTRACE_STATIC_NAMES) ? NameRef::Stable(s) : NameRef(s);
}

void SetArgValue(rt::DebugAnnotation a, const ringtrace_arg& arg) {
  switch (arg.type) {
    case RINGTRACE_ARG_INT64:
      a.set_int_value(arg.value.int64_value);
      break;
    case RINGTRACE_ARG_UINT64:
      a.set_uint_value(arg.value.uint64_value);
      break;
    case RINGTRACE_ARG_DOUBLE:
      a.set_double_value(arg.value.double_value);
      break;
    case RINGTRACE_ARG_BOOL:
      a.set_bool_value(arg.value.bool_value != 0);
      break;
    default:  // RINGTRACE_ARG_STRING (CheckEvent refused the others)
      a.set_string_value(arg.value.string_value ? arg.value.string_value
                                                : "(null)");
      break;
  }
}

// One event packet into |sequence|, as the macros' WriteEvent writes it on
// the thread's track, with run-time arguments: the interning first (its
// strings go into the packet's prologue), then the packet.
void WriteEvent(TrackEventSequence* sequence,
                uint64_t now,
                rt::TrackEvent::Type type,
                const ringtrace_category* category,
                const char* name,
                uint32_t flags,
                const ringtrace_arg* args,
                size_t arg_count) {
  // false: a packet of a due clear was lost, the event's counted loss.
  if (RT_UNLIKELY(!sequence->MaybeClear(now)))
    return;
  const uint64_t category_iid =
      sequence->InternCategory(NameRef::Stable(category->name));
  const uint64_t name_iid = sequence->InternName(Name(name, flags));
  uint64_t arg_iids[RINGTRACE_MAX_ARGS];
  for (size_t i = 0; i < arg_count; i++)
    arg_iids[i] = sequence->InternArgName(Name(args[i].name, flags));
  auto handle = sequence->writer()->NewTracePacket();
  rt::TracePacket packet(handle);
  sequence->WriteEventPrologue(packet, now);
  rt::TrackEvent event = packet.set_track_event();
  event.set_type(type);
  event.add_category_iids(category_iid);
  event.set_name_iid(name_iid);
  for (size_t i = 0; i < arg_count; i++) {
    rt::DebugAnnotation a = event.add_debug_annotations();
    a.set_name_iid(arg_iids[i]);
    SetArgValue(a, args[i]);
  }
}

int Event(rt::TrackEvent::Type type,
          const ringtrace_category* category,
          const char* name,
          uint32_t flags,
          const ringtrace_arg* args,
          size_t arg_count) {
  const uint32_t mask =
      category ? category->mask.load(std::memory_order_relaxed) : 0;
  if (RT_LIKELY(mask == 0))
    return category ? RINGTRACE_OK
                    : Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null category");
  const int status = CheckEvent(category, name, flags, args, arg_count);
  if (RT_UNLIKELY(status != RINGTRACE_OK))
    return status;
  EventTargets targets(mask);
  while (TrackEventSequence* sequence = targets.Next()) {
    WriteEvent(sequence, targets.Now(), type, category, name, flags, args,
               arg_count);
  }
  return RINGTRACE_OK;
}

template <typename T>
int Counter(const ringtrace_category* category,
            const char* name,
            uint32_t flags,
            T value) {
  const uint32_t mask =
      category ? category->mask.load(std::memory_order_relaxed) : 0;
  if (RT_LIKELY(mask == 0))
    return category ? RINGTRACE_OK
                    : Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null category");
  const int status = CheckEvent(category, name, flags, nullptr, 0);
  if (RT_UNLIKELY(status != RINGTRACE_OK))
    return status;
  ringtrace::track_event::internal::WriteCounter(
      mask, NameRef::Stable(category->name), Name(name, flags), value);
  return RINGTRACE_OK;
}

// A session call's status as a return code.
int SessionResult(const ringtrace::base::Status& status) {
  return status.ok()
             ? RINGTRACE_OK
             : Fail(RINGTRACE_ERR_FAILED, "%s", status.message().c_str());
}

// The producer name for |given| (NULL: the program's name if usable).
bool ProducerName(const char* given, std::string* name) {
  size_t length = 0;
  if (given != nullptr) {
    if (!IsPrintableAscii(given, 64, &length) || length == 0)
      return false;
    *name = given;
    return true;
  }
  const char* program = program_invocation_short_name;
  if (program != nullptr && IsPrintableAscii(program, 64, &length) &&
      length > 0) {
    *name = program;
  }
  return true;  // else the SDK's default name stays
}

// The versioned options structs of the API (struct_size and abi_version
// first): zeroed and stamped by their *_set_defaults functions, checked
// against this library's layout where they are used.
template <typename Options>
int ResetOptions(Options* options, uint32_t struct_size, uint32_t abi_version) {
  if (options == nullptr)
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null options");
  memset(options, 0, sizeof(*options));
  options->struct_size = struct_size;
  options->abi_version = abi_version;
  return RINGTRACE_OK;
}
template <typename Options>
int CheckOptionsAbi(const Options& options, const char* what) {
  if (options.abi_version == RINGTRACE_C_ABI_VERSION &&
      options.struct_size == sizeof(Options)) {
    return RINGTRACE_OK;
  }
  return Fail(RINGTRACE_ERR_ABI_MISMATCH,
              "%s of ABI version %u, size %u; this library has ABI version "
              "%u, size %zu",
              what, options.abi_version, options.struct_size,
              RINGTRACE_C_ABI_VERSION, sizeof(Options));
}

}  // namespace

extern "C" {

uint32_t ringtrace_abi_version(void) {
  return RINGTRACE_C_ABI_VERSION;
}

const char* ringtrace_last_error(void) {
  return t_last_error;
}

int ringtrace_init_options_set_defaults(ringtrace_init_options* options,
                                        uint32_t struct_size,
                                        uint32_t abi_version) {
  const int result = ResetOptions(options, struct_size, abi_version);
  if (result == RINGTRACE_OK)
    options->backends = RINGTRACE_BACKEND_SYSTEM;
  return result;
}

int ringtrace_init(const ringtrace_init_options* options) {
  ringtrace_init_options defaults;
  ringtrace_init_options_default(&defaults);
  if (options == nullptr)
    options = &defaults;
  if (const int result = CheckOptionsAbi(*options, "options");
      result != RINGTRACE_OK) {
    return result;
  }
  if (options->backends == 0)
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "no backend");
  if ((options->backends & ~kAllBackends) != 0) {
    return Fail(RINGTRACE_ERR_UNSUPPORTED,
                "backends 0x%x: this library has RINGTRACE_BACKEND_SYSTEM "
                "(0x%x) and RINGTRACE_BACKEND_IN_PROCESS (0x%x)",
                options->backends, RINGTRACE_BACKEND_SYSTEM,
                RINGTRACE_BACKEND_IN_PROCESS);
  }
  ringtrace::TracingInitArgs args;
  args.backends = options->backends;
  if (options->producer_socket_path != nullptr)
    args.system.producer.socket_path = options->producer_socket_path;
  if (!ProducerName(options->producer_name, &args.system.producer.name)) {
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT,
                "producer name: 1..64 printable ASCII characters");
  }
  args.in_process.producer.name = args.system.producer.name;
  std::lock_guard<std::mutex> lock(g_init_mutex);
  if (g_backends != nullptr)
    return Fail(RINGTRACE_ERR_ALREADY_INITIALIZED, "already initialized");
  ringtrace::base::Status status;
  std::unique_ptr<ringtrace::TracingBackends> backends =
      ringtrace::TracingBackends::Initialize(args, &status);
  if (!backends)
    return Fail(RINGTRACE_ERR_FAILED, "%s", status.message().c_str());
  g_backends = backends.release();
  ringtrace::Tracing* system = g_backends->tracing(ringtrace::kSystemBackend);
  if (system != nullptr && options->wait_for_connection_ms > 0) {
    system->WaitForConnection(
        0, static_cast<int>(
               std::min<uint32_t>(options->wait_for_connection_ms, INT32_MAX)));
  }
  return RINGTRACE_OK;
}

int ringtrace_is_connected(void) {
  std::lock_guard<std::mutex> lock(g_init_mutex);
  if (g_backends == nullptr)
    return 0;
  for (ringtrace::BackendType backend :
       {ringtrace::kSystemBackend, ringtrace::kInProcessBackend}) {
    ringtrace::Tracing* tracing = g_backends->tracing(backend);
    if ((g_backends->backends() & backend) != 0 &&
        (tracing == nullptr || !tracing->connected())) {
      return 0;
    }
  }
  return 1;
}

int ringtrace_flush(void) {
  ringtrace::track_event::Flush();
  // The writers of sessions that ended, which would otherwise wait for the
  // thread's next event or its exit (each keeps its connection alive).
  ringtrace::track_event::ReleaseStoppedInstanceWriters();
  return RINGTRACE_OK;
}

int ringtrace_shutdown(void) {
  ringtrace::track_event::Flush();
  std::lock_guard<std::mutex> lock(g_init_mutex);
  if (g_backends == nullptr)
    return Fail(RINGTRACE_ERR_NOT_INITIALIZED, "not initialized");
  // Stops the in-process service (its sessions are written), the instances
  // (their masks' bits go) and the connections.
  delete g_backends;
  g_backends = nullptr;
  // The calling thread's writers of the instances just stopped: the last
  // of them closes the connection now, not at the thread's exit. (Other
  // threads release theirs at their next event or exit.)
  ringtrace::track_event::ReleaseStoppedInstanceWriters();
  return RINGTRACE_OK;
}

int ringtrace_category_register(const char* name,
                                const char* description,
                                const char* const* tags,
                                size_t tag_count,
                                ringtrace_category** out) {
  if (out == nullptr)
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null out");
  *out = nullptr;
  if (!IsCategoryName(name)) {
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT,
                "category name: 1..%d printable ASCII characters, no '*'",
                RINGTRACE_MAX_NAME_LENGTH);
  }
  size_t length = 0;
  if (description != nullptr &&
      !IsPrintableAscii(description, RINGTRACE_MAX_DESCRIPTION_LENGTH,
                        &length)) {
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT,
                "category %s: description: at most %d printable ASCII "
                "characters",
                name, RINGTRACE_MAX_DESCRIPTION_LENGTH);
  }
  if (tag_count > RINGTRACE_MAX_TAGS || (tag_count > 0 && tags == nullptr)) {
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT,
                "category %s: %zu tags (at most %d, non-null)", name, tag_count,
                RINGTRACE_MAX_TAGS);
  }
  for (size_t i = 0; i < tag_count; i++) {
    if (!IsCategoryName(tags[i])) {
      return Fail(RINGTRACE_ERR_INVALID_ARGUMENT,
                  "category %s: tag %zu: 1..%d printable ASCII characters, "
                  "no '*'",
                  name, i, RINGTRACE_MAX_NAME_LENGTH);
    }
  }
  std::lock_guard<std::mutex> lock(g_categories_mutex);
  if (g_categories == nullptr)
    g_categories = new std::map<std::string, ringtrace_category*>();
  auto it = g_categories->find(name);
  if (it != g_categories->end()) {
    *out = it->second;
    return RINGTRACE_OK;
  }
  // Never freed (see the header).
  auto* d = new CategoryDetails();
  d->name = name;
  if (description != nullptr && description[0] != '\0')
    d->description = description;
  for (size_t i = 0; i < tag_count; i++)
    d->tags.emplace_back(tags[i]);
  Category category(d->name.c_str());
  if (!d->description.empty())
    category = category.SetDescription(d->description.c_str());
  d->category = WithTags(category, d->tags);
  auto* c = new ringtrace_category();
  c->name = d->name.c_str();
  c->details = d;
  // Registers the table: $RT_TRACE_CATEGORIES and the running instances
  // set the mask's bits from here on.
  d->table = std::make_unique<CategoryTable>(&d->category, &c->mask, 1);
  g_categories->emplace(d->name, c);
  *out = c;
  return RINGTRACE_OK;
}

int ringtrace_category_enabled(const ringtrace_category* category) {
  return category != nullptr &&
                 category->mask.load(std::memory_order_relaxed) != 0
             ? 1
             : 0;
}

int ringtrace_slice_begin(const ringtrace_category* category,
                          const char* name,
                          uint32_t flags,
                          const ringtrace_arg* args,
                          size_t arg_count) {
  return Event(rt::TrackEvent::Type::TYPE_SLICE_BEGIN, category, name, flags,
               args, arg_count);
}

int ringtrace_slice_end(const ringtrace_category* category) {
  const uint32_t mask =
      category ? category->mask.load(std::memory_order_relaxed) : 0;
  if (RT_UNLIKELY(mask != 0))
    ringtrace::track_event::internal::WriteSliceEnd(mask);
  return category ? RINGTRACE_OK
                  : Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null category");
}

int ringtrace_instant(const ringtrace_category* category,
                      const char* name,
                      uint32_t flags,
                      const ringtrace_arg* args,
                      size_t arg_count) {
  return Event(rt::TrackEvent::Type::TYPE_INSTANT, category, name, flags, args,
               arg_count);
}

int ringtrace_counter_int64(const ringtrace_category* category,
                            const char* name,
                            uint32_t flags,
                            int64_t value) {
  return Counter(category, name, flags, value);
}

int ringtrace_counter_double(const ringtrace_category* category,
                             const char* name,
                             uint32_t flags,
                             double value) {
  return Counter(category, name, flags, value);
}

int ringtrace_session_options_set_defaults(ringtrace_session_options* options,
                                           uint32_t struct_size,
                                           uint32_t abi_version) {
  const int result = ResetOptions(options, struct_size, abi_version);
  if (result == RINGTRACE_OK)
    options->backend = RINGTRACE_BACKEND_IN_PROCESS;
  return result;
}

int ringtrace_session_new(const ringtrace_session_options* options,
                          const char* config,
                          int output_fd,
                          ringtrace_session** out) {
  ringtrace_session_options defaults;
  ringtrace_session_options_default(&defaults);
  if (options == nullptr)
    options = &defaults;
  if (out == nullptr)
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null out");
  *out = nullptr;
  if (const int result = CheckOptionsAbi(*options, "session options");
      result != RINGTRACE_OK) {
    return result;
  }
  if (config == nullptr)
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null config");
  if (options->backend != RINGTRACE_BACKEND_SYSTEM &&
      options->backend != RINGTRACE_BACKEND_IN_PROCESS) {
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT,
                "backend 0x%x: RINGTRACE_BACKEND_SYSTEM or "
                "RINGTRACE_BACKEND_IN_PROCESS",
                options->backend);
  }
  ringtrace::TracingSessionOptions session_options;
  if (options->timeout_ms != 0) {
    session_options.timeout_ms =
        static_cast<int>(std::min<uint32_t>(options->timeout_ms, INT32_MAX));
  }
  ringtrace::base::Status status;
  std::unique_ptr<ringtrace::TracingSession> session;
  if (options->backend == RINGTRACE_BACKEND_SYSTEM) {
    if (options->consumer_socket_path != nullptr)
      session_options.consumer_socket_path = options->consumer_socket_path;
    session = ringtrace::TracingSession::Connect(session_options, &status);
  } else {
    std::lock_guard<std::mutex> lock(g_init_mutex);
    if (g_backends == nullptr || g_backends->in_process() == nullptr) {
      return Fail(RINGTRACE_ERR_NOT_INITIALIZED,
                  "the in-process backend is not running (ringtrace_init "
                  "with RINGTRACE_BACKEND_IN_PROCESS)");
    }
    session = g_backends->in_process()->NewSession(session_options, &status);
  }
  if (!session)
    return Fail(RINGTRACE_ERR_FAILED, "%s", status.message().c_str());
  status = session->SetupFromText(config, output_fd);
  if (!status.ok())
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "%s", status.message().c_str());
  auto* s = new ringtrace_session();
  s->session = std::move(session);
  *out = s;
  return RINGTRACE_OK;
}

int ringtrace_session_start(ringtrace_session* session) {
  if (session == nullptr)
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null session");
  return SessionResult(session->session->StartBlocking());
}

int ringtrace_session_flush(ringtrace_session* session, uint32_t timeout_ms) {
  if (session == nullptr)
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null session");
  return SessionResult(session->session->FlushBlocking(timeout_ms));
}

int ringtrace_session_stop(ringtrace_session* session) {
  if (session == nullptr)
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null session");
  return SessionResult(session->session->StopBlocking());
}

int ringtrace_session_read_trace(ringtrace_session* session,
                                 void* buffer,
                                 size_t capacity,
                                 size_t* size) {
  if (session == nullptr || size == nullptr)
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null session or size");
  *size = 0;
  if (buffer == nullptr && capacity != 0)
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null buffer, capacity %zu",
                capacity);
  if (!session->trace_read) {
    const ringtrace::base::Status status =
        session->session->ReadTraceBlocking(&session->trace);
    if (!status.ok())
      return Fail(RINGTRACE_ERR_FAILED, "%s", status.message().c_str());
    session->trace_read = true;
  }
  *size = session->trace.size();
  if (buffer == nullptr)
    return RINGTRACE_OK;
  if (capacity < session->trace.size()) {
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT,
                "the trace is %zu bytes, the buffer %zu", session->trace.size(),
                capacity);
  }
  memcpy(buffer, session->trace.data(), session->trace.size());
  return RINGTRACE_OK;
}

int ringtrace_session_summary(ringtrace_session* session,
                              uint64_t* packets_written,
                              uint64_t* packets_lost) {
  if (session == nullptr)
    return Fail(RINGTRACE_ERR_INVALID_ARGUMENT, "null session");
  if (!session->session->ended())
    return Fail(RINGTRACE_ERR_FAILED, "the session has not ended");
  const ringtrace::TracingSessionSummary summary = session->session->summary();
  if (packets_written != nullptr)
    *packets_written = summary.packets_written;
  if (packets_lost != nullptr)
    *packets_lost = summary.packets_lost;
  return RINGTRACE_OK;
}

void ringtrace_session_destroy(ringtrace_session* session) {
  delete session;
}

}  // extern "C"
