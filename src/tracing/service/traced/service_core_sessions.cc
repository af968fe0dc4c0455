/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ServiceCore's consumer sessions (service_core.h, docs/sessions.md):
// buffers with service-wide BufferIDs, data source instances, routing, stop
// with acks, clone, per-session TraceStats. The producers' side of the
// protocol (registration, acks, flushes) is in service_core_data_sources.cc.

#include "src/tracing/service/traced/service_core.h"

#include "protos/perfetto/config/trace_config.pb.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "ringtrace/logging.h"
#include "src/base/time.h"
#include "src/tracing/ipc/consumer_protocol.h"
#include "src/tracing/service/traced/session_start_warnings.h"

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

bool PassesFilter(const SessionConfig::DataSource& ds,
                  const std::string& producer_name) {
  if (ds.producer_name_filter.empty())
    return true;
  return std::find(ds.producer_name_filter.begin(),
                   ds.producer_name_filter.end(),
                   producer_name) != ds.producer_name_filter.end();
}

uint64_t ElapsedMs(ServiceCore::Clock::time_point from,
                   ServiceCore::Clock::time_point to) {
  if (to <= from)
    return 0;
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count());
}

}  // namespace

bool ServiceCore::BufferIdInUse(uint32_t id) const {
  for (const auto& kv : sessions_) {
    for (const auto& b : kv.second->buffers) {
      if (b->id == id)
        return true;
    }
  }
  return false;
}

BufferID ServiceCore::AllocateBufferId() {
  // Fresh ids first; after the counter wrapped, an id is reused only when no
  // live session holds it. A late chunk of an ended session then targets an
  // id no ring is allowed to write (unroutable, counted) until the counter
  // comes round again, 65535 buffers later.
  for (uint32_t tries = 0; tries < kMaxSessionBufferId; ++tries) {
    if (next_buffer_id_ == 0 || next_buffer_id_ > kMaxSessionBufferId) {
      next_buffer_id_ = 1;
      buffer_ids_wrapped_ = true;
    }
    const uint32_t id = next_buffer_id_++;
    if (!BufferIdInUse(id))
      return static_cast<BufferID>(id);
  }
  return 0;
}

std::vector<TargetBuffer> ServiceCore::AllowedBuffersFor(
    ProducerID producer_id,
    const Session* except) const {
  std::vector<TargetBuffer> out;
  for (const auto& kv : sessions_) {
    const Session* s = kv.second.get();
    if (s == except)
      continue;
    if (s->id == default_session_) {
      // Every ring may write the default session's first buffer (a
      // producer's own writers' target_buffer), and its instances' targets.
      out.push_back({s->buffers[0]->id, s->buffers[0]->sink.get()});
    }
    for (const Instance& inst : s->instances) {
      if (inst.producer_id != producer_id)
        continue;
      const bool listed = std::any_of(
          out.begin(), out.end(),
          [&](const TargetBuffer& t) { return t.id == inst.target; });
      if (listed)
        continue;
      for (const auto& b : s->buffers) {
        if (b->id == inst.target)
          out.push_back({b->id, b->sink.get()});
      }
    }
  }
  return out;
}

void ServiceCore::UpdateAllowedBuffers(const std::set<ProducerID>& ids) {
  std::vector<std::pair<RingId, std::vector<TargetBuffer>>> updates;
  for (ProducerID id : ids) {
    auto it = producers_.find(id);
    if (it != producers_.end())
      updates.emplace_back(it->second.ring_id, AllowedBuffersFor(id, nullptr));
  }
  if (updates.empty())
    return;
  loop_->RunSync([&](RingDrainer* d) {
    for (auto& u : updates)
      d->SetAllowedBuffers(u.first, std::move(u.second));
  });
}

bool ServiceCore::StartInstances(Session* session,
                                 ProducerID producer_id,
                                 Producer* producer) {
  bool any = false;
  const SessionConfig& config = session->config;
  for (size_t i = 0; i < config.data_sources.size(); ++i) {
    const SessionConfig::DataSource& ds = config.data_sources[i];
    if (std::find(producer->data_sources.begin(), producer->data_sources.end(),
                  ds.name) == producer->data_sources.end() ||
        !PassesFilter(ds, producer->name)) {
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
    // Nonzero; unique per connection for 2^32 - 1 instances.
    inst.instance_id = producer->next_instance_id++;
    if (producer->next_instance_id == 0)
      producer->next_instance_id = 1;
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

base::Status ServiceCore::StartSession(
    const perfetto::protos::TraceConfig& config,
    base::ScopedFd out_fd,
    int32_t consumer_uid,
    uint64_t consumer_id,
    Clock::time_point now,
    SessionId* id) {
  return StartSessionWithLimits(config, std::move(out_fd), consumer_uid,
                                consumer_id, now, /*peer_limits=*/true, id);
}

base::Status ServiceCore::StartSessionWithLimits(
    const perfetto::protos::TraceConfig& config,
    base::ScopedFd out_fd,
    int32_t consumer_uid,
    uint64_t consumer_id,
    Clock::time_point now,
    bool peer_limits,
    SessionId* id) {
  *id = 0;
  std::unique_ptr<Session> s(new Session());
  base::Status status = MakeSessionConfig(config, &s->config);
  if (status.ok() && (finished_ || stopping_))
    status = base::ErrStatus("the service is stopping");
  if (status.ok() && !out_fd.valid())
    status = base::ErrStatus("no output file");
  if (status.ok() && sessions_.size() >= options_.max_sessions) {
    status = base::ErrStatus(
        "max sessions reached: %zu of %u are active (ringtraced "
        "--max-sessions)",
        sessions_.size(), options_.max_sessions);
  }
  if (status.ok() && !s->config.unique_session_name.empty()) {
    for (const auto& kv : sessions_) {
      if (kv.second->config.unique_session_name ==
          s->config.unique_session_name) {
        status = base::ErrStatus(
            "unique_session_name: a session named \"%s\" is active (%llu)",
            s->config.unique_session_name.c_str(),
            static_cast<unsigned long long>(kv.first));
        break;
      }
    }
  }
  const uint64_t in_use = session_buffer_bytes_;
  const uint64_t wanted = s->config.total_buffer_bytes();
  if (status.ok() && peer_limits &&
      (wanted > options_.max_total_buffer_bytes ||
       in_use > options_.max_total_buffer_bytes - wanted)) {
    status = base::ErrStatus(
        "buffers: %llu bytes requested, %llu of the service's %llu in use "
        "(ringtraced --max-buffer-mb)",
        static_cast<unsigned long long>(wanted),
        static_cast<unsigned long long>(in_use),
        static_cast<unsigned long long>(options_.max_total_buffer_bytes));
  }
  if (status.ok() && peer_limits)
    status = CheckSessionUserLimits(consumer_uid, wanted);
  for (size_t i = 0; status.ok() && i < s->config.buffers.size(); ++i) {
    const SessionConfig::Buffer& bc = s->config.buffers[i];
    std::unique_ptr<SessionBuffer> b(new SessionBuffer());
    // Checked against the buffers allocated so far too (they are not in
    // sessions_ yet).
    b->id = AllocateBufferId();
    for (const auto& other : s->buffers) {
      if (other->id == b->id)
        b->id = 0;
    }
    if (b->id == 0) {
      status = base::ErrStatus("buffers: every BufferID is in use");
      break;
    }
    b->buffer = TraceBufferV2::Create(bc.size_bytes, bc.policy);
    if (!b->buffer) {
      status = base::ErrStatus(
          "buffers[%zu]: cannot allocate %zu bytes (not enough memory?)", i,
          bc.size_bytes);
      break;
    }
    // The packets the buffer loses are counted by the buffer
    // (packets_overwritten, RING_BUFFER) and the sink (packets_discarded,
    // DISCARD): no overwrite observer, whose count would miss the packets
    // erased before their continuation arrived.
    b->sink.reset(new TraceBufferV2Sink(b->buffer.get()));
    s->buffers.push_back(std::move(b));
  }
  if (!status.ok()) {
    ++session_stats_.sessions_refused;
    return status;
  }

  s->id = next_session_id_++;
  s->fd = std::move(out_fd);
  s->consumer_uid = consumer_uid;
  s->consumer_id = consumer_id;
  s->start_clocks = trace_export::TraceExporter::ReadClocks();
  s->uuid = trace_export::TraceExporter::NewTraceUuid();
  s->lifecycle.tracing_started = s->start_clocks.boottime;
  s->started = now;
  if (s->config.duration_ms > 0)
    s->duration_deadline =
        now + std::chrono::milliseconds(s->config.duration_ms);
  if (s->config.flush_period_ms > 0)
    s->next_periodic_flush =
        now + std::chrono::milliseconds(s->config.flush_period_ms);
  s->lost_before_buffers_at_start = ChunksLostBeforeBuffers(DrainerStats());
  if (s->config.write_into_file)
    OpenStream(s.get(), now);
  std::set<ProducerID> started;
  for (auto& kv : producers_) {
    if (StartInstances(s.get(), kv.first, &kv.second))
      started.insert(kv.first);
  }
  // No start ack in the producer protocol: the data sources count as
  // started once told to (instances started later, on producers that
  // register afterwards, do not move it).
  RecordServiceEvent(
      s.get(),
      trace_export::TraceExporter::ServiceEvent::kAllDataSourcesStarted,
      &s->lifecycle.all_data_sources_started);
  if (s->stream)
    s->stream_status = s->stream_file->Flush();
  session_buffer_bytes_ += wanted;
  *id = s->id;
  sessions_[s->id] = std::move(s);
  ++session_stats_.sessions_started;
  // Before the owner sends the StartDataSource commands: the first chunks
  // of the new instances are routable.
  UpdateAllowedBuffers(started);
  return base::OkStatus();
}

std::vector<std::string> ServiceCore::StartWarnings(SessionId id) const {
  auto it = sessions_.find(id);
  if (it == sessions_.end())
    return {};
  const Session& s = *it->second;
  std::vector<bool> started(s.config.data_sources.size(), false);
  for (const Instance& inst : s.instances)
    started[inst.ds_index] = true;
  std::vector<ProducerOffer> offers;
  for (const ProducerDataSources& p : ListDataSources()) {
    ProducerOffer offer;
    offer.name = p.producer_name;
    for (const ProducerDataSources::DataSource& ds : p.data_sources) {
      offer.data_sources.push_back(ds.name);
      offer.categories.push_back(ds.categories);
    }
    offers.push_back(std::move(offer));
  }
  std::vector<std::string> warnings =
      UnstartedDataSourceWarnings(s.config, started, offers);
  for (std::string& w : UndeclaredCategoryWarnings(s.config, offers)) {
    if (warnings.size() >= kMaxStartWarnings)
      break;
    warnings.push_back(std::move(w));
  }
  return warnings;
}

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

base::Status ServiceCore::FindSession(SessionId id, Session** session) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) {
    *session = nullptr;
    return base::ErrStatus("no session %llu",
                           static_cast<unsigned long long>(id));
  }
  *session = it->second.get();
  return base::OkStatus();
}

base::Status ServiceCore::FindRunningSession(SessionId id, Session** session) {
  base::Status status = FindSession(id, session);
  if (status.ok() && (*session)->stopping) {
    *session = nullptr;
    return base::ErrStatus("session %llu is stopping",
                           static_cast<unsigned long long>(id));
  }
  return status;
}

bool ServiceCore::GetSessionOwner(SessionId id, SessionOwner* owner) const {
  auto it = sessions_.find(id);
  if (it == sessions_.end())
    return false;
  owner->consumer_uid = it->second->consumer_uid;
  owner->consumer_id = it->second->consumer_id;
  owner->stopping = it->second->stopping;
  return true;
}

bool ServiceCore::SetSessionConsumer(SessionId id, uint64_t consumer_id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end())
    return false;
  it->second->consumer_id = consumer_id;
  return true;
}

base::Status ServiceCore::CheckSessionUserLimits(int32_t consumer_uid,
                                                 uint64_t wanted) const {
  const uint32_t uid = static_cast<uint32_t>(consumer_uid);
  const UserLimits limits = options_.user_limits.For(uid, options_.service_uid);
  uint64_t sessions = 0;
  uint64_t bytes = 0;
  for (const auto& kv : sessions_) {
    if (kv.second->consumer_uid != consumer_uid)
      continue;
    ++sessions;
    bytes += kv.second->config.total_buffer_bytes();
  }
  if (sessions >= limits.max_sessions) {
    return base::ErrStatus(
        "%s",
        UserLimitMessage(uid, std::to_string(sessions) + " sessions are active",
                         limits.max_sessions, "max-sessions-per-uid")
            .c_str());
  }
  // |bytes| is at most max_total_buffer_bytes, |wanted| was checked
  // against it: no overflow.
  if (bytes + wanted > limits.max_buffer_bytes) {
    return base::ErrStatus(
        "buffers: %s",
        UserLimitMessage(uid,
                         std::to_string(wanted >> 10) +
                             " KiB requested, its sessions hold " +
                             std::to_string(bytes >> 10) + " KiB",
                         limits.max_buffer_bytes >> 20,
                         "max-buffer-mb-per-uid (MiB)")
            .c_str());
  }
  return base::OkStatus();
}

std::vector<std::pair<RingId, uint32_t>> ServiceCore::SessionRings(
    const Session& session) const {
  std::vector<std::pair<RingId, uint32_t>> rings;
  for (ProducerID pid : SessionWriters(session)) {
    const Producer& p = producers_.at(pid);
    rings.emplace_back(p.ring_id, p.region->view().geometry().num_chunks);
  }
  return rings;
}

std::set<ProducerID> ServiceCore::SessionProducers(
    const Session& session) const {
  std::set<ProducerID> out;
  for (const Instance& inst : session.instances) {
    if (producers_.count(inst.producer_id) != 0)
      out.insert(inst.producer_id);
  }
  return out;
}

std::set<ProducerID> ServiceCore::SessionWriters(const Session& session) const {
  if (session.id != default_session_)
    return SessionProducers(session);
  std::set<ProducerID> out;
  for (const auto& kv : producers_)
    out.insert(kv.first);
  return out;
}

void ServiceCore::SendStops(Session* s) {
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

void ServiceCore::OweLateStopAcks(Session* s, bool timed_out) {
  for (const Instance& inst : s->instances) {
    if (!inst.stop_sent || inst.stop_acked)
      continue;
    auto it = producers_.find(inst.producer_id);
    if (it == producers_.end())
      continue;
    std::map<uint32_t, bool>& owed = it->second.late_stop_acks;
    if (owed.size() >= kMaxOwedAcks)
      owed.erase(owed.begin());
    owed[inst.instance_id] = timed_out;
    if (timed_out)
      MarkOverdue(&it->second);
  }
}

std::vector<SessionId> ServiceCore::SessionIds() const {
  std::vector<SessionId> ids;
  ids.reserve(sessions_.size());
  for (const auto& kv : sessions_)
    ids.push_back(kv.first);
  return ids;
}

bool ServiceCore::IsOverdue(ProducerID id) const {
  auto it = producers_.find(id);
  return it != producers_.end() && it->second.overdue;
}

void ServiceCore::MarkOverdue(Producer* p) {
  if (p->overdue)
    return;
  p->overdue = true;
  overdue_marked_ = true;
  RT_LOG(
      "producer \"%s\" (pid %d) did not answer in time: later stops and "
      "flushes do not wait for it until it answers",
      p->name.c_str(), static_cast<int>(p->identity.pid));
}

void ServiceCore::RefreshOverdue(Producer* p) {
  bool owes = false;
  for (const auto& kv : p->late_stop_acks)
    owes |= kv.second;
  for (const auto& kv : p->owed_flush_acks)
    owes |= !kv.second.waited;
  p->overdue = owes;
}

// Bounded: each pass that repeats made at least one more producer overdue,
// and none is cleared here.
void ServiceCore::ReleaseWaitsOnOverdue(Clock::time_point now) {
  while (overdue_marked_) {
    overdue_marked_ = false;
    for (SessionId id : SessionIds()) {
      auto it = sessions_.find(id);
      if (it == sessions_.end())
        continue;
      Session* s = it->second.get();
      if (s->stopping) {
        MaybeFinishStop(id, now);
        continue;
      }
      for (size_t i = s->flushes.size(); i-- > 0;) {
        PendingFlush& f = s->flushes[i];
        for (auto pid = f.waiting.begin(); pid != f.waiting.end();) {
          if (!IsOverdue(*pid)) {
            ++pid;
            continue;
          }
          auto owed = producers_.at(*pid).owed_flush_acks.find(f.flush_id);
          if (owed != producers_.at(*pid).owed_flush_acks.end())
            owed->second.waited = false;  // a late ack is accepted
          ++f.not_awaited;
          pid = f.waiting.erase(pid);
        }
        if (f.waiting.empty())
          CompleteFlush(s, i, /*timed_out=*/false);
      }
    }
  }
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

base::Status ServiceCore::StartDefaultSession(
    const perfetto::protos::TraceConfig& config,
    base::ScopedFd out_fd,
    Clock::time_point now,
    SessionId* id) {
  *id = 0;
  if (default_session_ != 0) {
    return base::ErrStatus("a default session (%llu) runs already",
                           static_cast<unsigned long long>(default_session_));
  }
  SessionId started = 0;
  // The operator's session (ringtraced's command line), not a peer's: the
  // buffer limits do not apply to it, but its bytes count against every
  // session started after it (max_total_buffer_bytes, the uid's).
  base::Status status = StartSessionWithLimits(
      config, std::move(out_fd), static_cast<int32_t>(options_.service_uid),
      /*consumer_id=*/0, now, /*peer_limits=*/false, &started);
  if (!status.ok())
    return status;
  Session* s = sessions_.at(started).get();
  default_session_ = started;
  default_buffer_ = s->buffers[0]->id;
  default_session_end_ = DefaultSessionEnd();
  // Every connected ring may write it now.
  std::set<ProducerID> all;
  for (const auto& kv : producers_)
    all.insert(kv.first);
  UpdateAllowedBuffers(all);
  *id = started;
  return base::OkStatus();
}

void ServiceCore::AdvanceSessions(Clock::time_point now) {
  for (SessionId id : SessionIds()) {
    auto it = sessions_.find(id);
    if (it == sessions_.end())
      continue;
    Session* s = it->second.get();
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

ServiceCore::Clock::time_point ServiceCore::NextDeadline() const {
  Clock::time_point next = Clock::time_point::max();
  for (const auto& kv : sessions_) {
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

std::vector<ProducerCommand> ServiceCore::TakeCommands() {
  std::vector<ProducerCommand> out;
  out.swap(commands_);
  return out;
}

std::vector<SessionEvent> ServiceCore::TakeEvents() {
  std::vector<SessionEvent> out;
  out.swap(events_);
  return out;
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

std::vector<SessionInfo> ServiceCore::ListSessions(
    Clock::time_point now) const {
  std::vector<SessionInfo> out;
  std::vector<const trace_buffer::TraceBufferV2*> buffers;
  for (const auto& kv : sessions_) {
    const Session* s = kv.second.get();
    SessionInfo info;
    info.id = s->id;
    info.unique_name = s->config.unique_session_name;
    info.consumer_uid = s->consumer_uid;
    info.stopping = s->stopping;
    for (size_t i = 0; i < s->buffers.size(); ++i) {
      SessionInfo::Buffer b;
      b.id = s->buffers[i]->id;
      b.size_bytes = s->buffers[i]->buffer->size();
      b.policy = s->config.buffers[i].policy;
      info.buffers.push_back(b);
      buffers.push_back(s->buffers[i]->buffer.get());
    }
    info.num_data_source_instances = static_cast<uint32_t>(s->instances.size());
    info.elapsed_ms = ElapsedMs(s->started, now);
    out.push_back(std::move(info));
  }
  // The buffers are the drain thread's: their fill is read there.
  std::vector<uint64_t> used(buffers.size());
  loop_->RunSync([&](RingDrainer*) {
    for (size_t i = 0; i < buffers.size(); ++i)
      used[i] = buffers[i]->used_size();
  });
  size_t next = 0;
  for (SessionInfo& info : out) {
    for (SessionInfo::Buffer& b : info.buffers)
      b.used_bytes = used[next++];
  }
  return out;
}

std::vector<ProducerInfo> ServiceCore::ListProducers() const {
  std::vector<ProducerInfo> out;
  for (const auto& kv : producers_) {
    ProducerInfo info;
    info.id = kv.first;
    info.name = kv.second.name;
    info.identity = kv.second.identity;
    info.data_sources = kv.second.data_sources;
    const shm_ring::RingGeometry g = kv.second.region->view().geometry();
    info.ring_bytes = uint64_t{g.chunk_size} * g.num_chunks;
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace traced
}  // namespace ringtrace
