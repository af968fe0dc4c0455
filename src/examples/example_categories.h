/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The TrackEvent categories of ringtrace_example_app, in the one header
// every tracing file of the app includes (RT_DEFINE_CATEGORIES defines
// inline variables): "example" for the frame slices and queue counters of
// both modes, "io" for the read slices and byte counters of the sessions
// mode, and "example.detail", tagged "slow", for the sessions mode's
// per-cycle checksum instants: a session records those only when it asks
// for them by name or by tag (enabled_tags: "slow"; example_app.h).

#ifndef SRC_EXAMPLES_EXAMPLE_CATEGORIES_H_
#define SRC_EXAMPLES_EXAMPLE_CATEGORIES_H_

#include "ringtrace/track_event.h"

RT_DEFINE_CATEGORIES(
    ringtrace::track_event::Category("example").SetDescription(
        "Frames of the example workers: frame and step slices, queue depth"),
    ringtrace::track_event::Category("io").SetDescription(
        "Reads of the example workers: read slices, bytes read"),
    ringtrace::track_event::Category("example.detail")
        .SetDescription("A checksum instant per cycle (verbose)")
        .SetTags("slow"));

#endif  // SRC_EXAMPLES_EXAMPLE_CATEGORIES_H_
