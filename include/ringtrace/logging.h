/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Logging and fail-fast macros.
//
// RT_CHECK(cond)  : our own invariant; aborts with file:line in every build.
// RT_DCHECK(cond) : same, compiled only when RT_DCHECK_IS_ON (debug builds).
// RT_FATAL(...)   : printf-style message, then abort.
// RT_LOG / RT_ELOG: printf-style info / error lines on stderr.
//
// Every line starts with "[file.cc:line]": the source file's base name, so a
// log names the component (service_core.cc, ring_drainer.cc, ...) and never
// the build directory's relative path to it.
//
// These are for invariants of OUR code only. Anything a producer can cause
// (shared memory contents, chunk bytes, patches, IPC) must be handled with a
// status return or a counted data loss, never with RT_CHECK.

#ifndef INCLUDE_RINGTRACE_LOGGING_H_
#define INCLUDE_RINGTRACE_LOGGING_H_

#include <stdio.h>
#include <stdlib.h>

#ifndef RT_DCHECK_IS_ON
#define RT_DCHECK_IS_ON 1
#endif

#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)
// For the few hot paths of a few instructions whose call, when the compiler
// declines to inline them into a large caller, costs more than their body
// (the field appends of the typed writers).
#define RT_ALWAYS_INLINE inline __attribute__((always_inline))

namespace ringtrace {
namespace base {

// The part of |path| after its last '/' (all of it if there is none).
const char* FileBasename(const char* path);

// Prints "[basename:line] message" and aborts. Never returns.
[[noreturn]] void LogFatal(const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

// Prints "[basename:line] message" on stderr.
void LogMessage(const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

}  // namespace base
}  // namespace ringtrace

#define RT_LOG(...) \
  ::ringtrace::base::LogMessage(__FILE__, __LINE__, __VA_ARGS__)
#define RT_ELOG(...) \
  ::ringtrace::base::LogMessage(__FILE__, __LINE__, "E " __VA_ARGS__)
#define RT_FATAL(...) \
  ::ringtrace::base::LogFatal(__FILE__, __LINE__, __VA_ARGS__)

#define RT_CHECK(cond)                                                       \
  do {                                                                       \
    if (RT_UNLIKELY(!(cond)))                                                \
      ::ringtrace::base::LogFatal(__FILE__, __LINE__, "RT_CHECK(%s) failed", \
                                  #cond);                                    \
  } while (0)

#if RT_DCHECK_IS_ON
#define RT_DCHECK(cond) RT_CHECK(cond)
#else
#define RT_DCHECK(cond)    \
  do {                     \
    if (false && (cond)) { \
    }                      \
  } while (0)
#endif

#endif  // INCLUDE_RINGTRACE_LOGGING_H_
