/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ServiceCore's sessions, their end and their traces (service_core.h,
// docs/sessions.md): the stop (StopDataSource, the acks or their timeout,
// the service's own stop), the final drain and the trace written
// (session_export.h), write_into_file's periodic writes, clones and
// GetTraceStats.

#include "src/tracing/service/traced/service_core.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "ringtrace/logging.h"
#include "src/base/time.h"

namespace ringtrace {
namespace traced {

namespace {

using ring_drainer::DrainMode;
using ring_drainer::RingDrainer;
using ring_drainer::RingId;
using ring_drainer::TargetBuffer;
using trace_buffer::BufferID;
using trace_buffer::ProducerID;
using trace_buffer::TraceBufferV2;

}  // namespace

void ServiceCore::OpenStream(Session* s, Clock::time_point now) {
  s->stream_file.reset(new trace_export::TraceFileWriter(s->fd.get()));
  s->stream.reset(new trace_export::TraceExporter(s->stream_file.get()));
  TraceHeader header;
  header.trace_config = &s->config.serialized;
  header.clocks = s->start_clocks;
  header.uuid = s->uuid;
  header.lifecycle = s->lifecycle;  // tracing_started only, so far
  WriteTraceHeader(s->stream.get(), header);
  s->next_file_write =
      now + std::chrono::milliseconds(s->config.file_write_period_ms);
}

base::Status ServiceCore::StopSession(SessionId id,
                                      uint64_t tag,
                                      Clock::time_point now) {
  Session* s = nullptr;
  base::Status status = FindRunningSession(id, &s);
  if (status.ok())
    BeginStop(s, tag, /*by_service=*/false, now);
  return status;
}

void ServiceCore::BeginStop(Session* s,
                            uint64_t tag,
                            bool by_service,
                            Clock::time_point now) {
  s->stopping = true;
  s->stop_tag = tag;
  s->stop_by_service = by_service;
  s->stop_deadline =
      now + std::chrono::milliseconds(s->config.data_source_stop_timeout_ms);
  SendStops(s);
  MaybeFinishStop(s->id, now);
}

void ServiceCore::MaybeFinishStop(SessionId id, Clock::time_point now) {
  auto it = sessions_.find(id);
  if (it == sessions_.end() || !it->second->stopping)
    return;
  Session* s = it->second.get();
  // Instances of an overdue producer are not waited for: they count as
  // timeouts at once (Producer::overdue).
  uint64_t unacked = 0;
  uint64_t not_awaited = 0;
  for (const Instance& inst : s->instances) {
    if (inst.stop_acked)
      continue;
    if (IsOverdue(inst.producer_id))
      ++not_awaited;
    else
      ++unacked;
  }
  if (unacked != 0 && now < s->stop_deadline)
    return;
  if (unacked + not_awaited != 0) {
    session_stats_.data_source_stop_timeouts += unacked + not_awaited;
    s->counters.data_source_stop_timeouts += unacked + not_awaited;
    RT_LOG(
        "session %llu: %llu data source instance(s) did not acknowledge "
        "the stop within %u ms, %llu of producers that owe earlier answers "
        "(not waited for)",
        static_cast<unsigned long long>(id),
        static_cast<unsigned long long>(unacked + not_awaited),
        s->config.data_source_stop_timeout_ms,
        static_cast<unsigned long long>(not_awaited));
    OweLateStopAcks(s, /*timed_out=*/true);
  }
  FinalizeSession(id, /*write=*/true, now);
}

void ServiceCore::AbortSession(SessionId id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end())
    return;
  Session* s = it->second.get();
  SendStops(s);
  OweLateStopAcks(s, /*timed_out=*/false);
  ++session_stats_.sessions_aborted;
  FinalizeSession(id, /*write=*/false, Clock::now());
}

void ServiceCore::StopAllSessions(Clock::time_point now) {
  stopping_ = true;
  for (SessionId id : SessionIds()) {
    auto it = sessions_.find(id);  // a stop may have finished (erased) it
    if (it != sessions_.end() && !it->second->stopping)
      BeginStop(it->second.get(), /*tag=*/0, /*by_service=*/true, now);
  }
}

void ServiceCore::EndAllSessions(Clock::time_point now) {
  for (SessionId id : SessionIds()) {
    Session* s = sessions_[id].get();
    if (!s->stopping) {
      s->stopping = true;
      s->stop_by_service = true;
    }
    SendStops(s);
    OweLateStopAcks(s, /*timed_out=*/false);
    FinalizeSession(id, /*write=*/true, now);
  }
}

void ServiceCore::RecordServiceEvent(
    Session* s,
    trace_export::TraceExporter::ServiceEvent event,
    uint64_t* slot) {
  *slot = base::ClockNs(CLOCK_BOOTTIME);
  if (s->stream)
    s->stream->WriteServiceEvent(event, *slot);
}

void ServiceCore::RecordStopEvents(Session* s) {
  using Event = trace_export::TraceExporter::ServiceEvent;
  bool all_acked = true;
  for (const Instance& inst : s->instances)
    all_acked = all_acked && inst.stop_acked;
  // The stop is the session's final flush (Perfetto flushes before it
  // stops): a producer acks its StopDataSource once its writers published
  // what they had.
  using FinalFlush = trace_export::TraceExporter::FinalFlush;
  ++s->counters.flushes_requested;
  if (all_acked)
    ++s->counters.flushes_succeeded;
  else
    ++s->counters.flushes_failed;
  s->counters.final_flush =
      all_acked ? FinalFlush::kSucceeded : FinalFlush::kFailed;
  // Every data source flushed its data at its stop, and the kFlush drain
  // took what the rings held.
  if (all_acked) {
    RecordServiceEvent(s, Event::kAllDataSourcesFlushed,
                       &s->lifecycle.all_data_sources_flushed);
  }
  RecordServiceEvent(s, Event::kTracingDisabled,
                     &s->lifecycle.tracing_disabled);
}

void ServiceCore::FinalizeSession(SessionId id,
                                  bool write,
                                  Clock::time_point now) {
  auto it = sessions_.find(id);
  RT_CHECK(it != sessions_.end());
  Session* s = it->second.get();
  struct RingWork {
    RingId id;
    uint32_t num_chunks;
    std::vector<TargetBuffer> allowed;  // without this session's buffers
  };
  std::vector<RingWork> rings;
  for (ProducerID pid : SessionWriters(*s)) {
    const Producer& p = producers_.at(pid);
    rings.push_back({p.ring_id, p.region->view().geometry().num_chunks,
                     AllowedBuffersFor(pid, s)});
  }
  ExportSummary summary;
  loop_->RunSync([&](RingDrainer* d) {
    // kFlush: the instances stopped (or timed out); whatever their writers
    // left in open chunks is scraped now, before the buffers leave.
    if (write) {
      for (const RingWork& r : rings)
        DrainBounded(d, r.id, r.num_chunks, DrainMode::kFlush);
    }
    for (RingWork& r : rings)
      d->SetAllowedBuffers(r.id, std::move(r.allowed));
    summary.drainer_stats = d->TotalStats();
  });
  // No ring routes to the buffers any more: they are this thread's now.
  if (write) {
    // What the session's writers lost since their last report.
    for (ProducerID pid : SessionWriters(*s))
      ReadLossArea(pid, producers_.at(pid), s);
    RecordStopEvents(s);
    std::vector<TraceBufferV2*> buffers;
    for (const auto& b : s->buffers) {
      buffers.push_back(b->buffer.get());
      summary.packets_overwritten += b->buffer->stats().packets_overwritten;
      summary.packets_discarded += b->sink->packets_discarded();
    }
    TraceContents contents = ContentsOf(*s, buffers);
    contents.chunks_discarded = ChunksLostBeforeBuffers(summary.drainer_stats) -
                                s->lost_before_buffers_at_start;
    contents.packets_discarded = summary.packets_discarded;
    const ServiceState service = CurrentServiceState();
    base::Status status;
    if (s->stream) {
      // Streamed: the rest after what the periodic writes appended.
      status = s->stream_status;
      if (status.ok())
        status = WriteTraceBody(s->stream.get(), contents, service, &summary);
      summary.bytes_written = s->stream_file->stats().bytes_written;
      struct stat st = {};
      if (fstat(s->fd.get(), &st) == 0)
        summary.file_size = static_cast<uint64_t>(st.st_size);
    } else {
      TraceHeader header;
      header.trace_config = &s->config.serialized;
      header.clocks = s->start_clocks;
      header.uuid = s->uuid;
      header.lifecycle = s->lifecycle;
      header.compression =
          s->config.deflate ? trace_export::TraceExporter::Compression::kDeflate
                            : trace_export::TraceExporter::Compression::kNone;
      status = WriteTrace(s->fd.get(), header, contents, service, &summary);
    }
    if (status.ok() && fsync(s->fd.get()) != 0 && errno != EINVAL &&
        errno != EROFS) {
      status = base::ErrStatus("fsync: %s", strerror(errno));
    }
    if (status.ok())
      ++session_stats_.sessions_written;
    else
      ++session_stats_.sessions_write_errors;
    SessionEvent ev;
    ev.type = SessionEvent::Type::kEnded;
    ev.session_id = id;
    ev.consumer_id = s->consumer_id;
    ev.tag = s->stop_tag;
    ev.by_service = s->stop_by_service;
    ev.status = status;
    ev.summary = summary;
    ev.duration_ms = ElapsedMs(s->started, now);
    ev.packets_lost = summary.packets_overwritten + summary.packets_discarded +
                      summary.export_stats.invalid_packets +
                      s->losses.totals().packets_dropped;
    if (id == default_session_) {
      default_session_end_.ended = true;
      default_session_end_.status = ev.status;
      default_session_end_.summary = ev.summary;
    }
    events_.push_back(std::move(ev));
  } else if (id == default_session_) {
    default_session_end_.ended = true;
    default_session_end_.status = base::ErrStatus("aborted: not written");
  }
  if (id == default_session_) {
    // New producers' own writers have nowhere to write from now on.
    default_session_ = 0;
    default_buffer_ = kNoDefaultBuffer;
  }
  session_buffer_bytes_ -= s->config.total_buffer_bytes();
  sessions_.erase(it);
}

bool ServiceCore::WriteIntoFile(Session* s, Clock::time_point now) {
  s->next_file_write =
      now + std::chrono::milliseconds(s->config.file_write_period_ms);
  const std::vector<std::pair<RingId, uint32_t>> rings = SessionRings(*s);
  trace_export::TraceExporter* stream = s->stream.get();
  const bool ok = s->stream_status.ok();
  loop_->RunSync([&](RingDrainer* d) {
    // kNormal, as a clone: the writers are not disturbed.
    for (const auto& r : rings)
      DrainBounded(d, r.first, r.second, DrainMode::kNormal);
    if (!ok)
      return;
    for (const auto& b : s->buffers)
      stream->ExportBuffer(b->buffer.get());
  });
  if (s->stream_status.ok())
    s->stream_status = s->stream_file->Flush();
  const bool full =
      s->config.max_file_size_bytes != 0 &&
      s->stream_file->stats().bytes_written >= s->config.max_file_size_bytes;
  if (s->stream_status.ok() && !full)
    return false;
  if (!s->stream_status.ok()) {
    RT_LOG("session %llu: %s; ending it",
           static_cast<unsigned long long>(s->id),
           s->stream_status.message().c_str());
  }
  BeginStop(s, 0, /*by_service=*/true, now);
  return true;
}

base::Status ServiceCore::CloneSession(SessionId id,
                                       int out_fd,
                                       ExportSummary* summary) {
  *summary = ExportSummary();
  Session* s = nullptr;
  base::Status status = FindSession(id, &s);
  if (!status.ok())
    return status;
  const std::vector<std::pair<RingId, uint32_t>> rings = SessionRings(*s);
  std::vector<std::unique_ptr<TraceBufferV2>> clones;
  loop_->RunSync([&](RingDrainer* d) {
    // kNormal, never kFlush: the session goes on undisturbed (see the
    // header).
    for (const auto& r : rings)
      DrainBounded(d, r.first, r.second, DrainMode::kNormal);
    for (const auto& b : s->buffers) {
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
  TraceHeader header;
  header.trace_config = &s->config.serialized;
  header.clocks = s->start_clocks;
  header.uuid = trace_export::TraceExporter::NewTraceUuid();
  header.lifecycle = s->lifecycle;
  header.compression = s->config.deflate
                           ? trace_export::TraceExporter::Compression::kDeflate
                           : trace_export::TraceExporter::Compression::kNone;
  TraceContents contents = ContentsOf(*s, buffers);
  contents.chunks_discarded = ChunksLostBeforeBuffers(summary->drainer_stats) -
                              s->lost_before_buffers_at_start;
  contents.packets_discarded = summary->packets_discarded;
  return WriteTrace(out_fd, header, contents, CurrentServiceState(), summary);
}

base::Status ServiceCore::GetSessionTraceStats(SessionId id,
                                               std::string* trace_stats) {
  Session* s = nullptr;
  base::Status status = FindSession(id, &s);
  if (!status.ok())
    return status;
  std::vector<TraceBufferV2*> buffers;
  for (const auto& b : s->buffers)
    buffers.push_back(b->buffer.get());
  TraceContents contents = ContentsOf(*s, buffers);
  const ServiceState service = CurrentServiceState();
  // The live buffers and the sinks are read on the drain thread (this one
  // waits meanwhile).
  loop_->RunSync([&](RingDrainer* d) {
    contents.chunks_discarded = ChunksLostBeforeBuffers(d->TotalStats()) -
                                s->lost_before_buffers_at_start;
    for (const auto& b : s->buffers)
      contents.packets_discarded += b->sink->packets_discarded();
    *trace_stats = EncodeTraceStatsNow(contents, service);
  });
  return base::OkStatus();
}

}  // namespace traced
}  // namespace ringtrace
