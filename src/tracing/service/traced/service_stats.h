/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The service's counters: what ServiceCore counts about producers and
// sessions, what the layers above count (ServiceCounters), a session's own
// (SessionCounters), when a trace's service events happened
// (TraceLifecycle) and what an export produced (ExportSummary); and their
// encodings as TraceStats fields.

#ifndef SRC_TRACING_SERVICE_TRACED_SERVICE_STATS_H_
#define SRC_TRACING_SERVICE_TRACED_SERVICE_STATS_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/trace_export/trace_exporter.h"

namespace ringtrace {
namespace traced {

// ServiceCore's counters (TracingService adds the connection ones,
// tracing_service.h).
struct ProducerStats {
  uint64_t producers_seen = 0;       // admitted, ever
  uint32_t producers_connected = 0;  // admitted and not removed
  uint64_t hellos_rejected_version = 0;
  // max_producers connected, or every ProducerID connected or still with
  // data in the buffer.
  uint64_t hellos_rejected_too_many = 0;
  // The ring could not be created, or Finish() already ran.
  uint64_t hellos_rejected_service_error = 0;
  // The peer's uid was at its producer or ring-bytes limit
  // (UserLimits), or every ring together at max_total_ring_bytes.
  uint64_t hellos_rejected_user_limit = 0;
  // Rings served smaller than asked for, to fit what was left of their
  // uid's ring budget or the total.
  uint64_t rings_clamped_to_budget = 0;
  uint64_t drain_requests = 0;
  // Admissions that reused the id of a departed producer.
  uint64_t producer_ids_reused = 0;
  // Rings the drainer stopped on a protocol error (their producers are
  // disconnected by the owner).
  uint64_t rings_stopped_protocol_error = 0;
  // Loss entries (reported or read from a ring's writer loss area) naming a
  // buffer their producer does not serve: in no session's figures.
  uint64_t loss_entries_unattributed = 0;
  // Data sources registered, ever (TraceStats.data_sources_seen).
  uint64_t data_sources_seen = 0;
  // Writer loss areas that could not be read at a producer's removal.
  uint64_t loss_area_read_errors = 0;
};

// Counters of the layers above the core (TracingService), for TraceStats.
struct ServiceCounters {
  uint64_t connections_refused = 0;
  uint64_t connections_refused_per_uid = 0;  // part of connections_refused
  uint64_t hello_timeouts = 0;
  uint64_t protocol_violations = 0;
  uint64_t producers_disconnected_ring_error = 0;
};

// The service's own TraceStats fields, ringtrace-specific numbers clear of
// Perfetto's (protos/perfetto/trace/trace_packet.proto, TraceStats):
//   1000 connections_refused            1004 producers_disconnected_ring_error
//   1001 connections_refused_per_uid    1005 hellos_rejected (every reason)
//   1002 hello_timeouts                 1006 producer_ids_reused
//   1003 protocol_violations            1007 rings_stopped_protocol_error
std::string EncodeServiceCounters(const ServiceCounters& c,
                                  const ProducerStats& p);

// When a trace's service events happened (CLOCK_BOOTTIME ns; 0: not (yet)).
// Every trace file carries them as TracingServiceEvent packets on the
// service's sequence (docs/trace_export.md, "The service's metadata").
struct TraceLifecycle {
  // The session was set up.
  uint64_t tracing_started = 0;
  // The data sources were told to start. There is no start ack in the
  // producer protocol, so this is when the StartDataSource commands were
  // queued.
  uint64_t all_data_sources_started = 0;
  // The latest flush every producer acked in time (FlushSession, periodic
  // flushes), or the stop when every instance acked its StopDataSource and
  // the rings were drained (kFlush).
  uint64_t all_data_sources_flushed = 0;
  // The session stopped: its instances acked their stop (or timed out) and
  // its buffers left the rings' allowed sets.
  uint64_t tracing_disabled = 0;
};

// What a session's end or clone produced, for the service's summary, the
// consumer's SessionSummary and tests.
struct ExportSummary {
  trace_export::ExportStats export_stats;
  trace_buffer::TraceBufferStats buffer_stats;
  // Drainer totals over every ring the core ever had (for a snapshot: when
  // the buffer was copied).
  ring_drainer::RingStats drainer_stats;
  // Packets the buffer overwrote unread (RING_BUFFER policy), up to the
  // export (for a snapshot: up to the copy): TraceBufferStats::
  // packets_overwritten, which also counts the packets erased before their
  // continuation arrived.
  uint64_t packets_overwritten = 0;
  // Packets lost in chunks a full DISCARD buffer rejected
  // (TraceBufferStats::packets_discarded, which the buffer counts where it
  // rejects them). Set before the export, which writes it into TraceStats
  // (ringtrace_packets_discarded, with ringtrace_packets_overwritten from
  // the buffers' own stats).
  uint64_t packets_discarded = 0;
  uint64_t file_size = 0;
  // Bytes written by this export (a consumer's fd may hold other data
  // before the session's offset).
  uint64_t bytes_written = 0;
};

// What went wrong waiting for one session's producers. Each session counts
// its own (its trace's TraceStats, fields 1020-1022); SessionStats sums
// every session's since the service started.
struct SessionCounters {
  // Instances that did not answer StopDataSource within
  // data_source_stop_timeout_ms.
  uint64_t data_source_stop_timeouts = 0;
  // Producers that did not answer a Flush within its timeout.
  uint64_t flush_timeouts = 0;
  // Acks that came after their stop or flush timed out (accepted). A
  // session sees only its late flush acks: a late stop ack comes after its
  // session was written and freed, so only SessionStats counts it.
  uint64_t late_acks = 0;
  // The session's flushes, for Perfetto's TraceStats fields of these names
  // (not the 1020-1022 above): FlushSession and periodic flushes counted
  // when issued and when they complete (acked in time, or timed out), and
  // the stop, the final flush, once every instance acked its
  // StopDataSource (succeeded) or the stop timed out (failed). A flush
  // still waiting when the session is written counts as requested only.
  uint64_t flushes_requested = 0;
  uint64_t flushes_succeeded = 0;
  uint64_t flushes_failed = 0;
  trace_export::TraceExporter::FinalFlush final_flush =
      trace_export::TraceExporter::FinalFlush::kUnspecified;
};

// The sessions' counters.
struct SessionStats {
  uint64_t sessions_started = 0;
  uint64_t sessions_refused = 0;  // invalid config or a limit
  uint64_t sessions_written = 0;
  uint64_t sessions_write_errors = 0;
  uint64_t sessions_aborted = 0;  // the consumer left: nothing written
  uint64_t data_source_instances_started = 0;
  uint64_t data_source_stop_timeouts = 0;
  uint64_t flush_timeouts = 0;
  // Acks that came after their stop or flush timed out (accepted).
  uint64_t late_acks = 0;
};

// Session counters as TraceStats fields, like EncodeServiceCounters():
//   1020 data_source_stop_timeouts   1021 flush_timeouts   1022 late_acks
// A session's trace, clone and GetTraceStats carry the session's own.
std::string EncodeSessionCounters(const SessionCounters& s);

// The packets |buffers| lost, as TraceStats fields (BufferStats counts
// chunks only): 1030 packets_overwritten (the buffers' own
// TraceBufferStats::packets_overwritten), 1031 packets_discarded (given:
// the sinks count those). Read the buffers on the thread that owns them.
std::string EncodeBufferLoss(
    const std::vector<const trace_buffer::TraceBufferV2*>& buffers,
    uint64_t packets_discarded);

// Adds every counter of |s| to |*total|.
void AddBufferStats(const trace_buffer::TraceBufferStats& s,
                    trace_buffer::TraceBufferStats* total);

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_SERVICE_STATS_H_
