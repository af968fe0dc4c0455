/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// A tracing session's state, and what the session side of the service
// hands its owner (docs/sessions.md, "How the service implements it").
// A session owns 1..8 buffers with service-wide BufferIDs, an output fd
// and data source instances on the producers that registered a matching
// data source. These are plain data: SessionTable (session_table.h) keeps
// the sessions, TracingSessions (tracing_sessions.h) drives them and
// SessionWriter (session_writer.h) writes their traces.
//
// Invariants: BufferIDs are unique among live sessions and never 0
// (kNoDefaultBuffer); an instance's target is one of its session's
// buffers.
//
// Thread model: a session belongs to the service thread, except its
// TraceBufferV2s and their sinks, which only the drain thread touches
// while rings may write them (the owner reaches them through
// DrainLoop::RunSync, or once no ring routes to them any more).

#ifndef SRC_TRACING_SERVICE_TRACED_SESSION_H_
#define SRC_TRACING_SERVICE_TRACED_SESSION_H_

#include <stddef.h>
#include <stdint.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ringtrace/status.h"
#include "src/base/scoped_fd.h"
#include "src/base/time.h"
#include "src/tracing/service/ring_drainer/trace_buffer_v2_sink.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/trace_export/trace_exporter.h"
#include "src/tracing/service/traced/producer_answers.h"
#include "src/tracing/service/traced/producer_loss_table.h"
#include "src/tracing/service/traced/service_stats.h"
#include "src/tracing/service/traced/session_config.h"
#include "src/tracing/service/traced/session_export.h"

namespace ringtrace {
namespace traced {

// HelloReply.target_buffer while there is no default session: no buffer
// has BufferID 0, so chunks written to it are unroutable (counted in the
// chunks_discarded of every session's TraceStats that runs meanwhile).
constexpr trace_buffer::BufferID kNoDefaultBuffer = 0;
// Consumer sessions' buffers get BufferIDs 1..kMaxSessionBufferId.
constexpr uint32_t kMaxSessionBufferId = 0xffff;

using SessionClock = std::chrono::steady_clock;

// What the sessions ask the owner to send to a producer (the owner encodes
// it with src/tracing/ipc/wire_protocol.h). Start and stop carry an
// instance id, flush a flush id.
struct ProducerCommand {
  enum class Type { kStartDataSource, kStopDataSource, kFlush };
  Type type = Type::kStartDataSource;
  trace_buffer::ProducerID producer_id = 0;
  uint32_t id = 0;  // instance id (start, stop) or flush id
  // kStartDataSource only.
  trace_buffer::BufferID target_buffer = 0;
  uint32_t clear_period_ms = 0;
  std::string data_source_name;
  std::vector<std::string> enabled_categories;
  std::vector<std::string> disabled_categories;
  std::vector<std::string> enabled_tags;
  std::vector<std::string> disabled_tags;
  // The instance's DataSourceConfig, serialized as the consumer gave it
  // (SessionConfig::DataSource::config).
  std::string config;
};

// What happened to a session, for the owner to tell its consumer.
struct SessionEvent {
  enum class Type {
    // The session ended and its trace was written (or writing it failed:
    // |status|). |by_service|: duration_ms elapsed or the service stopped,
    // not DisableTracing.
    kEnded,
    // A FlushSession() completed (|status| says whether every producer
    // acked in time).
    kFlushed,
  };
  Type type = Type::kEnded;
  SessionId session_id = 0;
  uint64_t consumer_id = 0;  // as given to StartSession
  uint64_t tag = 0;          // the request's tag (DisableTracing, Flush)
  bool by_service = false;
  base::Status status;
  ExportSummary summary;
  uint64_t duration_ms = 0;
  uint64_t packets_lost = 0;
};

// A session as QueryServiceState lists it.
struct SessionInfo {
  SessionId id = 0;
  std::string unique_name;
  int32_t consumer_uid = -1;
  bool stopping = false;
  struct Buffer {
    trace_buffer::BufferID id = 0;
    uint64_t size_bytes = 0;
    trace_buffer::TraceBufferV2::OverwritePolicy policy =
        trace_buffer::TraceBufferV2::OverwritePolicy::kOverwrite;
    // Bytes of the buffer written so far (its high-water mark: a buffer
    // that wrapped reads as full).
    uint64_t used_bytes = 0;
  };
  std::vector<Buffer> buffers;
  uint32_t num_data_source_instances = 0;
  uint64_t elapsed_ms = 0;
};

// Whole milliseconds from |from| to |to| (0 if not later).
inline uint64_t ElapsedMs(SessionClock::time_point from,
                          SessionClock::time_point to) {
  if (to <= from)
    return 0;
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count());
}

struct SessionBuffer {
  trace_buffer::BufferID id = 0;
  std::unique_ptr<trace_buffer::TraceBufferV2> buffer;
  // Drain thread while the buffer is routed; the owner's afterwards.
  std::unique_ptr<ring_drainer::TraceBufferV2Sink> sink;
};

// A data source instance of a session on a producer.
struct Instance {
  trace_buffer::ProducerID producer_id = 0;
  size_t ds_index = 0;  // into SessionConfig::data_sources
  uint32_t instance_id = 0;
  trace_buffer::BufferID target = 0;
  bool stop_sent = false;
  bool stop_acked = false;
};

// A flush sent to a session's producers, waiting for their acks.
struct PendingFlush {
  uint32_t flush_id = 0;
  uint64_t tag = 0;
  uint64_t requester = 0;  // the consumer id the kFlushed event goes to
  bool periodic = false;   // no event
  std::set<trace_buffer::ProducerID> waiting;
  // Producers sent the flush but not waited for (overdue,
  // producer_answers.h): timeouts, counted when the flush completes.
  size_t not_awaited = 0;
  SessionClock::time_point deadline;
};

struct Session {
  using Clock = SessionClock;

  SessionId id = 0;
  SessionConfig config;
  base::ScopedFd fd;
  int32_t consumer_uid = -1;
  uint64_t consumer_id = 0;
  trace_export::TraceExporter::ClockReadings start_clocks;
  // The trace's id (the session's file; clones get their own).
  trace_export::TraceExporter::TraceUuid uuid;
  TraceLifecycle lifecycle;
  Clock::time_point started;
  Clock::time_point duration_deadline = Clock::time_point::max();
  Clock::time_point stop_deadline = Clock::time_point::max();
  Clock::time_point next_periodic_flush = Clock::time_point::max();
  bool stopping = false;
  bool stop_by_service = false;
  SessionCounters counters;  // this session's own, for its TraceStats
  // The losses its producers reported for its buffers
  // (SessionTable::LossTableFor).
  ProducerLossTable losses{base::MonotonicNs()};
  uint64_t stop_tag = 0;
  // The drainer's chunks lost before any buffer saw them
  // (ChunksLostBeforeBuffers) when it started.
  uint64_t lost_before_buffers_at_start = 0;
  std::vector<std::unique_ptr<SessionBuffer>> buffers;
  std::vector<Instance> instances;
  std::vector<PendingFlush> flushes;
  // write_into_file: the trace is appended to |fd| as it goes
  // (session_export.h).
  std::unique_ptr<TraceStream> stream;
  Clock::time_point next_file_write = Clock::time_point::max();
  base::Status stream_status;  // the first write error
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_SESSION_H_
