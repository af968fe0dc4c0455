/*
 * Copyright (C) 2026 The ringtrace authors.
 */

/* ringtrace_c_example_app [SOCKET] [--wait-ms N]: an app written in C (C99)
 * on the C API (include/ringtrace/c/ringtrace.h). It connects to ringtraced
 * (SOCKET, or the default socket), waits up to N ms (default 5000) for a
 * session to enable its category "c_example", then records 20 frames: a
 * "Frame" slice with two arguments around a nested "Draw" slice, a
 * "Present" instant and two counters. Exit status: 0 when it recorded, 3
 * when no session enabled the category in time, 1 on an error. */

/* A feature-test macro (nanosleep in strict C99), not a name of ours. */
#define _POSIX_C_SOURCE 200809L /* NOLINT(bugprone-reserved-identifier) */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ringtrace/c/ringtrace.h"

enum { kFrames = 20 };

static ringtrace_category* g_example;
static ringtrace_category* g_debug;

static void SleepMs(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&ts, NULL);
}

static int Fail(const char* what) {
  fprintf(stderr, "c_example_app: %s: %s\n", what, ringtrace_last_error());
  return 1;
}

static void RecordFrame(int64_t frame) {
  ringtrace_arg args[2];
  ringtrace_arg present;
  args[0].name = "frame";
  args[0].type = RINGTRACE_ARG_INT64;
  args[0].value.int64_value = frame;
  args[1].name = "vsync";
  args[1].type = RINGTRACE_ARG_BOOL;
  args[1].value.bool_value = (frame % 2) == 0;
  RINGTRACE_SLICE_BEGIN(g_example, "Frame", args, 2);
  RINGTRACE_SLICE_BEGIN(g_example, "Draw", NULL, 0);
  SleepMs(1);
  RINGTRACE_SLICE_END(g_example);
  present.name = "surface";
  present.type = RINGTRACE_ARG_STRING;
  present.value.string_value = "main";
  RINGTRACE_INSTANT(g_example, "Present", &present, 1);
  /* Tagged "debug": a session enables it only when it asks for the tag. */
  RINGTRACE_INSTANT(g_debug, "DebugDetail", NULL, 0);
  RINGTRACE_COUNTER_INT64(g_example, "frames", frame + 1);
  RINGTRACE_COUNTER_DOUBLE(g_example, "frame_ms", 1.0 + (double)frame / 10);
  RINGTRACE_SLICE_END(g_example);
}

int main(int argc, char** argv) {
  const char* socket_path = NULL;
  long wait_ms = 5000;
  const char* debug_tags[1];
  ringtrace_init_options options;
  long waited = 0;
  int i;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--wait-ms") == 0 && i + 1 < argc) {
      char* end = NULL;
      wait_ms = strtol(argv[++i], &end, 10);
      if (*end != '\0' || wait_ms < 0 || wait_ms > 3600000) {
        fprintf(stderr, "c_example_app: bad --wait-ms %s\n", argv[i]);
        return 1;
      }
    } else if (argv[i][0] != '-' && socket_path == NULL) {
      socket_path = argv[i];
    } else {
      fprintf(stderr, "Usage: %s [SOCKET] [--wait-ms N]\n", argv[0]);
      return 1;
    }
  }

  debug_tags[0] = "debug";
  if (ringtrace_category_register("c_example", "The C example's frames", NULL,
                                  0, &g_example) != RINGTRACE_OK ||
      ringtrace_category_register("c_example.debug", "Per-frame details",
                                  debug_tags, 1, &g_debug) != RINGTRACE_OK) {
    return Fail("category");
  }
  ringtrace_init_options_default(&options);
  options.producer_socket_path = socket_path;
  options.producer_name = "c_example_app";
  options.wait_for_connection_ms = (uint32_t)wait_ms;
  if (ringtrace_init(&options) != RINGTRACE_OK)
    return Fail("init");
  if (!ringtrace_is_connected()) {
    printf("c_example_app: no service\n");
    ringtrace_shutdown();
    return 3;
  }
  /* The service starts the session's data source after the connection. */
  while (!RINGTRACE_CATEGORY_ENABLED(g_example) && waited < wait_ms) {
    SleepMs(1);
    waited++;
  }
  if (!RINGTRACE_CATEGORY_ENABLED(g_example)) {
    printf("c_example_app: no session enabled c_example\n");
    ringtrace_shutdown();
    return 3;
  }
  for (i = 0; i < kFrames; i++)
    RecordFrame(i);
  if (ringtrace_flush() != RINGTRACE_OK)
    return Fail("flush");
  if (ringtrace_shutdown() != RINGTRACE_OK)
    return Fail("shutdown");
  printf("c_example_app: recorded %d frames\n", kFrames);
  return 0;
}
