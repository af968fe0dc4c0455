/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TracingSessions (tracing_sessions.h): the stop of a session
// (StopDataSource, the acks or their timeout, the service's own stop), its
// final drain, its trace written (SessionWriter) and its kEnded event, and
// write_into_file's periodic writes.

#include "src/tracing/service/traced/tracing_sessions.h"

#include <utility>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace traced {

namespace {

using ring_drainer::DrainMode;
using ring_drainer::RingDrainer;
using ring_drainer::RingId;
using ring_drainer::TargetBuffer;
using trace_buffer::ProducerID;

}  // namespace

base::Status TracingSessions::StopSession(SessionId id,
                                          uint64_t tag,
                                          Clock::time_point now) {
  Session* s = nullptr;
  base::Status status = table_->FindRunningSession(id, &s);
  if (status.ok())
    BeginStop(s, tag, /*by_service=*/false, now);
  return status;
}

void TracingSessions::BeginStop(Session* s,
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

void TracingSessions::MaybeFinishStop(SessionId id, Clock::time_point now) {
  Session* s = table_->Find(id);
  if (!s || !s->stopping)
    return;
  // Instances of an overdue producer are not waited for: they count as
  // timeouts at once.
  uint64_t unacked = 0;
  uint64_t not_awaited = 0;
  for (const Instance& inst : s->instances) {
    if (inst.stop_acked)
      continue;
    if (answers_.IsOverdue(inst.producer_id))
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

void TracingSessions::AbortSession(SessionId id) {
  Session* s = table_->Find(id);
  if (!s)
    return;
  SendStops(s);
  OweLateStopAcks(s, /*timed_out=*/false);
  ++session_stats_.sessions_aborted;
  FinalizeSession(id, /*write=*/false, Clock::now());
}

void TracingSessions::StopAllSessions(Clock::time_point now) {
  table_->Close();
  for (SessionId id : table_->SessionIds()) {
    Session* s = table_->Find(id);  // a stop may have finished (erased) it
    if (s && !s->stopping)
      BeginStop(s, /*tag=*/0, /*by_service=*/true, now);
  }
}

void TracingSessions::EndAllSessions(Clock::time_point now) {
  for (SessionId id : table_->SessionIds()) {
    Session* s = table_->Find(id);
    if (!s->stopping) {
      s->stopping = true;
      s->stop_by_service = true;
    }
    SendStops(s);
    OweLateStopAcks(s, /*timed_out=*/false);
    FinalizeSession(id, /*write=*/true, now);
  }
}

void TracingSessions::SendStops(Session* s) {
  for (Instance& inst : s->instances) {
    if (inst.stop_sent)
      continue;
    inst.stop_sent = true;
    ProducerCommand cmd;
    cmd.type = ProducerCommand::Type::kStopDataSource;
    cmd.producer_id = inst.producer_id;
    cmd.id = inst.instance_id;
    commands_.push_back(std::move(cmd));
  }
}

void TracingSessions::OweLateStopAcks(Session* s, bool timed_out) {
  for (const Instance& inst : s->instances) {
    if (!inst.stop_sent || inst.stop_acked)
      continue;
    const ProducerTable::Producer* p = producers_->Find(inst.producer_id);
    if (!p)
      continue;
    answers_.OweLateStopAck(inst.producer_id, inst.instance_id, timed_out,
                            p->name, p->identity.pid);
  }
}

base::Status TracingSessions::OnDataSourceStopped(ProducerID id,
                                                  uint32_t instance_id,
                                                  Clock::time_point now) {
  if (!producers_->has_producer(id))
    return base::OkStatus();
  for (const auto& kv : table_->sessions()) {
    for (Instance& inst : kv.second->instances) {
      if (inst.producer_id != id || inst.instance_id != instance_id)
        continue;
      if (!inst.stop_sent) {
        return base::ErrStatus(
            "DataSourceStopped for instance %u, which was not asked to stop",
            instance_id);
      }
      if (inst.stop_acked) {
        return base::ErrStatus("second DataSourceStopped for instance %u",
                               instance_id);
      }
      inst.stop_acked = true;
      MaybeFinishStop(kv.first, now);
      return base::OkStatus();
    }
  }
  if (answers_.TakeLateStopAck(id, instance_id)) {
    ++session_stats_.late_acks;
    return base::OkStatus();
  }
  return base::ErrStatus("DataSourceStopped for unknown instance %u",
                         instance_id);
}

void TracingSessions::RecordStopEvents(Session* s) {
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
    writer_->RecordServiceEvent(s, Event::kAllDataSourcesFlushed,
                                &s->lifecycle.all_data_sources_flushed);
  }
  writer_->RecordServiceEvent(s, Event::kTracingDisabled,
                              &s->lifecycle.tracing_disabled);
}

ring_drainer::RingStats TracingSessions::DrainAndUnroute(const Session& s,
                                                         bool drain) {
  struct RingWork {
    RingId id;
    uint32_t num_chunks;
    std::vector<TargetBuffer> allowed;  // without this session's buffers
  };
  std::vector<RingWork> rings;
  for (ProducerID pid : table_->SessionWriters(s)) {
    const std::pair<RingId, uint32_t> ring = producers_->RingOf(pid);
    rings.push_back(
        {ring.first, ring.second, table_->AllowedBuffersFor(pid, &s)});
  }
  ring_drainer::RingStats stats;
  loop_->RunSync([&](RingDrainer* d) {
    // kFlush: the instances stopped (or timed out); whatever their writers
    // left in open chunks is scraped now, before the buffers leave.
    if (drain) {
      for (const RingWork& r : rings)
        DrainBounded(d, r.id, r.num_chunks, DrainMode::kFlush);
    }
    for (RingWork& r : rings)
      d->SetAllowedBuffers(r.id, std::move(r.allowed));
    stats = d->TotalStats();
  });
  return stats;
}

void TracingSessions::WriteEndedSession(
    Session* s,
    const ring_drainer::RingStats& drainer_stats,
    Clock::time_point now) {
  // What the session's writers lost since their last report.
  for (ProducerID pid : table_->SessionWriters(*s))
    ReadLossArea(pid, s);
  RecordStopEvents(s);
  ExportSummary summary;
  summary.drainer_stats = drainer_stats;
  const base::Status status = writer_->WriteFinalTrace(s, &summary);
  if (status.ok())
    ++session_stats_.sessions_written;
  else
    ++session_stats_.sessions_write_errors;
  SessionEvent ev;
  ev.type = SessionEvent::Type::kEnded;
  ev.session_id = s->id;
  ev.consumer_id = s->consumer_id;
  ev.tag = s->stop_tag;
  ev.by_service = s->stop_by_service;
  ev.status = status;
  ev.summary = summary;
  ev.duration_ms = ElapsedMs(s->started, now);
  ev.packets_lost = summary.packets_overwritten + summary.packets_discarded +
                    summary.export_stats.invalid_packets +
                    s->losses.totals().packets_dropped;
  if (s->id == table_->default_session()) {
    default_session_end_.ended = true;
    default_session_end_.status = ev.status;
    default_session_end_.summary = ev.summary;
  }
  events_.push_back(std::move(ev));
}

void TracingSessions::FinalizeSession(SessionId id,
                                      bool write,
                                      Clock::time_point now) {
  Session* s = table_->Find(id);
  RT_CHECK(s);
  const ring_drainer::RingStats drainer_stats = DrainAndUnroute(*s, write);
  // No ring routes to the buffers any more: they are this thread's now.
  if (write) {
    WriteEndedSession(s, drainer_stats, now);
  } else if (id == table_->default_session()) {
    default_session_end_.ended = true;
    default_session_end_.status = base::ErrStatus("aborted: not written");
  }
  table_->Erase(id);
}

bool TracingSessions::WriteIntoFile(Session* s, Clock::time_point now) {
  if (!writer_->AppendToFile(s, now))
    return false;
  BeginStop(s, 0, /*by_service=*/true, now);
  return true;
}

}  // namespace traced
}  // namespace ringtrace
