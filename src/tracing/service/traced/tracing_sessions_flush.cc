/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TracingSessions (tracing_sessions.h): flushes (a consumer's, the
// periodic ones), their acks and timeouts, and the overdue producers whose
// answers nothing waits for any more.

#include "src/tracing/service/traced/tracing_sessions.h"

#include <utility>

#include "src/tracing/ipc/consumer_protocol.h"

namespace ringtrace {
namespace traced {

namespace {

using ring_drainer::DrainMode;
using ring_drainer::RingDrainer;
using ring_drainer::RingId;
using trace_buffer::ProducerID;

}  // namespace

base::Status TracingSessions::FlushSession(SessionId id,
                                           uint32_t timeout_ms,
                                           uint64_t tag,
                                           Clock::time_point now,
                                           uint64_t requester) {
  Session* s = nullptr;
  base::Status status = table_->FindRunningSession(id, &s);
  if (!status.ok())
    return status;
  if (s->flushes.size() >= kMaxPendingFlushes) {
    return base::ErrStatus("session %llu: %zu flushes are in progress already",
                           static_cast<unsigned long long>(id),
                           s->flushes.size());
  }
  if (timeout_ms > ipc::kMaxTimeoutMs)
    return base::ErrStatus("timeout_ms must be at most %u", ipc::kMaxTimeoutMs);
  IssueFlush(s, tag, requester ? requester : s->consumer_id,
             /*periodic=*/false,
             timeout_ms ? timeout_ms : s->config.flush_timeout_ms, now);
  return base::OkStatus();
}

void TracingSessions::IssueFlush(Session* s,
                                 uint64_t tag,
                                 uint64_t requester,
                                 bool periodic,
                                 uint32_t timeout_ms,
                                 Clock::time_point now) {
  PendingFlush f;
  f.flush_id = next_flush_id_++;
  if (next_flush_id_ == 0)
    next_flush_id_ = 1;
  f.tag = tag;
  f.requester = requester;
  f.periodic = periodic;
  f.deadline = now + std::chrono::milliseconds(timeout_ms);
  for (ProducerID pid : table_->SessionProducers(*s)) {
    // An overdue producer is sent the flush but not waited for.
    const bool overdue = answers_.IsOverdue(pid);
    answers_.OweFlushAck(pid, f.flush_id, s->id, /*waited=*/!overdue);
    if (overdue)
      ++f.not_awaited;
    else
      f.waiting.insert(pid);
    ProducerCommand cmd;
    cmd.type = ProducerCommand::Type::kFlush;
    cmd.producer_id = pid;
    cmd.id = f.flush_id;
    commands_.push_back(std::move(cmd));
  }
  ++s->counters.flushes_requested;
  s->flushes.push_back(std::move(f));
  if (s->flushes.back().waiting.empty())
    CompleteFlush(s, s->flushes.size() - 1, /*timed_out=*/false);
}

void TracingSessions::CompleteFlush(Session* s, size_t index, bool timed_out) {
  const PendingFlush f = std::move(s->flushes[index]);
  s->flushes.erase(s->flushes.begin() + static_cast<ptrdiff_t>(index));
  const size_t unanswered = (timed_out ? f.waiting.size() : 0) + f.not_awaited;
  session_stats_.flush_timeouts += unanswered;
  s->counters.flush_timeouts += unanswered;
  // Perfetto's flushes_succeeded / flushes_failed (one per flush).
  ++(unanswered != 0 ? s->counters.flushes_failed
                     : s->counters.flushes_succeeded);
  if (timed_out) {
    for (ProducerID pid : f.waiting) {
      if (!producers_->has_producer(pid))
        continue;
      answers_.StopWaitingForFlush(pid, f.flush_id);
      MarkOverdue(pid);
    }
  }
  // The acked producers' writers published what they had; kFlush also
  // takes what a writer that did not answer holds.
  const std::vector<std::pair<RingId, uint32_t>> rings =
      table_->SessionRings(*s);
  loop_->RunSync([&](RingDrainer* d) {
    for (const auto& r : rings)
      DrainBounded(d, r.first, r.second, DrainMode::kFlush);
  });
  if (unanswered == 0) {
    writer_->RecordServiceEvent(
        s, trace_export::TraceExporter::ServiceEvent::kAllDataSourcesFlushed,
        &s->lifecycle.all_data_sources_flushed);
  }
  if (f.periodic)
    return;
  SessionEvent ev;
  ev.type = SessionEvent::Type::kFlushed;
  ev.session_id = s->id;
  ev.consumer_id = f.requester;
  ev.tag = f.tag;
  if (unanswered != 0) {
    ev.status = base::ErrStatus(
        "%zu producer(s) did not acknowledge the flush in time (%zu of them "
        "owe earlier answers and were not waited for); what they had "
        "published was drained",
        unanswered, f.not_awaited);
  }
  events_.push_back(std::move(ev));
}

base::Status TracingSessions::OnFlushAck(ProducerID id,
                                         uint32_t flush_id,
                                         Clock::time_point) {
  if (!producers_->has_producer(id))
    return base::OkStatus();
  ProducerAnswers::OwedFlushAck answered;
  if (!answers_.TakeFlushAck(id, flush_id, &answered)) {
    return base::ErrStatus("FlushAck for flush %u, which it does not owe",
                           flush_id);
  }
  if (!answered.waited) {
    ++session_stats_.late_acks;
    Session* late = table_->Find(answered.session);
    if (late)
      ++late->counters.late_acks;
    return base::OkStatus();
  }
  for (const auto& kv : table_->sessions()) {
    Session* s = kv.second.get();
    for (size_t i = 0; i < s->flushes.size(); ++i) {
      if (s->flushes[i].flush_id != flush_id)
        continue;
      s->flushes[i].waiting.erase(id);
      if (s->flushes[i].waiting.empty())
        CompleteFlush(s, i, /*timed_out=*/false);
      return base::OkStatus();
    }
  }
  return base::OkStatus();
}

void TracingSessions::MarkOverdue(ProducerID id) {
  const ProducerTable::Producer& p = *producers_->Find(id);
  answers_.MarkOverdue(id, p.name, p.identity.pid);
}

// Bounded: each pass that repeats made at least one more producer overdue,
// and none is cleared here.
void TracingSessions::ReleaseWaitsOnOverdue(Clock::time_point now) {
  while (answers_.TakeOverdueMarked()) {
    for (SessionId id : table_->SessionIds()) {
      Session* s = table_->Find(id);
      if (!s)
        continue;
      if (s->stopping) {
        MaybeFinishStop(id, now);
        continue;
      }
      for (size_t i = s->flushes.size(); i-- > 0;) {
        PendingFlush& f = s->flushes[i];
        for (auto pid = f.waiting.begin(); pid != f.waiting.end();) {
          if (!answers_.IsOverdue(*pid)) {
            ++pid;
            continue;
          }
          answers_.StopWaitingForFlush(*pid, f.flush_id);
          ++f.not_awaited;
          pid = f.waiting.erase(pid);
        }
        if (f.waiting.empty())
          CompleteFlush(s, i, /*timed_out=*/false);
      }
    }
  }
}

}  // namespace traced
}  // namespace ringtrace
