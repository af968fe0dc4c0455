/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The "track_event" data source: what makes the TrackEvent macros
// (ringtrace/track_event.h) follow tracing sessions.
//
//   ringtrace::Tracing tracing(options);
//   ringtrace::track_event::RegisterTrackEventDataSource(&tracing);
//   tracing.Start();
//   // From now on every session that lists "track_event" gets the events
//   // of the categories its TrackEventConfig enables, from every thread,
//   // each thread with its own writer per session, created on its first
//   // event and released when it exits.
//
// Each StartDataSource becomes a TrackEvent instance
// (src/tracing/track_event/track_event_instances.h): its categories are
// matched against the declared ones, and each thread's writer for it comes
// from the starting Producer's NewTraceWriter(target_buffer). The data
// source holds the Producer only weakly (writers keep it alive, producer.h
// "Lifetime"), so the Producer must be shared-owned, as ringtrace::Tracing
// owns it; with a Producer nobody shares, every thread's first event for
// the instance finds no writer (counted in
// TrackEventStats::events_without_writer) and an error is logged at start.
//
// OnStop returns once no event of the instance can begin any more and
// every event that began has ended (StopInstance()), without waiting for
// idle threads. OnFlush has nothing to do: every ended packet is already
// published in the ring (producer.h, "The packet guarantee"), and the
// service drains after the acks; a thread's writer is flushed when its
// thread exits.
//
// At most kMaxInstances (8) instances run at once in the process; a start
// beyond that is logged and counted (start_failures()), and that session
// gets no TrackEvent data from this process.
//
// One connection at a time: instance ids are unique per connection only,
// and OnStop does not say which connection calls. ringtrace::Tracing calls
// a new connection's handlers only after every OnStop of the previous one;
// an app that registers one object with two live Producers gets the second
// one's clashing starts refused (logged, start_failures()).
//
// Thread model: the handler methods come from the Producer's reader thread;
// the accessors from any thread. The object must outlive the Producers (or
// the Tracing) it is registered with; the destructor stops the instances
// still running.

#ifndef INCLUDE_RINGTRACE_TRACK_EVENT_DATA_SOURCE_H_
#define INCLUDE_RINGTRACE_TRACK_EVENT_DATA_SOURCE_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <vector>

#include "ringtrace/producer.h"
#include "ringtrace/status.h"
#include "ringtrace/tracing.h"

namespace ringtrace {
namespace track_event {

class TrackEventDataSource : public DataSourceHandler {
 public:
  static constexpr char kName[] = "track_event";

  TrackEventDataSource();
  ~TrackEventDataSource() override;

  void OnStart(const DataSourceInstanceConfig& config) override;
  void OnStop(uint32_t instance_id) override;
  void OnFlush(uint32_t flush_id) override;
  // Every category the process declared with RT_DEFINE_CATEGORIES (name,
  // description, tags; not the dynamic ones), each name once, as
  // registered so far (a library loaded later is published at the next
  // registration, i.e. the next connection of ringtrace::Tracing).
  std::vector<DataSourceCategory> Categories() const override;

  size_t running_instances() const;
  uint64_t start_failures() const;

 private:
  // The running instances by instance id, and the failed starts, under a
  // mutex (track_event_data_source.cc).
  struct Instances;
  const std::unique_ptr<Instances> instances_;
};

// The process-wide TrackEventDataSource (never destroyed), registered with
// |tracing| under TrackEventDataSource::kName.
base::Status RegisterTrackEventDataSource(Tracing* tracing);
// The same for an app that holds its Producer itself (Producer::Connect,
// no reconnection): the shared ownership is what lets each thread's writer
// keep the Producer alive (producer.h, "Lifetime"). Its threads then record
// into every session that enables their categories, like a Tracing app's;
// a ScopedThreadWriter still binds a thread to a writer of the app's own.
// Errors: a null |producer|, and those of Producer::RegisterDataSource.
base::Status RegisterTrackEventDataSource(
    const std::shared_ptr<Producer>& producer);

}  // namespace track_event
}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_TRACK_EVENT_DATA_SOURCE_H_
