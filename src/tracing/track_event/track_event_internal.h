/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// What track_event.cc and track_event_instances.cc share: the registry of
// category tables (and the mutex that guards it, the instance slots and the
// process-wide settings), the statistics counters and the thread's binding.

#ifndef SRC_TRACING_TRACK_EVENT_TRACK_EVENT_INTERNAL_H_
#define SRC_TRACING_TRACK_EVENT_TRACK_EVENT_INTERNAL_H_

#include <stdint.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ringtrace/track_event.h"

namespace ringtrace {
namespace track_event {
namespace internal {

struct Registry {
  std::mutex mutex;
  std::vector<const CategoryTable*> tables;  // guarded by mutex
  // The terms (name or pattern, enable) of every static spec applied so
  // far, in order ($RT_TRACE_CATEGORIES at start-up first), without the
  // ones a later term overrides: a dynamic category created later replays
  // them, so its bit 0 is what it would be had it existed all along.
  // Guarded by mutex.
  std::vector<std::pair<std::string, bool>> static_terms;
};

// Never destroyed (thread exit handlers and static destructors may trace).
Registry& GetRegistry();

// CountEventsWithoutWriter() and t_bound_sequence are declared in
// ringtrace/internal/track_event_macros.h (the inline event paths use them).
void CountInstanceWriterCreated();
void CountInstanceWriterReleased();

// Sets, in |table|'s masks, the bit of every running instance that enables
// the category (a table registered after instances started). The registry
// mutex is held.
void ApplyInstancesLocked(const CategoryTable* table);

// Flushes the calling thread's instance writers (track_event::Flush()).
void FlushThreadInstanceWriters();

}  // namespace internal
}  // namespace track_event
}  // namespace ringtrace

#endif  // SRC_TRACING_TRACK_EVENT_TRACK_EVENT_INTERNAL_H_
