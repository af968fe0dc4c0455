/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/session_writer.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <memory>
#include <utility>

#include "ringtrace/logging.h"
#include "src/base/time.h"

namespace ringtrace {
namespace traced {

namespace {

using ring_drainer::DrainMode;
using ring_drainer::RingDrainer;
using ring_drainer::RingId;
using trace_buffer::TraceBufferV2;
using trace_export::TraceExporter;

}  // namespace

SessionWriter::SessionWriter(ring_drainer::DrainLoop* loop,
                             const ProducerTable* producers,
                             const SessionTable* sessions,
                             uint64_t file_write_slice_bytes)
    : loop_(loop),
      producers_(producers),
      sessions_(sessions),
      file_write_slice_bytes_(file_write_slice_bytes) {
  RT_CHECK(file_write_slice_bytes_ > 0);
}

// static
TraceHeader SessionWriter::HeaderOf(const Session& s,
                                    const TraceExporter::TraceUuid& uuid) {
  TraceHeader header;
  header.trace_config = &s.config.serialized;
  header.clocks = s.start_clocks;
  header.uuid = uuid;
  header.lifecycle = s.lifecycle;
  header.compression = s.config.deflate ? TraceExporter::Compression::kDeflate
                                        : TraceExporter::Compression::kNone;
  return header;
}

// static
TraceContents SessionWriter::ContentsOf(
    const Session& session,
    const std::vector<TraceBufferV2*>& buffers) {
  TraceContents c;
  c.buffers = buffers;
  for (const auto& b : session.buffers)
    c.buffer_ids.push_back(b->id);
  c.counters = &session.counters;
  c.losses = &session.losses;
  return c;
}

ServiceState SessionWriter::CurrentServiceState() const {
  ServiceState s;
  s.counters = counters_;
  s.producer_stats = producers_->stats();
  s.producers_connected = static_cast<uint32_t>(producers_->num_producers());
  s.data_sources_registered =
      static_cast<uint32_t>(producers_->num_data_sources());
  s.tracing_sessions = static_cast<uint32_t>(sessions_->num_sessions());
  s.total_buffers = static_cast<uint32_t>(sessions_->num_buffers());
  const ProducerTable* producers = producers_;
  s.is_connected = [producers](trace_buffer::ProducerID id) {
    return producers->has_producer(id);
  };
  return s;
}

void SessionWriter::OpenStream(Session* s, Clock::time_point now) {
  // tracing_started only, so far.
  s->stream.reset(new TraceStream(s->fd.get(), HeaderOf(*s, s->uuid)));
  s->next_file_write =
      now + std::chrono::milliseconds(s->config.file_write_period_ms);
}

void SessionWriter::RecordServiceEvent(Session* s,
                                       TraceExporter::ServiceEvent event,
                                       uint64_t* slot) {
  *slot = base::ClockNs(CLOCK_BOOTTIME);
  if (s->stream)
    s->stream->WriteServiceEvent(event, *slot);
}

bool SessionWriter::AppendToFile(Session* s, Clock::time_point now) {
  s->next_file_write =
      now + std::chrono::milliseconds(s->config.file_write_period_ms);
  const std::vector<std::pair<RingId, uint32_t>> rings =
      sessions_->SessionRings(*s);
  std::vector<TraceBufferV2*> buffers;
  for (const auto& b : s->buffers)
    buffers.push_back(b->buffer.get());
  TraceStream* stream = s->stream.get();
  const bool ok = s->stream_status.ok();
  // In slices on the drain thread, each after a pass over the session's
  // rings (kNormal, as a clone: the writers are not disturbed), so no ring
  // waits for the whole write: under load a ring fills in milliseconds. A
  // bounded number of slices: what arrives faster than it is written goes
  // at the next period.
  uint64_t buffered = 0;
  for (const TraceBufferV2* b : buffers)
    buffered += b->size();
  const uint64_t max_slices = buffered / file_write_slice_bytes_ + 2;
  bool done = false;
  for (uint64_t slice = 0; !done && slice < max_slices; ++slice) {
    loop_->RunSync([&](RingDrainer* d) {
      for (const auto& r : rings)
        DrainBounded(d, r.first, r.second, DrainMode::kNormal);
      done =
          !ok || stream->AppendBuffersSlice(buffers, file_write_slice_bytes_);
    });
    file_write_slices_++;
  }
  if (s->stream_status.ok())
    s->stream_status = stream->Flush();
  const bool full = s->config.max_file_size_bytes != 0 &&
                    stream->bytes_written() >= s->config.max_file_size_bytes;
  if (s->stream_status.ok() && !full)
    return false;
  if (!s->stream_status.ok()) {
    RT_LOG("session %llu: %s; ending it",
           static_cast<unsigned long long>(s->id),
           s->stream_status.message().c_str());
  }
  return true;
}

base::Status SessionWriter::WriteFinalTrace(Session* s,
                                            ExportSummary* summary) {
  std::vector<TraceBufferV2*> buffers;
  for (const auto& b : s->buffers) {
    buffers.push_back(b->buffer.get());
    summary->packets_overwritten += b->buffer->stats().packets_overwritten;
    summary->packets_discarded += b->sink->packets_discarded();
  }
  TraceContents contents = ContentsOf(*s, buffers);
  contents.chunks_discarded = ChunksLostBeforeBuffers(summary->drainer_stats) -
                              s->lost_before_buffers_at_start;
  contents.packets_discarded = summary->packets_discarded;
  const ServiceState service = CurrentServiceState();
  base::Status status;
  if (s->stream) {
    // Streamed: the rest after what the periodic writes appended.
    status = s->stream_status;
    if (status.ok())
      status = s->stream->Finish(contents, service, summary);
    summary->bytes_written = s->stream->bytes_written();
    struct stat st = {};
    if (fstat(s->fd.get(), &st) == 0)
      summary->file_size = static_cast<uint64_t>(st.st_size);
  } else {
    status = WriteTrace(s->fd.get(), HeaderOf(*s, s->uuid), contents, service,
                        summary);
  }
  if (status.ok() && fsync(s->fd.get()) != 0 && errno != EINVAL &&
      errno != EROFS) {
    status = base::ErrStatus("fsync: %s", strerror(errno));
  }
  return status;
}

base::Status SessionWriter::Clone(const Session& s,
                                  int out_fd,
                                  ExportSummary* summary) {
  const std::vector<std::pair<RingId, uint32_t>> rings =
      sessions_->SessionRings(s);
  std::vector<std::unique_ptr<TraceBufferV2>> clones;
  loop_->RunSync([&](RingDrainer* d) {
    // kNormal, never kFlush: the session goes on undisturbed
    // (TracingSessions::CloneSession).
    for (const auto& r : rings)
      DrainBounded(d, r.first, r.second, DrainMode::kNormal);
    for (const auto& b : s.buffers) {
      clones.push_back(b->buffer->CloneReadOnly());
      summary->packets_overwritten += b->buffer->stats().packets_overwritten;
      summary->packets_discarded += b->sink->packets_discarded();
    }
    summary->drainer_stats = d->TotalStats();
  });
  std::vector<TraceBufferV2*> buffers;
  for (const auto& c : clones) {
    if (!c)
      return base::ErrStatus("cannot allocate a copy of the session's buffers");
    buffers.push_back(c.get());
  }
  // The clone is a trace file of its own: a new uuid (as Perfetto gives
  // clones), the session's service events so far (no tracing_disabled).
  const TraceHeader header = HeaderOf(s, TraceExporter::NewTraceUuid());
  TraceContents contents = ContentsOf(s, buffers);
  contents.chunks_discarded = ChunksLostBeforeBuffers(summary->drainer_stats) -
                              s.lost_before_buffers_at_start;
  contents.packets_discarded = summary->packets_discarded;
  return WriteTrace(out_fd, header, contents, CurrentServiceState(), summary);
}

void SessionWriter::TraceStats(const Session& s, std::string* trace_stats) {
  std::vector<TraceBufferV2*> buffers;
  for (const auto& b : s.buffers)
    buffers.push_back(b->buffer.get());
  TraceContents contents = ContentsOf(s, buffers);
  const ServiceState service = CurrentServiceState();
  // The live buffers and the sinks are read on the drain thread (this one
  // waits meanwhile).
  loop_->RunSync([&](RingDrainer* d) {
    contents.chunks_discarded = ChunksLostBeforeBuffers(d->TotalStats()) -
                                s.lost_before_buffers_at_start;
    for (const auto& b : s.buffers)
      contents.packets_discarded += b->sink->packets_discarded();
    *trace_stats = EncodeTraceStatsNow(contents, service);
  });
}

}  // namespace traced
}  // namespace ringtrace
