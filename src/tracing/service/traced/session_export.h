/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Writing a session's trace: the header (TraceConfig, SystemInfo,
// TraceUuid, the start ClockSnapshot, the service events so far), every
// packet of its buffers, the marks of producers that died, the TraceStats
// (the buffers' own, the service's state, the session's counters and
// losses) and a closing ClockSnapshot. One implementation for a session's
// end, a streamed session's tail, a clone and GetTraceStats
// (docs/trace_export.md). The only place of the service that turns a
// session into trace bytes: the functions hold no state (what the service
// knows at the time comes in a ServiceState, what the trace holds in a
// TraceContents); a TraceStream holds the exporter of a write_into_file
// session, whose trace is written as it goes.
//
// Thread model: the caller owns the buffers it passes (no ring routes to
// them, or they are read-only copies), except TraceStream::AppendBuffersSlice,
// which runs on the drain thread where the live buffers are readable.

#ifndef SRC_TRACING_SERVICE_TRACED_SESSION_EXPORT_H_
#define SRC_TRACING_SERVICE_TRACED_SESSION_EXPORT_H_

#include <stdint.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ringtrace/status.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/trace_export/trace_exporter.h"
#include "src/tracing/service/trace_export/trace_file_writer.h"
#include "src/tracing/service/traced/producer_loss_table.h"
#include "src/tracing/service/traced/service_stats.h"

namespace ringtrace {
namespace traced {

// What a trace file starts with (WriteTraceHeader).
struct TraceHeader {
  const std::string* trace_config = nullptr;          // serialized TraceConfig
  trace_export::TraceExporter::ClockReadings clocks;  // tracing started
  trace_export::TraceExporter::TraceUuid uuid;
  TraceLifecycle lifecycle;
  // How WriteTrace() writes the packets (the session's compression_type).
  trace_export::TraceExporter::Compression compression =
      trace_export::TraceExporter::Compression::kNone;
};

// The service's side of a trace's TraceStats, as of when it is written.
struct ServiceState {
  ServiceCounters counters;
  ProducerStats producer_stats;
  uint32_t producers_connected = 0;
  uint32_t data_sources_registered = 0;  // by the connected producers
  uint32_t tracing_sessions = 0;
  uint32_t total_buffers = 0;
  // Whether a producer holds ProducerID |id| now (a departed producer's
  // records must not take the sequence ids of its id's new owner).
  std::function<bool(trace_buffer::ProducerID id)> is_connected;
};

// What one trace holds.
struct TraceContents {
  // The session's buffers (or copies), and their BufferIDs in that order.
  std::vector<trace_buffer::TraceBufferV2*> buffers;
  std::vector<trace_buffer::BufferID> buffer_ids;
  // TraceStats.chunks_discarded: the chunks lost before any buffer saw
  // them while the session lived.
  uint64_t chunks_discarded = 0;
  // Packets lost in chunks a full DISCARD buffer rejected (the sinks').
  uint64_t packets_discarded = 0;
  const SessionCounters* counters = nullptr;  // the session's own
  const ProducerLossTable* losses = nullptr;  // the session's table
};

// The TraceConfig, a SystemInfo, the TraceUuid, the start ClockSnapshot
// and every service event of |header.lifecycle| that happened, in the
// order tracing_started, all_data_sources_started,
// all_data_sources_flushed, tracing_disabled.
void WriteTraceHeader(trace_export::TraceExporter* exporter,
                      const TraceHeader& header);

// The rest of a trace after its header (also the end of a streamed
// session): every packet of the buffers, the marks of producers that died
// (removed without a final report: TraceExporter::WriteProducerEnd),
// read_tracing_buffers_completed, TraceStats, the closing ClockSnapshot,
// and the exporter's Finish(). Sets |summary|'s export_stats and
// buffer_stats.
base::Status WriteTraceBody(trace_export::TraceExporter* exporter,
                            const TraceContents& contents,
                            const ServiceState& service,
                            ExportSummary* summary);

// A whole trace (header and body) appended to |out_fd| (not owned, not
// closed), compressed as |header.compression| says (docs/trace_export.md,
// "Compression"; the
// export stats then carry the uncompressed and compressed sizes and the
// compression's CPU time). Also sets |summary|'s file_size and
// bytes_written.
base::Status WriteTrace(int out_fd,
                        const TraceHeader& header,
                        const TraceContents& contents,
                        const ServiceState& service,
                        ExportSummary* summary);

// The TraceStats of |contents| as its trace would end with now (no
// sequence ids: no file was written), serialized.
std::string EncodeTraceStatsNow(const TraceContents& contents,
                                const ServiceState& service);

// The trace of a write_into_file session, written into its file as it
// goes by one exporter for the session's life (sequence ids persist): the
// header at the start, the service events when they happen, the buffers'
// packets at each periodic write, and the body's rest at the end.
// Invariant: what a call writes reaches the file at the next Flush() (or
// Finish()); the first write error sticks (TraceFileWriter).
class TraceStream {
 public:
  // Writes |header| (WriteTraceHeader) into the batch for |fd| (not
  // owned, not closed; it outlives the stream).
  TraceStream(int fd, const TraceHeader& header);
  TraceStream(const TraceStream&) = delete;
  TraceStream& operator=(const TraceStream&) = delete;

  void WriteServiceEvent(trace_export::TraceExporter::ServiceEvent event,
                         uint64_t timestamp);
  // Packets of |buffers| until |max_packet_bytes| of them were written
  // (TraceExporter::ExportBufferSlice), starting at the buffer after the
  // one the last slice's budget ran out in, so each gets its turn. Returns
  // true when every buffer had no more.
  bool AppendBuffersSlice(
      const std::vector<trace_buffer::TraceBufferV2*>& buffers,
      uint64_t max_packet_bytes);
  // Writes the batch out; the first error.
  base::Status Flush();
  // Bytes written into the file so far.
  uint64_t bytes_written() const { return file_.stats().bytes_written; }
  // WriteTraceBody: the trace's rest, after what was appended.
  base::Status Finish(const TraceContents& contents,
                      const ServiceState& service,
                      ExportSummary* summary);

 private:
  trace_export::TraceFileWriter file_;
  trace_export::TraceExporter exporter_;  // writes into |file_|
  size_t next_buffer_ = 0;                // where AppendBuffersSlice() starts
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_SESSION_EXPORT_H_
