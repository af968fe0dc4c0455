/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The TrackEvent categories of ringtrace_example_app, in the one header
// every tracing file of the app includes (RT_DEFINE_CATEGORIES defines
// inline variables): "example" for the frame slices and queue counters of
// both modes, "io" for the read slices and byte counters of the sessions
// mode (example_app.h).

#ifndef SRC_EXAMPLES_EXAMPLE_CATEGORIES_H_
#define SRC_EXAMPLES_EXAMPLE_CATEGORIES_H_

#include "ringtrace/track_event.h"

RT_DEFINE_CATEGORIES("example", "io");

#endif  // SRC_EXAMPLES_EXAMPLE_CATEGORIES_H_
