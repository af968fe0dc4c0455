/*
 * Copyright (C) 2026 The ringtrace authors.
 */

/* The C API header compiled as C (C89 and C99, -pedantic-errors): every
 * macro and function used once. The unit tests call the function each
 * translation unit defines: with a NULL category the macros write nothing
 * and the functions refuse it; with a NULL session or config the session
 * functions refuse them. */

#include "ringtrace/c/ringtrace.h"

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L
#define RT_HEADER_CHECK ringtrace_header_check_c99
#else
#define RT_HEADER_CHECK ringtrace_header_check_c89
#endif

int RT_HEADER_CHECK(void);

/* 0 if every call behaved as the header says for a NULL category, else the
 * number of the first one that did not. */
int RT_HEADER_CHECK(void) {
  const ringtrace_category* none = NULL;
  ringtrace_arg args[2];
  ringtrace_init_options options;
  ringtrace_session_options session_options;
  ringtrace_session* session = NULL;
  size_t size = 1;
  args[0].name = "n";
  args[0].type = RINGTRACE_ARG_INT64;
  args[0].value.int64_value = 1;
  args[1].name = "s";
  args[1].type = RINGTRACE_ARG_STRING;
  args[1].value.string_value = "text";
  if (ringtrace_init_options_default(&options) != RINGTRACE_OK)
    return 1;
  if (options.struct_size != sizeof(options) ||
      options.abi_version != RINGTRACE_C_ABI_VERSION ||
      options.backends != RINGTRACE_BACKEND_SYSTEM)
    return 2;
  if (RINGTRACE_CATEGORY_ENABLED(none))
    return 3;
  RINGTRACE_SLICE_BEGIN(none, "Slice", args, 2);
  RINGTRACE_SLICE_END(none);
  RINGTRACE_INSTANT(none, "Instant", NULL, 0);
  RINGTRACE_COUNTER_INT64(none, "count", 1);
  RINGTRACE_COUNTER_DOUBLE(none, "ratio", 0.5);
  if (ringtrace_slice_begin(none, "Slice", 0, args, 2) !=
      RINGTRACE_ERR_INVALID_ARGUMENT)
    return 4;
  if (ringtrace_slice_end(none) != RINGTRACE_ERR_INVALID_ARGUMENT)
    return 5;
  if (ringtrace_instant(none, "Instant", RINGTRACE_STATIC_NAMES, NULL, 0) !=
      RINGTRACE_ERR_INVALID_ARGUMENT)
    return 6;
  if (ringtrace_counter_int64(none, "count", 0, 1) !=
          RINGTRACE_ERR_INVALID_ARGUMENT ||
      ringtrace_counter_double(none, "ratio", 0, 0.5) !=
          RINGTRACE_ERR_INVALID_ARGUMENT)
    return 7;
  if (ringtrace_category_enabled(none) != 0)
    return 8;
  if (ringtrace_abi_version() != RINGTRACE_C_ABI_VERSION)
    return 9;
  if (ringtrace_last_error()[0] == '\0')
    return 10;
  if (ringtrace_session_options_default(&session_options) != RINGTRACE_OK ||
      session_options.struct_size != sizeof(session_options) ||
      session_options.backend != RINGTRACE_BACKEND_IN_PROCESS)
    return 11;
  if (ringtrace_session_new(&session_options, NULL, -1, &session) !=
          RINGTRACE_ERR_INVALID_ARGUMENT ||
      session != NULL)
    return 12;
  if (ringtrace_session_read_trace(NULL, NULL, 0, &size) !=
          RINGTRACE_ERR_INVALID_ARGUMENT ||
      ringtrace_session_start(NULL) != RINGTRACE_ERR_INVALID_ARGUMENT ||
      ringtrace_session_flush(NULL, 0) != RINGTRACE_ERR_INVALID_ARGUMENT ||
      ringtrace_session_stop(NULL) != RINGTRACE_ERR_INVALID_ARGUMENT ||
      ringtrace_session_summary(NULL, NULL, NULL) !=
          RINGTRACE_ERR_INVALID_ARGUMENT)
    return 13;
  ringtrace_session_destroy(NULL);
  return 0;
}
