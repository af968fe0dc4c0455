/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TracingSessions (tracing_sessions.h): starting sessions and their data
// source instances, routing, the deadlines, clones and TraceStats, a
// producer joining or leaving. The stop and the end of a session are in
// tracing_sessions_stop.cc, flushes in tracing_sessions_flush.cc.

#include "src/tracing/service/traced/tracing_sessions.h"

#include "protos/perfetto/config/trace_config.pb.h"

#include <time.h>

#include <algorithm>
#include <utility>

#include "src/base/time.h"
#include "src/tracing/service/traced/session_start_warnings.h"

namespace ringtrace {
namespace traced {

namespace {

using ring_drainer::RingDrainer;
using ring_drainer::TargetBuffer;
using trace_buffer::ProducerID;

bool PassesFilter(const SessionConfig::DataSource& ds,
                  const std::string& producer_name) {
  if (ds.producer_name_filter.empty())
    return true;
  return std::find(ds.producer_name_filter.begin(),
                   ds.producer_name_filter.end(),
                   producer_name) != ds.producer_name_filter.end();
}

}  // namespace

TracingSessions::TracingSessions(uint32_t service_uid,
                                 ring_drainer::DrainLoop* loop,
                                 ProducerTable* producers,
                                 SessionTable* table,
                                 SessionWriter* writer)
    : service_uid_(service_uid),
      loop_(loop),
      producers_(producers),
      table_(table),
      writer_(writer) {}

bool TracingSessions::StartInstances(Session* session, ProducerID producer_id) {
  const ProducerTable::Producer& producer = *producers_->Find(producer_id);
  bool any = false;
  const SessionConfig& config = session->config;
  for (size_t i = 0; i < config.data_sources.size(); ++i) {
    const SessionConfig::DataSource& ds = config.data_sources[i];
    if (std::find(producer.data_sources.begin(), producer.data_sources.end(),
                  ds.name) == producer.data_sources.end() ||
        !PassesFilter(ds, producer.name)) {
      continue;
    }
    const bool started = std::any_of(
        session->instances.begin(), session->instances.end(),
        [&](const Instance& inst) {
          return inst.producer_id == producer_id && inst.ds_index == i;
        });
    if (started)
      continue;
    Instance inst;
    inst.producer_id = producer_id;
    inst.ds_index = i;
    inst.instance_id = answers_.NextInstanceId(producer_id);
    inst.target = session->buffers[ds.target_buffer]->id;
    session->instances.push_back(inst);

    ProducerCommand cmd;
    cmd.type = ProducerCommand::Type::kStartDataSource;
    cmd.producer_id = producer_id;
    cmd.id = inst.instance_id;
    cmd.target_buffer = inst.target;
    cmd.clear_period_ms = config.clear_period_ms;
    cmd.data_source_name = ds.name;
    cmd.enabled_categories = ds.enabled_categories;
    cmd.disabled_categories = ds.disabled_categories;
    cmd.enabled_tags = ds.enabled_tags;
    cmd.disabled_tags = ds.disabled_tags;
    cmd.config = ds.config;
    commands_.push_back(std::move(cmd));
    ++session_stats_.data_source_instances_started;
    any = true;
  }
  return any;
}

void TracingSessions::UpdateAllowedBuffers(const std::set<ProducerID>& ids) {
  std::vector<std::pair<ProducerID, std::vector<TargetBuffer>>> updates;
  for (ProducerID id : ids) {
    if (producers_->has_producer(id))
      updates.emplace_back(id, table_->AllowedBuffersFor(id, nullptr));
  }
  producers_->SetAllowedBuffers(std::move(updates));
}

base::Status TracingSessions::StartSession(
    const perfetto::protos::TraceConfig& config,
    base::ScopedFd out_fd,
    int32_t consumer_uid,
    uint64_t consumer_id,
    Clock::time_point now,
    SessionId* id) {
  SessionTable::Request request;
  request.consumer_uid = consumer_uid;
  request.consumer_id = consumer_id;
  request.peer_limits = true;
  return StartSessionFor(config, std::move(out_fd), request, now, id);
}

base::Status TracingSessions::StartSessionFor(
    const perfetto::protos::TraceConfig& config,
    base::ScopedFd out_fd,
    const SessionTable::Request& request,
    Clock::time_point now,
    SessionId* id) {
  *id = 0;
  std::unique_ptr<Session> created;
  const base::Status status =
      table_->Create(config, std::move(out_fd), request, now, &created);
  if (!status.ok()) {
    ++session_stats_.sessions_refused;
    return status;
  }
  Session* s = created.get();
  ring_drainer::RingStats drainer_stats;
  loop_->RunSync([&](RingDrainer* d) { drainer_stats = d->TotalStats(); });
  s->lost_before_buffers_at_start = ChunksLostBeforeBuffers(drainer_stats);
  if (s->config.write_into_file)
    writer_->OpenStream(s, now);
  std::set<ProducerID> started;
  for (const auto& kv : producers_->producers()) {
    if (StartInstances(s, kv.first))
      started.insert(kv.first);
  }
  // No start ack in the producer protocol: the data sources count as
  // started once told to (instances started later, on producers that
  // register afterwards, do not move it).
  writer_->RecordServiceEvent(
      s, trace_export::TraceExporter::ServiceEvent::kAllDataSourcesStarted,
      &s->lifecycle.all_data_sources_started);
  if (s->stream)
    s->stream_status = s->stream->Flush();
  *id = s->id;
  table_->Insert(std::move(created));
  ++session_stats_.sessions_started;
  // Before the owner sends the StartDataSource commands: the first chunks
  // of the new instances are routable.
  UpdateAllowedBuffers(started);
  return base::OkStatus();
}

base::Status TracingSessions::StartDefaultSession(
    const perfetto::protos::TraceConfig& config,
    base::ScopedFd out_fd,
    Clock::time_point now,
    SessionId* id) {
  *id = 0;
  if (table_->default_session() != 0) {
    return base::ErrStatus(
        "a default session (%llu) runs already",
        static_cast<unsigned long long>(table_->default_session()));
  }
  // The operator's session (ringtraced's command line), not a peer's: the
  // buffer limits do not apply to it, but its bytes count against every
  // session started after it (max_total_buffer_bytes, the uid's).
  SessionTable::Request request;
  request.consumer_uid = static_cast<int32_t>(service_uid_);
  request.consumer_id = 0;
  request.peer_limits = false;
  SessionId started = 0;
  base::Status status =
      StartSessionFor(config, std::move(out_fd), request, now, &started);
  if (!status.ok())
    return status;
  table_->SetDefault(started);
  default_session_end_ = DefaultSessionEnd();
  // Every connected ring may write it now.
  std::set<ProducerID> all;
  for (const auto& kv : producers_->producers())
    all.insert(kv.first);
  UpdateAllowedBuffers(all);
  *id = started;
  return base::OkStatus();
}

std::vector<std::string> TracingSessions::StartWarnings(SessionId id) const {
  const Session* s = table_->Find(id);
  if (!s)
    return {};
  std::vector<bool> started(s->config.data_sources.size(), false);
  for (const Instance& inst : s->instances)
    started[inst.ds_index] = true;
  std::vector<ProducerOffer> offers;
  for (const ProducerDataSources& p : producers_->ListDataSources()) {
    ProducerOffer offer;
    offer.name = p.producer_name;
    for (const ProducerDataSources::DataSource& ds : p.data_sources) {
      offer.data_sources.push_back(ds.name);
      offer.categories.push_back(ds.categories);
    }
    offers.push_back(std::move(offer));
  }
  std::vector<std::string> warnings =
      UnstartedDataSourceWarnings(s->config, started, offers);
  auto append = [&warnings](std::vector<std::string> more) {
    for (std::string& w : more) {
      if (warnings.size() >= kMaxStartWarnings)
        break;
      warnings.push_back(std::move(w));
    }
  };
  append(UndeclaredCategoryWarnings(s->config, offers));
  append(TaskRenameWarnings(s->config));
  return warnings;
}

base::Status TracingSessions::CloneSession(SessionId id,
                                           int out_fd,
                                           ExportSummary* summary) {
  *summary = ExportSummary();
  Session* s = nullptr;
  base::Status status = table_->FindSession(id, &s);
  if (!status.ok())
    return status;
  return writer_->Clone(*s, out_fd, summary);
}

base::Status TracingSessions::GetSessionTraceStats(SessionId id,
                                                   std::string* trace_stats) {
  Session* s = nullptr;
  base::Status status = table_->FindSession(id, &s);
  if (!status.ok())
    return status;
  writer_->TraceStats(*s, trace_stats);
  return base::OkStatus();
}

void TracingSessions::OnDataSourceRegistered(ProducerID id) {
  bool any = false;
  for (const auto& kv : table_->sessions()) {
    if (!kv.second->stopping)
      any |= StartInstances(kv.second.get(), id);
  }
  if (any)
    UpdateAllowedBuffers({id});
}

void TracingSessions::ReadLossArea(ProducerID id, const Session* only) {
  const std::vector<ipc::WriterLossEntry> entries =
      producers_->ReadLossArea(id);
  producers_->mutable_stats()->loss_entries_unattributed +=
      table_->RouteLossArea(id, *producers_->Find(id), entries, only);
}

void TracingSessions::OnProducerRemoving(ProducerID id) {
  // Before its instances are forgotten: they say which sessions it served.
  ReadLossArea(id, /*only=*/nullptr);
  table_->MarkProducerRemoved(id, *producers_->Find(id),
                              base::ClockNs(CLOCK_BOOTTIME));
}

void TracingSessions::ForgetProducer(ProducerID producer_id) {
  answers_.Forget(producer_id);
  const Clock::time_point now = Clock::now();
  for (SessionId id : table_->SessionIds()) {
    Session* s = table_->Find(id);
    if (!s)
      continue;
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

void TracingSessions::AdvanceSessions(Clock::time_point now) {
  for (SessionId id : table_->SessionIds()) {
    Session* s = table_->Find(id);
    if (!s)
      continue;
    if (s->stopping) {
      MaybeFinishStop(id, now);
      continue;
    }
    for (size_t i = s->flushes.size(); i-- > 0;) {
      if (now >= s->flushes[i].deadline)
        CompleteFlush(s, i, /*timed_out=*/true);
    }
    if (now >= s->next_periodic_flush) {
      IssueFlush(s, 0, 0, /*periodic=*/true, s->config.flush_timeout_ms, now);
      s->next_periodic_flush =
          now + std::chrono::milliseconds(s->config.flush_period_ms);
    }
    // |s| may be gone after a write that ended the session.
    if (now >= s->next_file_write && WriteIntoFile(s, now))
      continue;
    if (now >= s->duration_deadline)
      BeginStop(s, 0, /*by_service=*/true, now);
  }
  ReleaseWaitsOnOverdue(now);
}

TracingSessions::Clock::time_point TracingSessions::NextDeadline() const {
  Clock::time_point next = Clock::time_point::max();
  for (const auto& kv : table_->sessions()) {
    const Session* s = kv.second.get();
    if (s->stopping) {
      next = std::min(next, s->stop_deadline);
      continue;
    }
    next = std::min(next, s->duration_deadline);
    next = std::min(next, s->next_periodic_flush);
    next = std::min(next, s->next_file_write);
    for (const PendingFlush& f : s->flushes)
      next = std::min(next, f.deadline);
  }
  return next;
}

std::vector<ProducerCommand> TracingSessions::TakeCommands() {
  std::vector<ProducerCommand> out;
  out.swap(commands_);
  return out;
}

std::vector<SessionEvent> TracingSessions::TakeEvents() {
  std::vector<SessionEvent> out;
  out.swap(events_);
  return out;
}

}  // namespace traced
}  // namespace ringtrace
