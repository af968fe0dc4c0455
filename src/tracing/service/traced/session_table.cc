/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/session_table.h"

#include "protos/perfetto/config/trace_config.pb.h"

#include <algorithm>
#include <string>
#include <utility>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace traced {

namespace {

using ring_drainer::RingDrainer;
using ring_drainer::RingId;
using ring_drainer::TargetBuffer;
using trace_buffer::BufferID;
using trace_buffer::ProducerID;
using trace_buffer::TraceBufferV2;

}  // namespace

SessionTable::SessionTable(const Options& options,
                           uint32_t service_uid,
                           ring_drainer::DrainLoop* loop,
                           const ProducerTable* producers)
    : options_(options),
      service_uid_(service_uid),
      loop_(loop),
      producers_(producers) {}

base::Status SessionTable::Create(const perfetto::protos::TraceConfig& config,
                                  base::ScopedFd out_fd,
                                  const Request& request,
                                  Clock::time_point now,
                                  std::unique_ptr<Session>* session) {
  std::unique_ptr<Session> s(new Session());
  base::Status status = MakeSessionConfig(config, &s->config);
  if (status.ok())
    status = CheckStart(*s, out_fd, request);
  if (status.ok())
    status = CreateBuffers(s.get());
  if (!status.ok())
    return status;
  s->id = next_session_id_++;
  s->fd = std::move(out_fd);
  s->consumer_uid = request.consumer_uid;
  s->consumer_id = request.consumer_id;
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
  *session = std::move(s);
  return base::OkStatus();
}

base::Status SessionTable::CheckStart(const Session& s,
                                      const base::ScopedFd& out_fd,
                                      const Request& request) const {
  if (closed_)
    return base::ErrStatus("the service is stopping");
  if (!out_fd.valid())
    return base::ErrStatus("no output file");
  if (sessions_.size() >= options_.max_sessions) {
    return base::ErrStatus(
        "max sessions reached: %zu of %u are active (ringtraced "
        "--max-sessions)",
        sessions_.size(), options_.max_sessions);
  }
  if (!s.config.unique_session_name.empty()) {
    for (const auto& kv : sessions_) {
      if (kv.second->config.unique_session_name ==
          s.config.unique_session_name) {
        return base::ErrStatus(
            "unique_session_name: a session named \"%s\" is active (%llu)",
            s.config.unique_session_name.c_str(),
            static_cast<unsigned long long>(kv.first));
      }
    }
  }
  if (!request.peer_limits)
    return base::OkStatus();
  const uint64_t in_use = buffer_bytes_;
  const uint64_t wanted = s.config.total_buffer_bytes();
  if (wanted > options_.max_total_buffer_bytes ||
      in_use > options_.max_total_buffer_bytes - wanted) {
    return base::ErrStatus(
        "buffers: %llu bytes requested, %llu of the service's %llu in use "
        "(ringtraced --max-buffer-mb)",
        static_cast<unsigned long long>(wanted),
        static_cast<unsigned long long>(in_use),
        static_cast<unsigned long long>(options_.max_total_buffer_bytes));
  }
  return CheckSessionUserLimits(request.consumer_uid, wanted);
}

base::Status SessionTable::CheckSessionUserLimits(int32_t consumer_uid,
                                                  uint64_t wanted) const {
  const uint32_t uid = static_cast<uint32_t>(consumer_uid);
  const UserLimits limits = options_.user_limits.For(uid, service_uid_);
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

base::Status SessionTable::CreateBuffers(Session* s) {
  for (size_t i = 0; i < s->config.buffers.size(); ++i) {
    const SessionConfig::Buffer& bc = s->config.buffers[i];
    std::unique_ptr<SessionBuffer> b(new SessionBuffer());
    // Checked against the buffers allocated so far too (they are not in
    // sessions_ yet).
    b->id = AllocateBufferId();
    for (const auto& other : s->buffers) {
      if (other->id == b->id)
        b->id = 0;
    }
    if (b->id == 0)
      return base::ErrStatus("buffers: every BufferID is in use");
    b->buffer = TraceBufferV2::Create(bc.size_bytes, bc.policy);
    if (!b->buffer) {
      return base::ErrStatus(
          "buffers[%zu]: cannot allocate %zu bytes (not enough memory?)", i,
          bc.size_bytes);
    }
    // The packets the buffer loses are counted by the buffer
    // (packets_overwritten, RING_BUFFER) and the sink (packets_discarded,
    // DISCARD): no overwrite observer, whose count would miss the packets
    // erased before their continuation arrived.
    b->sink.reset(new ring_drainer::TraceBufferV2Sink(b->buffer.get()));
    s->buffers.push_back(std::move(b));
  }
  return base::OkStatus();
}

bool SessionTable::BufferIdInUse(uint32_t id) const {
  for (const auto& kv : sessions_) {
    for (const auto& b : kv.second->buffers) {
      if (b->id == id)
        return true;
    }
  }
  return false;
}

BufferID SessionTable::AllocateBufferId() {
  for (uint32_t tries = 0; tries < kMaxSessionBufferId; ++tries) {
    if (next_buffer_id_ == 0 || next_buffer_id_ > kMaxSessionBufferId)
      next_buffer_id_ = 1;
    const uint32_t id = next_buffer_id_++;
    if (!BufferIdInUse(id))
      return static_cast<BufferID>(id);
  }
  return 0;
}

Session* SessionTable::Insert(std::unique_ptr<Session> session) {
  Session* s = session.get();
  buffer_bytes_ += s->config.total_buffer_bytes();
  sessions_[s->id] = std::move(session);
  return s;
}

void SessionTable::Erase(SessionId id) {
  auto it = sessions_.find(id);
  RT_CHECK(it != sessions_.end());
  if (id == default_session_) {
    // New producers' own writers have nowhere to write from now on.
    default_session_ = 0;
    default_buffer_ = kNoDefaultBuffer;
  }
  buffer_bytes_ -= it->second->config.total_buffer_bytes();
  sessions_.erase(it);
}

void SessionTable::SetDefault(SessionId id) {
  default_session_ = id;
  default_buffer_ = sessions_.at(id)->buffers[0]->id;
}

Session* SessionTable::Find(SessionId id) const {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second.get();
}

base::Status SessionTable::FindSession(SessionId id, Session** session) const {
  *session = Find(id);
  if (!*session) {
    return base::ErrStatus("no session %llu",
                           static_cast<unsigned long long>(id));
  }
  return base::OkStatus();
}

base::Status SessionTable::FindRunningSession(SessionId id,
                                              Session** session) const {
  base::Status status = FindSession(id, session);
  if (status.ok() && (*session)->stopping) {
    *session = nullptr;
    return base::ErrStatus("session %llu is stopping",
                           static_cast<unsigned long long>(id));
  }
  return status;
}

std::vector<SessionId> SessionTable::SessionIds() const {
  std::vector<SessionId> ids;
  ids.reserve(sessions_.size());
  for (const auto& kv : sessions_)
    ids.push_back(kv.first);
  return ids;
}

size_t SessionTable::num_buffers() const {
  size_t n = 0;
  for (const auto& kv : sessions_)
    n += kv.second->buffers.size();
  return n;
}

bool SessionTable::GetSessionOwner(SessionId id, SessionOwner* owner) const {
  const Session* s = Find(id);
  if (!s)
    return false;
  owner->consumer_uid = s->consumer_uid;
  owner->consumer_id = s->consumer_id;
  owner->stopping = s->stopping;
  return true;
}

bool SessionTable::SetSessionConsumer(SessionId id, uint64_t consumer_id) {
  Session* s = Find(id);
  if (!s)
    return false;
  s->consumer_id = consumer_id;
  return true;
}

std::vector<SessionInfo> SessionTable::ListSessions(
    Clock::time_point now) const {
  std::vector<SessionInfo> out;
  std::vector<const TraceBufferV2*> buffers;
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

std::vector<TargetBuffer> SessionTable::AllowedBuffersFor(
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

std::set<ProducerID> SessionTable::SessionProducers(
    const Session& session) const {
  std::set<ProducerID> out;
  for (const Instance& inst : session.instances) {
    if (producers_->has_producer(inst.producer_id))
      out.insert(inst.producer_id);
  }
  return out;
}

std::set<ProducerID> SessionTable::SessionWriters(
    const Session& session) const {
  if (session.id != default_session_)
    return SessionProducers(session);
  std::set<ProducerID> out;
  for (const auto& kv : producers_->producers())
    out.insert(kv.first);
  return out;
}

std::vector<std::pair<RingId, uint32_t>> SessionTable::SessionRings(
    const Session& session) const {
  std::vector<std::pair<RingId, uint32_t>> rings;
  for (ProducerID pid : SessionWriters(session))
    rings.push_back(producers_->RingOf(pid));
  return rings;
}

void SessionTable::CollectSequenceProducers(std::vector<bool>* held) const {
  std::vector<const TraceBufferV2*> buffers;
  for (const auto& kv : sessions_) {
    for (const auto& b : kv.second->buffers)
      buffers.push_back(b->buffer.get());
  }
  // The buffers are only consistent on the drain thread.
  loop_->RunSync([&](RingDrainer*) {
    for (const TraceBufferV2* buffer : buffers) {
      buffer->ForEachSequenceProducer([&](ProducerID p) { (*held)[p] = true; });
    }
  });
}

ProducerLossTable* SessionTable::LossTableFor(ProducerID id,
                                              uint32_t buffer) const {
  // Every producer serves the default session: its first buffer is where
  // the producers' own writers write.
  if (default_session_ != 0 && buffer == default_buffer_) {
    Session* s = Find(default_session_);
    if (s)
      return &s->losses;
  }
  // An instance's target is one of its session's buffers, and BufferIDs
  // are unique among live sessions.
  for (const auto& kv : sessions_) {
    Session* s = kv.second.get();
    for (const Instance& inst : s->instances) {
      if (inst.producer_id == id && inst.target == buffer)
        return &s->losses;
    }
  }
  return nullptr;
}

void SessionTable::ForEachLossTableOf(
    ProducerID id,
    const std::function<void(ProducerLossTable*)>& fn) const {
  for (const auto& kv : sessions_) {
    Session* s = kv.second.get();
    if (s->id == default_session_) {
      fn(&s->losses);
      continue;
    }
    for (const Instance& inst : s->instances) {
      if (inst.producer_id == id) {
        fn(&s->losses);
        break;
      }
    }
  }
}

const ProducerLossTable* SessionTable::session_loss_table(SessionId id) const {
  const Session* s = Find(id);
  return s ? &s->losses : nullptr;
}

uint64_t SessionTable::RouteLossReport(ProducerID id,
                                       const ProducerTable::Producer& p,
                                       const ipc::DrainRequestMsg& report) {
  if (report.flags & ipc::kLossReportFinal) {
    ForEachLossTableOf(id, [&](ProducerLossTable* table) {
      table->OnFinalReport(id, p.name, p.identity);
    });
  }
  uint64_t unattributed = 0;
  const uint64_t now_ns = base::MonotonicNs();
  // DecodeMessage bounded num_entries by the array's size.
  for (uint32_t i = 0; i < report.num_entries; i++) {
    const ipc::WriterLossEntry& e = report.entries[i];
    ProducerLossTable* table = LossTableFor(id, e.target_buffer);
    if (!table) {
      ++unattributed;
      continue;
    }
    table->OnEntry(id, p.name, p.identity, e, now_ns,
                   /*from_loss_area=*/false);
  }
  return unattributed;
}

uint64_t SessionTable::RouteLossArea(
    ProducerID id,
    const ProducerTable::Producer& p,
    const std::vector<ipc::WriterLossEntry>& entries,
    const Session* only) {
  uint64_t unattributed = 0;
  const uint64_t now_ns = base::MonotonicNs();
  for (const ipc::WriterLossEntry& e : entries) {
    if (only && !std::any_of(only->buffers.begin(), only->buffers.end(),
                             [&](const std::unique_ptr<SessionBuffer>& b) {
                               return b->id == e.target_buffer;
                             })) {
      continue;  // another session's (or none's): read at its own end
    }
    ProducerLossTable* table =
        e.writer_id == 0 ? nullptr : LossTableFor(id, e.target_buffer);
    if (!table) {
      ++unattributed;
      continue;
    }
    table->OnEntry(id, p.name, p.identity, e, now_ns,
                   /*from_loss_area=*/true);
  }
  return unattributed;
}

void SessionTable::MarkProducerRemoved(ProducerID id,
                                       const ProducerTable::Producer& p,
                                       uint64_t removed_at) {
  ForEachLossTableOf(id, [&](ProducerLossTable* table) {
    table->OnProducerRemoved(id, p.name, p.identity, removed_at);
  });
}

}  // namespace traced
}  // namespace ringtrace
