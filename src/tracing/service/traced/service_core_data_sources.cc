/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ServiceCore's side of the data-source protocol with producers
// (service_core.h, docs/sessions.md): registrations, DataSourceStopped and
// FlushAck answers (late, duplicate and unknown ones), consumer flushes
// with their timeout, and a producer leaving its sessions.

#include "src/tracing/service/traced/service_core.h"

#include <algorithm>
#include <utility>

#include "ringtrace/logging.h"
#include "src/tracing/ipc/consumer_protocol.h"
#include "src/tracing/ipc/wire_protocol.h"

namespace ringtrace {
namespace traced {

using ring_drainer::DrainMode;
using ring_drainer::RingDrainer;
using ring_drainer::RingId;
using trace_buffer::ProducerID;

using ipc::kMaxDataSourceNameSize;
using ipc::kMaxDataSourcesPerProducer;

base::Status ServiceCore::FlushSession(SessionId id,
                                       uint32_t timeout_ms,
                                       uint64_t tag,
                                       Clock::time_point now,
                                       uint64_t requester) {
  Session* s = nullptr;
  base::Status status = FindRunningSession(id, &s);
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

void ServiceCore::IssueFlush(Session* s,
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
  for (ProducerID pid : SessionProducers(*s)) {
    Producer& p = producers_.at(pid);
    std::map<uint32_t, Producer::OwedFlushAck>& owed = p.owed_flush_acks;
    if (owed.size() >= kMaxOwedAcks)
      owed.erase(owed.begin());
    // An overdue producer is sent the flush but not waited for.
    owed[f.flush_id] = {/*waited=*/!p.overdue, s->id};
    if (p.overdue)
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

void ServiceCore::CompleteFlush(Session* s, size_t index, bool timed_out) {
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
      auto it = producers_.find(pid);
      if (it == producers_.end())
        continue;
      auto owed = it->second.owed_flush_acks.find(f.flush_id);
      if (owed != it->second.owed_flush_acks.end())
        owed->second.waited = false;  // a late ack is accepted
      MarkOverdue(&it->second);
    }
  }
  // The acked producers' writers published what they had; kFlush also
  // takes what a writer that did not answer holds.
  const std::vector<std::pair<RingId, uint32_t>> rings = SessionRings(*s);
  loop_->RunSync([&](RingDrainer* d) {
    for (const auto& r : rings)
      DrainBounded(d, r.first, r.second, DrainMode::kFlush);
  });
  if (unanswered == 0) {
    RecordServiceEvent(
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

base::Status ServiceCore::RegisterDataSource(ProducerID id,
                                             const std::string& name,
                                             Clock::time_point) {
  auto it = producers_.find(id);
  if (it == producers_.end())
    return base::OkStatus();
  Producer& p = it->second;
  if (!IsPrintableName(name, kMaxDataSourceNameSize))
    return base::ErrStatus("invalid data source name");
  if (std::find(p.data_sources.begin(), p.data_sources.end(), name) !=
      p.data_sources.end()) {
    return base::ErrStatus("data source \"%s\" registered twice", name.c_str());
  }
  if (p.data_sources.size() >= kMaxDataSourcesPerProducer) {
    return base::ErrStatus("more than %zu data sources registered",
                           kMaxDataSourcesPerProducer);
  }
  p.data_sources.push_back(name);
  ++stats_.data_sources_seen;
  bool any = false;
  for (auto& kv : sessions_) {
    if (!kv.second->stopping)
      any |= StartInstances(kv.second.get(), id, &p);
  }
  if (any)
    UpdateAllowedBuffers({id});
  return base::OkStatus();
}

base::Status ServiceCore::DeclareCategories(
    ProducerID id,
    const ipc::DataSourceCategoriesMsg& msg) {
  auto it = producers_.find(id);
  if (it == producers_.end())
    return base::OkStatus();
  const std::vector<std::string>& registered = it->second.data_sources;
  if (std::find(registered.begin(), registered.end(), msg.data_source) ==
      registered.end()) {
    return base::ErrStatus(
        "categories declared for data source \"%s\", never registered",
        msg.data_source.c_str());
  }
  return declared_categories_.Add(id, msg.data_source, msg.categories);
}

std::vector<ProducerDataSources> ServiceCore::ListDataSources() const {
  std::vector<ProducerDataSources> out;
  for (const auto& [id, producer] : producers_) {
    ProducerDataSources p;
    p.producer_id = id;
    p.producer_name = producer.name;
    for (const std::string& name : producer.data_sources) {
      ProducerDataSources::DataSource ds;
      ds.name = name;
      ds.categories = declared_categories_.Of(id, name);
      p.data_sources.push_back(std::move(ds));
    }
    out.push_back(std::move(p));
  }
  return out;
}

base::Status ServiceCore::OnDataSourceStopped(ProducerID id,
                                              uint32_t instance_id,
                                              Clock::time_point now) {
  auto pit = producers_.find(id);
  if (pit == producers_.end())
    return base::OkStatus();
  for (auto& kv : sessions_) {
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
  if (pit->second.late_stop_acks.erase(instance_id) != 0) {
    ++session_stats_.late_acks;
    RefreshOverdue(&pit->second);
    return base::OkStatus();
  }
  return base::ErrStatus("DataSourceStopped for unknown instance %u",
                         instance_id);
}

base::Status ServiceCore::OnFlushAck(ProducerID id,
                                     uint32_t flush_id,
                                     Clock::time_point) {
  auto pit = producers_.find(id);
  if (pit == producers_.end())
    return base::OkStatus();
  auto owed = pit->second.owed_flush_acks.find(flush_id);
  if (owed == pit->second.owed_flush_acks.end()) {
    return base::ErrStatus("FlushAck for flush %u, which it does not owe",
                           flush_id);
  }
  const Producer::OwedFlushAck answered = owed->second;
  pit->second.owed_flush_acks.erase(owed);
  if (!answered.waited) {
    ++session_stats_.late_acks;
    RefreshOverdue(&pit->second);
    auto late = sessions_.find(answered.session);
    if (late != sessions_.end())
      ++late->second->counters.late_acks;
    return base::OkStatus();
  }
  for (auto& kv : sessions_) {
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

void ServiceCore::ForgetProducerInSessions(ProducerID producer_id) {
  const Clock::time_point now = Clock::now();
  for (SessionId id : SessionIds()) {
    auto it = sessions_.find(id);
    if (it == sessions_.end())
      continue;
    Session* s = it->second.get();
    // Its final drain already moved what it wrote into the buffers.
    s->instances.erase(std::remove_if(s->instances.begin(), s->instances.end(),
                                      [&](const Instance& inst) {
                                        return inst.producer_id == producer_id;
                                      }),
                       s->instances.end());
    for (size_t i = s->flushes.size(); i-- > 0;) {
      if (s->flushes[i].waiting.erase(producer_id) != 0 &&
          s->flushes[i].waiting.empty()) {
        CompleteFlush(s, i, /*timed_out=*/false);
      }
    }
    if (s->stopping)
      MaybeFinishStop(id, now);
  }
}

}  // namespace traced
}  // namespace ringtrace
