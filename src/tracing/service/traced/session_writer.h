/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// SessionWriter: when and from what a session's trace is written. It
// gathers what a trace holds (the session's buffers or copies of them, its
// counters and losses, the drainer's totals, the service's state) and
// hands it to session_export.h, which alone turns it into trace bytes:
//   - a session's end: the whole trace into its fd (or, for
//     write_into_file, the tail after what was streamed), fsynced;
//   - write_into_file: the header at the start, the service events as they
//     happen, the buffers' packets every file_write_period_ms;
//   - CloneSession: a trace of its own from copies of the live buffers;
//   - GetTraceStats: the TraceStats the trace would end with now.
//
// Invariants: the live buffers are read only on the drain thread while
// rings may write them (DrainLoop::RunSync), or after no ring routes to
// them any more (a session's end).
//
// Thread model: one thread (the service thread, or a test) calls every
// method.

#ifndef SRC_TRACING_SERVICE_TRACED_SESSION_WRITER_H_
#define SRC_TRACING_SERVICE_TRACED_SESSION_WRITER_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "ringtrace/status.h"
#include "src/tracing/service/ring_drainer/drain_loop.h"
#include "src/tracing/service/traced/producer_table.h"
#include "src/tracing/service/traced/session.h"
#include "src/tracing/service/traced/session_export.h"
#include "src/tracing/service/traced/session_table.h"

namespace ringtrace {
namespace traced {

// The chunks the drainer lost before any buffer saw them, in all
// (TraceStats.chunks_discarded): unroutable, or dropped by the reader
// (malformed, unknown format). A session's trace counts those since it
// started.
inline uint64_t ChunksLostBeforeBuffers(const ring_drainer::RingStats& d) {
  return d.chunks_unroutable + d.chunks_dropped;
}

// The packet bytes a write_into_file write exports per drain-thread task:
// about 3 ms of export on the AMD VM (docs/performance.md), against the
// ~10 ms a 2 MiB ring takes to fill at 200 MB/s.
constexpr uint64_t kDefaultFileWriteSliceBytes = 1 << 20;

class SessionWriter {
 public:
  using Clock = SessionClock;

  SessionWriter(ring_drainer::DrainLoop* loop,
                const ProducerTable* producers,
                const SessionTable* sessions,
                uint64_t file_write_slice_bytes = kDefaultFileWriteSliceBytes);
  SessionWriter(const SessionWriter&) = delete;
  SessionWriter& operator=(const SessionWriter&) = delete;

  // What the layers above counted, for the TraceStats of the next export.
  void set_service_counters(const ServiceCounters& c) { counters_ = c; }

  // write_into_file: the session's exporter on its fd, with the header
  // (WriteTraceHeader) in its batch; the first file write is due a period
  // after |now|.
  void OpenStream(Session* session, Clock::time_point now);
  // Sets |*slot| (a field of session->lifecycle) to now (BOOTTIME) and,
  // when the session streams its file, writes the event there.
  void RecordServiceEvent(Session* session,
                          trace_export::TraceExporter::ServiceEvent event,
                          uint64_t* slot);
  // write_into_file's periodic write: drains the session's rings
  // (kNormal, the writers undisturbed) and appends what its buffers hold to
  // its file (on the drain thread: the buffers are only readable there),
  // in slices (file_write_slice_bytes of packets), each after another pass
  // over the rings.
  // Returns whether the session must end: a write error (logged) or
  // max_file_size_bytes reached.
  bool AppendToFile(Session* session, Clock::time_point now);
  // Drain-thread tasks the periodic writes took, all sessions together.
  uint64_t file_write_slices() const { return file_write_slices_; }
  // The session's end, once no ring routes to its buffers and
  // summary->drainer_stats holds the drainer's totals after its final
  // drain: writes its trace (the tail, if it streams) and fsyncs the fd.
  // Fills the rest of |summary|.
  base::Status WriteFinalTrace(Session* session, ExportSummary* summary);
  // Writes what |session|'s buffers hold now to |out_fd| (not owned, not
  // closed) as a trace of its own (TracingSessions::CloneSession).
  base::Status Clone(const Session& session,
                     int out_fd,
                     ExportSummary* summary);
  // The session's TraceStats (a serialized perfetto.protos.TraceStats), as
  // its trace would end with now.
  void TraceStats(const Session& session, std::string* trace_stats);

 private:
  // The service's side of a trace's TraceStats now (session_export.h).
  ServiceState CurrentServiceState() const;
  // The header of |session|'s trace (|uuid|: the session's, or a clone's).
  static TraceHeader HeaderOf(
      const Session& session,
      const trace_export::TraceExporter::TraceUuid& uuid);
  // What |session|'s trace holds: its buffers (|buffers|: the live ones or
  // copies, in the session's order), its counters and losses.
  // chunks_discarded and packets_discarded are the caller's (read on the
  // drain thread).
  static TraceContents ContentsOf(
      const Session& session,
      const std::vector<trace_buffer::TraceBufferV2*>& buffers);

  ring_drainer::DrainLoop* const loop_;
  const ProducerTable* const producers_;
  const SessionTable* const sessions_;
  const uint64_t file_write_slice_bytes_;
  ServiceCounters counters_;
  uint64_t file_write_slices_ = 0;
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_SESSION_WRITER_H_
