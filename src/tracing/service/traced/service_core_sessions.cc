/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ServiceCore's sessions (service_core.h, docs/sessions.md): buffers with
// service-wide BufferIDs, data source instances, routing, limits, the
// deadlines, what QueryServiceState lists. Their end (stop with acks, the
// trace written, streaming, clones) is in service_core_session_end.cc; the
// producers' side of the protocol (registration, acks, flushes) in
// service_core_data_sources.cc.

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

}  // namespace

// static
uint64_t ServiceCore::ElapsedMs(Clock::time_point from, Clock::time_point to) {
  if (to <= from)
    return 0;
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count());
}

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
