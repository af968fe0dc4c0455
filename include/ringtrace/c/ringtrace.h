/*
 * Copyright (C) 2026 The ringtrace authors.
 */

/*
 * The C API of ringtrace: the TrackEvent SDK for C and for other languages
 * (through a foreign function interface such as Python's ctypes). Plain C:
 * it compiles as C89 (with <stdint.h>), C99 and later, and as C++; no C++
 * type crosses it. The implementation is the C++ SDK (ringtrace/tracing.h,
 * ringtrace/track_event.h): the same writers, encoder, rings and loss
 * accounting, so a C event is the same packet a C++ macro writes.
 * docs/c_api.md has the guide and the measured costs.
 *
 *   #include "ringtrace/c/ringtrace.h"
 *
 *   static ringtrace_category* cat;
 *
 *   int main(void) {
 *     ringtrace_init_options options;
 *     ringtrace_arg arg;
 *     ringtrace_init_options_default(&options);   (the default socket)
 *     options.producer_name = "my_c_app";
 *     if (ringtrace_category_register("app", "My app", NULL, 0, &cat) ||
 *         ringtrace_init(&options)) {
 *       fprintf(stderr, "ringtrace: %s\n", ringtrace_last_error());
 *       return 1;
 *     }
 *     arg.name = "frame";
 *     arg.type = RINGTRACE_ARG_INT64;
 *     arg.value.int64_value = 1;
 *     RINGTRACE_SLICE_BEGIN(cat, "Draw", &arg, 1);
 *     ...
 *     RINGTRACE_SLICE_END(cat);
 *     RINGTRACE_COUNTER_INT64(cat, "queue", 3);
 *     ringtrace_shutdown();
 *     return 0;
 *   }
 *
 * Backends. ringtrace_init() connects the process to the tracing service
 * ringtraced (RINGTRACE_BACKEND_SYSTEM), as ringtrace::Tracing does: in the
 * background, with reconnects; or starts the service inside the process
 * (RINGTRACE_BACKEND_IN_PROCESS, ringtrace/in_process_backend.h: no daemon,
 * its sessions record this process); or both (ringtrace/tracing_backends.h).
 * Every session that lists the "track_event" data source enables the
 * categories its TrackEventConfig selects (docs/track_event.md, "Category
 * matching"), each into its own buffers.
 *
 * Sessions. ringtrace_session_new() and the ringtrace_session_* functions
 * record a trace (ringtrace::TracingSession): on the in-process backend
 * (this process's events, with no daemon) or on ringtraced's consumer
 * socket (RINGTRACE_BACKEND_SYSTEM; no ringtrace_init() needed). The config
 * is a TraceConfig in Perfetto's text format; the trace goes to a file
 * descriptor or into memory.
 *
 * Categories are registered at run time, before or after ringtrace_init()
 * (the service learns of one registered after the connection, for its
 * listings, at the next connection; sessions enable it at once either way),
 * and live for the whole process. Each has an enabled mask that the
 * library stores atomically; RINGTRACE_CATEGORY_ENABLED() reads it with
 * one relaxed load and a branch, as the C++ macros do, and the event macros
 * below test it before calling into the library.
 *
 * Events are written on the calling thread's track: slices (begin, end:
 * they nest per thread; an end is written when its category is enabled at
 * the end, as RT_TRACE_EVENT_END), instants, counters (int64, double) on a
 * counter track per name, with debug annotations (int64, uint64, double,
 * bool, string) on slices and instants. Timestamps are CLOCK_BOOTTIME.
 *
 * Names. An event's name and its arguments' names are interned (written
 * once per sequence, then referred to by number). With
 * RINGTRACE_STATIC_NAMES in |flags| the library interns them by address,
 * the fast path of the C++ macros' string literals: the caller promises
 * that the text at each of those addresses never changes while the
 * process runs (string literals and static constant strings). Without it,
 * they are interned by content (a hash lookup), and may be any buffer that
 * is valid for the call. String argument values are always copied.
 *
 * Errors. Every fallible function returns RINGTRACE_OK (0) or one of the
 * RINGTRACE_ERR_* codes, and ringtrace_last_error() then says why (the
 * calling thread's last error). Misuse is an error, never a crash: NULL
 * handles and strings, unknown argument types, an options struct of
 * another ABI, calls before ringtrace_init() or after ringtrace_shutdown()
 * (events then go nowhere: a disabled category, or, for a category enabled
 * by $RT_TRACE_CATEGORIES with no session, the loss counted in the C++
 * SDK's TrackEventStats::events_without_writer). An event of a disabled
 * category returns RINGTRACE_OK and costs the load and the branch (the
 * macros) or a call, the load and the branch (the functions).
 *
 * Thread model: every function may be called from any thread. A thread's
 * events go through its own writer per session (created at its first
 * event, released when it exits). ringtrace_init() and ringtrace_shutdown()
 * are serialized with each other; events may go on in other threads while
 * they run. Not from a signal handler.
 *
 * ABI. RINGTRACE_C_ABI_VERSION names this header's ABI: the layout of the
 * structs below, the meaning of the constants, and the first member of a
 * ringtrace_category (the mask RINGTRACE_CATEGORY_ENABLED reads). An
 * incompatible change increments it; an added function or an added enum
 * value does not. ringtrace_init() refuses options of another ABI version
 * or size (RINGTRACE_ERR_ABI_MISMATCH), and ringtrace_abi_version() tells a
 * caller that loads the library at run time which one it has.
 */

#ifndef INCLUDE_RINGTRACE_C_RINGTRACE_H_
#define INCLUDE_RINGTRACE_C_RINGTRACE_H_

#include <stddef.h>
#include <stdint.h>

#define RINGTRACE_C_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes. */
enum {
  RINGTRACE_OK = 0,
  /* A NULL handle or string, a bad name, an unknown argument type, ... */
  RINGTRACE_ERR_INVALID_ARGUMENT = 1,
  /* ringtrace_shutdown() or ringtrace_is_connected() before init. */
  RINGTRACE_ERR_NOT_INITIALIZED = 2,
  /* ringtrace_init() twice without ringtrace_shutdown() between. */
  RINGTRACE_ERR_ALREADY_INITIALIZED = 3,
  /* Options of another RINGTRACE_C_ABI_VERSION or struct size. */
  RINGTRACE_ERR_ABI_MISMATCH = 4,
  /* A backend this library does not have. */
  RINGTRACE_ERR_UNSUPPORTED = 5,
  /* The SDK refused (the message is the SDK's reason). */
  RINGTRACE_ERR_FAILED = 6
};

/* The ABI version of the loaded library (RINGTRACE_C_ABI_VERSION of the
 * header it was built with). */
uint32_t ringtrace_abi_version(void);

/* The calling thread's last error message: "" before any error. Valid until
 * the thread's next call into the library. Never NULL. */
const char* ringtrace_last_error(void);

/* ringtrace_init_options.backends: a bit set. */
enum {
  /* The tracing service ringtraced, over its producer socket. */
  RINGTRACE_BACKEND_SYSTEM = 1,
  /* The tracing service inside this process, on a private socket pair
   * (docs/in_process.md): no daemon; its sessions record this process. */
  RINGTRACE_BACKEND_IN_PROCESS = 2
};

typedef struct ringtrace_init_options {
  /* sizeof(ringtrace_init_options) and RINGTRACE_C_ABI_VERSION as the
   * caller was compiled with (ringtrace_init_options_default sets them). */
  uint32_t struct_size;
  uint32_t abi_version;
  /* RINGTRACE_BACKEND_* bits; at least one. */
  uint32_t backends;
  /* Block in ringtrace_init() up to this long for the first connection to
   * ringtraced (0: return at once; it connects in the background either
   * way, and ringtrace_is_connected() says when it did). The in-process
   * backend is connected when ringtrace_init() returns. */
  uint32_t wait_for_connection_ms;
  /* ringtraced's producer socket. NULL or "": the default that ringtraced
   * and the C++ SDK use ($RINGTRACE_PRODUCER_SOCK, else
   * $XDG_RUNTIME_DIR/ringtrace/producer.sock, ..., docs/sessions.md). */
  const char* producer_socket_path;
  /* The name the service shows (1..64 printable ASCII), on each backend.
   * NULL: the program's name, if it is such a name, else
   * "ringtrace_producer". */
  const char* producer_name;
} ringtrace_init_options;

/* Fills |options| with the defaults: this header's size and ABI version,
 * RINGTRACE_BACKEND_SYSTEM, no wait, the default socket and name. A macro,
 * so that the size and version are the caller's. */
#define ringtrace_init_options_default(options)            \
  ringtrace_init_options_set_defaults(                     \
      (options), (uint32_t)sizeof(ringtrace_init_options), \
      (uint32_t)RINGTRACE_C_ABI_VERSION)
/* What the macro calls. Returns RINGTRACE_ERR_INVALID_ARGUMENT for NULL. */
int ringtrace_init_options_set_defaults(ringtrace_init_options* options,
                                        uint32_t struct_size,
                                        uint32_t abi_version);

/* Starts tracing with |options| (NULL: the defaults). The options' strings
 * are copied. Errors: RINGTRACE_ERR_ALREADY_INITIALIZED,
 * RINGTRACE_ERR_ABI_MISMATCH, RINGTRACE_ERR_UNSUPPORTED (unknown backend
 * bits), RINGTRACE_ERR_INVALID_ARGUMENT (no backend, a bad name),
 * RINGTRACE_ERR_FAILED (e.g. the in-process backend could not start). A
 * missing ringtraced is no error (see wait_for_connection_ms). */
int ringtrace_init(const ringtrace_init_options* options);

/* 1 while every backend ringtrace_init() chose is connected, 0 while not
 * (or not initialized). */
int ringtrace_is_connected(void);

/* Flushes the calling thread's writers (the C++ SDK's
 * ringtrace::track_event::Flush()): its finished events are published to
 * the service. Then releases its writers of sessions that ended (else
 * released at the thread's next event or exit). Other threads are not
 * affected. */
int ringtrace_flush(void);

/* Flushes the calling thread, disconnects from the service (every session
 * stops getting this process's events; the calling thread's writers are
 * released, another thread's at its next event or exit, the last of them
 * closing the connection) and ringtrace_init() may be called again. The
 * in-process backend stops: each of its sessions still running is stopped
 * and its trace written; later calls on them fail (destroy them still).
 * Categories stay registered.
 * Errors: RINGTRACE_ERR_NOT_INITIALIZED. */
int ringtrace_shutdown(void);

/* A category (opaque; see the ABI note above). Never freed. */
typedef struct ringtrace_category ringtrace_category;

enum {
  RINGTRACE_MAX_NAME_LENGTH = 128,
  RINGTRACE_MAX_DESCRIPTION_LENGTH = 1024,
  RINGTRACE_MAX_TAGS = 4
};

/* Registers the category |name| (1..RINGTRACE_MAX_NAME_LENGTH printable
 * ASCII characters, no '*'), with |description| (NULL: none) and
 * |tag_count| tags (each a name as |name|; 0..RINGTRACE_MAX_TAGS; |tags|
 * may be NULL when 0). Tags select categories in a TrackEventConfig
 * (enabled_tags / disabled_tags; a category tagged "slow" or "debug" is
 * enabled only when asked for). Every string is copied. *out receives the
 * handle, valid for the process's life. Registering a name again returns
 * the first registration's handle (its description and tags stay). */
int ringtrace_category_register(const char* name,
                                const char* description,
                                const char* const* tags,
                                size_t tag_count,
                                ringtrace_category** out);

/* Whether an event of |category| would be written now (by a running
 * session, or by $RT_TRACE_CATEGORIES): 1 or 0; 0 for NULL. */
int ringtrace_category_enabled(const ringtrace_category* category);

/* The same inline: one relaxed atomic load of the category's mask and a
 * branch (with GCC and Clang; the function elsewhere). |category| is
 * evaluated more than once. */
#if defined(__GNUC__) || defined(__clang__)
#define RINGTRACE_CATEGORY_ENABLED(category)                 \
  ((category) != NULL &&                                     \
   __atomic_load_n((const uint32_t*)(const void*)(category), \
                   __ATOMIC_RELAXED) != 0)
#else
#define RINGTRACE_CATEGORY_ENABLED(category) \
  (ringtrace_category_enabled(category) != 0)
#endif

/* A debug annotation of an event: |name| = |value| of |type|. */
enum {
  RINGTRACE_ARG_INT64 = 1,
  RINGTRACE_ARG_UINT64 = 2,
  RINGTRACE_ARG_DOUBLE = 3,
  RINGTRACE_ARG_BOOL = 4,  /* value.bool_value: 0 false, else true */
  RINGTRACE_ARG_STRING = 5 /* value.string_value; NULL reads "(null)" */
};
enum { RINGTRACE_MAX_ARGS = 32 };

typedef struct ringtrace_arg {
  const char* name;
  uint32_t type; /* RINGTRACE_ARG_* */
  union {
    int64_t int64_value;
    uint64_t uint64_value;
    double double_value;
    int32_t bool_value;
    const char* string_value;
  } value;
} ringtrace_arg;

/* |flags| of the event functions. */
enum {
  /* The event name and the argument names never change at their addresses
   * (see "Names" above): interned by address. */
  RINGTRACE_STATIC_NAMES = 1
};

/* The event functions. Each returns RINGTRACE_OK or
 * RINGTRACE_ERR_INVALID_ARGUMENT (NULL category or name, args NULL with
 * arg_count > 0, more than RINGTRACE_MAX_ARGS, an argument with a NULL name
 * or an unknown type, an unknown flag; nothing is written). The arguments
 * after the category are checked only when the category is enabled: a
 * disabled event costs the load and the branch, and returns RINGTRACE_OK
 * (a NULL category is always an error). */

/* A slice begins on the calling thread's track. */
int ringtrace_slice_begin(const ringtrace_category* category,
                          const char* name,
                          uint32_t flags,
                          const ringtrace_arg* args,
                          size_t arg_count);
/* The thread's innermost slice ends (when |category| is enabled now). */
int ringtrace_slice_end(const ringtrace_category* category);
/* A zero-duration event on the calling thread's track. */
int ringtrace_instant(const ringtrace_category* category,
                      const char* name,
                      uint32_t flags,
                      const ringtrace_arg* args,
                      size_t arg_count);
/* A value on the process's counter track |name| (flags: as above, for
 * |name|). */
int ringtrace_counter_int64(const ringtrace_category* category,
                            const char* name,
                            uint32_t flags,
                            int64_t value);
int ringtrace_counter_double(const ringtrace_category* category,
                             const char* name,
                             uint32_t flags,
                             double value);

/* The event macros for names that are string literals (a compile error
 * otherwise): the enabled check inline, then the function with
 * RINGTRACE_STATIC_NAMES; |args| (their names string literals too) and the
 * value are evaluated only when the category is enabled. The status is
 * dropped: use the functions to see it. */
#define RINGTRACE_SLICE_BEGIN(category, name, args, arg_count)    \
  do {                                                            \
    if (RINGTRACE_CATEGORY_ENABLED(category))                     \
      (void)ringtrace_slice_begin((category), "" name "",         \
                                  RINGTRACE_STATIC_NAMES, (args), \
                                  (arg_count));                   \
  } while (0)
#define RINGTRACE_SLICE_END(category)         \
  do {                                        \
    if (RINGTRACE_CATEGORY_ENABLED(category)) \
      (void)ringtrace_slice_end((category));  \
  } while (0)
#define RINGTRACE_INSTANT(category, name, args, arg_count)                    \
  do {                                                                        \
    if (RINGTRACE_CATEGORY_ENABLED(category))                                 \
      (void)ringtrace_instant((category), "" name "", RINGTRACE_STATIC_NAMES, \
                              (args), (arg_count));                           \
  } while (0)
#define RINGTRACE_COUNTER_INT64(category, name, value)                \
  do {                                                                \
    if (RINGTRACE_CATEGORY_ENABLED(category))                         \
      (void)ringtrace_counter_int64((category), "" name "",           \
                                    RINGTRACE_STATIC_NAMES, (value)); \
  } while (0)
#define RINGTRACE_COUNTER_DOUBLE(category, name, value)                \
  do {                                                                 \
    if (RINGTRACE_CATEGORY_ENABLED(category))                          \
      (void)ringtrace_counter_double((category), "" name "",           \
                                     RINGTRACE_STATIC_NAMES, (value)); \
  } while (0)

/* Sessions (see "Sessions" above). A session is used by one thread at a
 * time (calls on one session are serialized; distinct sessions are
 * independent). */
typedef struct ringtrace_session ringtrace_session;

typedef struct ringtrace_session_options {
  /* sizeof(ringtrace_session_options) and RINGTRACE_C_ABI_VERSION as the
   * caller was compiled with (ringtrace_session_options_default sets
   * them). */
  uint32_t struct_size;
  uint32_t abi_version;
  /* One backend: RINGTRACE_BACKEND_IN_PROCESS (ringtrace_init() must have
   * started it) or RINGTRACE_BACKEND_SYSTEM (ringtraced's consumer
   * socket). */
  uint32_t backend;
  /* The longest wait of one call in ms, the connection included (0: 30000;
   * at most 2^31 - 1). */
  uint32_t timeout_ms;
  /* RINGTRACE_BACKEND_SYSTEM: ringtraced's consumer socket; NULL or "":
   * the default path ($RINGTRACE_CONSUMER_SOCK, ..., docs/sessions.md). */
  const char* consumer_socket_path;
} ringtrace_session_options;

/* Fills |options| with the defaults: this header's size and ABI version,
 * RINGTRACE_BACKEND_IN_PROCESS, the default timeout and socket. */
#define ringtrace_session_options_default(options)            \
  ringtrace_session_options_set_defaults(                     \
      (options), (uint32_t)sizeof(ringtrace_session_options), \
      (uint32_t)RINGTRACE_C_ABI_VERSION)
int ringtrace_session_options_set_defaults(ringtrace_session_options* options,
                                           uint32_t struct_size,
                                           uint32_t abi_version);

/* A new session on |options|' backend (NULL: the defaults), set up with
 * |config|, a TraceConfig in Perfetto's text format (an error names the
 * line, column and field). The trace goes to |output_fd|, a regular file
 * open for writing (the library keeps a duplicate; the caller may close
 * its own), or, with -1, into memory (ringtrace_session_read_trace). *out
 * receives the session. Errors: RINGTRACE_ERR_ABI_MISMATCH,
 * RINGTRACE_ERR_INVALID_ARGUMENT (NULL config or out, a backend that is
 * not one bit, a bad config), RINGTRACE_ERR_NOT_INITIALIZED (the
 * in-process backend is not running), RINGTRACE_ERR_FAILED (no service). */
int ringtrace_session_new(const ringtrace_session_options* options,
                          const char* config,
                          int output_fd,
                          ringtrace_session** out);
/* Starts the session. On the in-process backend, this process's categories
 * the config enables are on when it returns. */
int ringtrace_session_start(ringtrace_session* session);
/* Asks the session's producers to flush and waits (|timeout_ms|; 0: the
 * config's flush_timeout_ms) until their data is in the session. */
int ringtrace_session_flush(ringtrace_session* session, uint32_t timeout_ms);
/* Stops the session and waits until its trace is written (not an error
 * when the service ended it already). */
int ringtrace_session_stop(ringtrace_session* session);
/* After the stop, a session without output_fd: copies the trace (a
 * Perfetto trace file) into |buffer| and sets *size to its size. With
 * |buffer| NULL and |capacity| 0 only *size is set; a |capacity| below the
 * size is RINGTRACE_ERR_INVALID_ARGUMENT (and *size is set). */
int ringtrace_session_read_trace(ringtrace_session* session,
                                 void* buffer,
                                 size_t capacity,
                                 size_t* size);
/* After the stop: the packets the session wrote and those it lost (the
 * service's summary; either pointer may be NULL). */
int ringtrace_session_summary(ringtrace_session* session,
                              uint64_t* packets_written,
                              uint64_t* packets_lost);
/* Stops the session if it runs (its trace is written) and frees it. NULL
 * is a no-op. */
void ringtrace_session_destroy(ringtrace_session* session);

#ifdef __cplusplus
}
#endif

#endif /* INCLUDE_RINGTRACE_C_RINGTRACE_H_ */
