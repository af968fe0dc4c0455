/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/session_export.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/base/time.h"
#include "src/tracing/service/trace_export/trace_file_writer.h"

namespace ringtrace {
namespace traced {

namespace {

using trace_buffer::TraceBufferV2;
using trace_export::TraceExporter;

std::vector<const TraceBufferV2*> ConstBuffers(const TraceContents& c) {
  return std::vector<const TraceBufferV2*>(c.buffers.begin(), c.buffers.end());
}

// The Perfetto fields of the TraceStats besides the buffers' own
// (docs/trace_export.md, "Perfetto's stats from ringtrace's counters"):
// the service's state, chunks_discarded, the session's flushes and, per
// buffer, the packets the producers said they dropped writing into it.
TraceExporter::ServiceStats MakeServiceStats(const TraceContents& contents,
                                             const ServiceState& service) {
  TraceExporter::ServiceStats s;
  s.producers_connected = service.producers_connected;
  s.producers_seen = service.producer_stats.producers_seen;
  s.chunks_discarded = contents.chunks_discarded;
  for (trace_buffer::BufferID id : contents.buffer_ids)
    s.producer_packets_dropped.push_back(
        contents.losses->PacketsDroppedFor(id));
  s.data_sources_registered = service.data_sources_registered;
  s.data_sources_seen = service.producer_stats.data_sources_seen;
  s.tracing_sessions = service.tracing_sessions;
  s.total_buffers = service.total_buffers;
  const SessionCounters& counters = *contents.counters;
  s.flushes_requested = counters.flushes_requested;
  s.flushes_succeeded = counters.flushes_succeeded;
  s.flushes_failed = counters.flushes_failed;
  s.final_flush = counters.final_flush;
  return s;
}

// The ringtrace fields: the service counters, the session's counters, the
// producers' losses (sequence ids from |exporter|; null: none) and the
// packets the buffers lost.
std::string EncodeRingtraceFields(TraceExporter* exporter,
                                  const TraceContents& contents,
                                  const ServiceState& service) {
  std::string out =
      EncodeServiceCounters(service.counters, service.producer_stats);
  out += EncodeSessionCounters(*contents.counters);
  out += contents.losses->EncodeTraceStatsFields(
      [&](trace_buffer::ProducerID producer, uint32_t writer,
          bool connected) -> uint32_t {
        // A departed producer whose id a connected one holds now: the
        // buffer's sequences of that id are the newcomer's.
        if (!exporter || (!connected && service.is_connected &&
                          service.is_connected(producer)))
          return 0;
        return exporter->SequenceIdFor(
            producer, static_cast<trace_buffer::WriterID>(writer));
      });
  out += EncodeBufferLoss(ConstBuffers(contents), contents.packets_discarded);
  return out;
}

// Marks every producer of |losses| that died (removed without a final
// report) in the trace.
void WriteProducerEnds(TraceExporter* exporter,
                       const ProducerLossTable& losses) {
  losses.ForEachRecord([exporter](const ProducerLossTable::Record& r) {
    if (r.connected || r.final_report || r.removed_boottime_ns == 0)
      return;
    TraceExporter::ProducerEnd end;
    end.pid = r.identity.pid;
    end.uid = r.identity.uid;
    end.producer_id = r.producer_id;
    end.name = r.name;
    end.boottime_ns = r.removed_boottime_ns;
    exporter->WriteProducerEnd(end);
  });
}

}  // namespace

void WriteTraceHeader(TraceExporter* exporter, const TraceHeader& header) {
  using Event = TraceExporter::ServiceEvent;
  exporter->WriteTraceConfig(header.trace_config->data(),
                             header.trace_config->size());
  exporter->WriteSystemInfo(TraceExporter::ReadSystemInfo());
  exporter->WriteTraceUuid(header.uuid);
  exporter->WriteClockSnapshot(header.clocks);
  const TraceLifecycle& l = header.lifecycle;
  const struct {
    Event event;
    uint64_t ts;
  } events[] = {
      {Event::kTracingStarted, l.tracing_started},
      {Event::kAllDataSourcesStarted, l.all_data_sources_started},
      {Event::kAllDataSourcesFlushed, l.all_data_sources_flushed},
      {Event::kTracingDisabled, l.tracing_disabled},
  };
  for (const auto& e : events) {
    if (e.ts != 0)
      exporter->WriteServiceEvent(e.event, e.ts);
  }
}

base::Status WriteTraceBody(TraceExporter* exporter,
                            const TraceContents& contents,
                            const ServiceState& service,
                            ExportSummary* summary) {
  for (TraceBufferV2* buffer : contents.buffers)
    exporter->ExportBuffer(buffer);
  WriteProducerEnds(exporter, *contents.losses);
  exporter->WriteServiceEvent(
      TraceExporter::ServiceEvent::kReadTracingBuffersCompleted,
      base::ClockNs(CLOCK_BOOTTIME));
  // chunks_discarded: only what no buffer saw. A chunk a buffer rejected is
  // counted by that buffer alone, in its BufferStats.chunks_discarded
  // (DISCARD full) or abi_violations (malformed): once.
  TraceExporter::ServiceStats service_stats =
      MakeServiceStats(contents, service);
  service_stats.extra_fields =
      EncodeRingtraceFields(exporter, contents, service);
  exporter->WriteTraceStats(ConstBuffers(contents), service_stats);
  exporter->WriteClockSnapshot();
  const base::Status status = exporter->Finish();
  summary->export_stats = exporter->stats();
  summary->buffer_stats = trace_buffer::TraceBufferStats();
  for (const TraceBufferV2* buffer : contents.buffers)
    AddBufferStats(buffer->stats(), &summary->buffer_stats);
  return status;
}

base::Status WriteTrace(int out_fd,
                        const TraceHeader& header,
                        const TraceContents& contents,
                        const ServiceState& service,
                        ExportSummary* summary) {
  const off_t start_offset = lseek(out_fd, 0, SEEK_CUR);
  trace_export::TraceFileWriter file_writer(out_fd);
  TraceExporter::Options options;
  options.compression = header.compression;
  TraceExporter exporter(&file_writer, options);
  WriteTraceHeader(&exporter, header);
  const base::Status status =
      WriteTraceBody(&exporter, contents, service, summary);
  struct stat st = {};
  if (fstat(out_fd, &st) == 0)
    summary->file_size = static_cast<uint64_t>(st.st_size);
  const off_t end_offset = lseek(out_fd, 0, SEEK_CUR);
  if (start_offset >= 0 && end_offset >= start_offset)
    summary->bytes_written = static_cast<uint64_t>(end_offset - start_offset);
  return status;
}

std::string EncodeTraceStatsNow(const TraceContents& contents,
                                const ServiceState& service) {
  TraceExporter::ServiceStats service_stats =
      MakeServiceStats(contents, service);
  service_stats.extra_fields =
      EncodeRingtraceFields(/*exporter=*/nullptr, contents, service);
  return TraceExporter::EncodeTraceStats(ConstBuffers(contents), service_stats,
                                         /*invalid_packets=*/0);
}

TraceStream::TraceStream(int fd, const TraceHeader& header)
    : file_(fd), exporter_(&file_) {
  WriteTraceHeader(&exporter_, header);
}

void TraceStream::WriteServiceEvent(TraceExporter::ServiceEvent event,
                                    uint64_t timestamp) {
  exporter_.WriteServiceEvent(event, timestamp);
}

bool TraceStream::AppendBuffersSlice(const std::vector<TraceBufferV2*>& buffers,
                                     uint64_t max_packet_bytes) {
  const uint64_t start = exporter_.stats().packet_bytes_exported;
  const size_t n = buffers.size();
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (next_buffer_ + k) % n;
    const uint64_t used = exporter_.stats().packet_bytes_exported - start;
    if (used >= max_packet_bytes) {
      next_buffer_ = i;
      return false;
    }
    if (!exporter_.ExportBufferSlice(buffers[i], max_packet_bytes - used)) {
      // The next slice starts at the next buffer: one that fills faster
      // than it is written does not keep the others waiting.
      next_buffer_ = (i + 1) % n;
      return false;
    }
  }
  return true;
}

base::Status TraceStream::Flush() {
  return file_.Flush();
}

base::Status TraceStream::Finish(const TraceContents& contents,
                                 const ServiceState& service,
                                 ExportSummary* summary) {
  return WriteTraceBody(&exporter_, contents, service, summary);
}

}  // namespace traced
}  // namespace ringtrace
