/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TracingService's consumer socket (tracing_service.h, docs/sessions.md):
// accept with a uid/group check, requests decoded by
// src/tracing/ipc/consumer_protocol.h and served on ServiceCore's sessions,
// answers and session events sent without ever blocking the service thread.

#include "src/tracing/service/traced/tracing_service.h"

#include "protos/ringtrace/ipc/consumer_port.pb.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "ringtrace/logging.h"
#include "src/tracing/ipc/wire_protocol.h"

namespace ringtrace {
namespace traced {

namespace {

using protos::ConsumerRequest;
using protos::ConsumerResponse;

// DisableTracing requests of one consumer waiting for one session that is
// stopping already (each is answered when it ends).
constexpr size_t kMaxWaitingDisables = 16;

// Whether |uid| (primary group |gid|) belongs to |group|.
bool InGroup(uid_t uid, gid_t gid, gid_t group) {
  if (gid == group)
    return true;
  std::vector<char> buf(16384);
  passwd pw = {};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || !found)
    return false;
  int n = 64;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  if (getgrouplist(found->pw_name, found->pw_gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<size_t>(n));
    if (getgrouplist(found->pw_name, found->pw_gid, groups.data(), &n) < 0)
      return false;
  }
  groups.resize(static_cast<size_t>(n));
  return std::find(groups.begin(), groups.end(), group) != groups.end();
}

void FillSummary(const SessionEvent& ev, protos::SessionSummary* out) {
  out->set_session_id(ev.session_id);
  out->set_packets_written(ev.summary.export_stats.packets_exported);
  out->set_bytes_written(ev.summary.bytes_written);
  out->set_packets_lost(ev.packets_lost);
  out->set_duration_ms(ev.duration_ms);
  const trace_export::ExportStats& e = ev.summary.export_stats;
  if (e.compressed_batches != 0) {
    out->set_uncompressed_bytes(e.uncompressed_bytes);
    out->set_compression_cpu_ns(e.compression_cpu_ns);
  }
}

perfetto::protos::TraceConfig::BufferConfig::FillPolicy ToProto(
    trace_buffer::TraceBufferV2::OverwritePolicy p) {
  return p == trace_buffer::TraceBufferV2::OverwritePolicy::kDiscard
             ? perfetto::protos::TraceConfig::BufferConfig::DISCARD
             : perfetto::protos::TraceConfig::BufferConfig::RING_BUFFER;
}

// Bytes a length-delimited field of |size| bytes costs beyond |size|: its
// tag (field numbers below 16) and its length, which stays below 2^21.
constexpr size_t kFieldOverhead = 1 + 3;

// Adds |declared| (ProducerTable::ListDataSources) to the producers of
// |state|, in producer order, while the additions fit |budget| bytes
// (counted generously: every enclosing length may grow by two bytes);
// returns the number of categories left out.
uint32_t AddDeclaredCategories(const std::vector<ProducerDataSources>& declared,
                               size_t budget,
                               protos::ServiceState* state) {
  // The enclosing ServiceState's length may grow.
  size_t used = 2;
  uint32_t omitted = 0;
  for (const ProducerDataSources& p : declared) {
    protos::ServiceState::Producer* out = nullptr;
    for (auto& candidate : *state->mutable_producers()) {
      if (candidate.id() == p.producer_id)
        out = &candidate;
    }
    bool producer_counted = false;
    for (const ProducerDataSources::DataSource& ds : p.data_sources) {
      protos::ServiceState::DataSourceCategories* list = nullptr;
      for (const ipc::CategoryDescriptor& c : ds.categories) {
        protos::ServiceState::Category category;
        category.set_name(c.name);
        if (!c.description.empty())
          category.set_description(c.description);
        for (const std::string& tag : c.tags)
          category.add_tags(tag);
        size_t cost = category.ByteSizeLong() + kFieldOverhead;
        if (!list)
          cost += kFieldOverhead + kFieldOverhead + ds.name.size();
        if (!producer_counted)
          cost += 2;  // the Producer's length may grow
        if (!out || omitted != 0 || used > budget || cost > budget - used) {
          ++omitted;  // and every later one: the lists are cut, not holed
          continue;
        }
        if (!list) {
          list = out->add_categories();
          list->set_data_source(ds.name);
        }
        *list->add_categories() = std::move(category);
        producer_counted = true;
        used += cost;
      }
    }
  }
  return omitted;
}

}  // namespace

bool ConsumerMayAccessSession(int32_t consumer_uid, int32_t session_uid) {
  return consumer_uid == 0 || consumer_uid == session_uid;
}

bool TracingService::ConsumerAllowed(const Connection& c) const {
  const uid_t uid = static_cast<uid_t>(c.identity.uid);
  if (options_.own_uid_only)
    return uid == geteuid();
  if (uid == geteuid() || uid == 0)
    return true;
  if (options_.consumer_group == static_cast<gid_t>(-1))
    return false;
  ucred cred = {};
  socklen_t len = sizeof(cred);
  if (getsockopt(c.socket->fd(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    return false;
  return InGroup(cred.uid, cred.gid, options_.consumer_group);
}

void TracingService::AcceptConsumers() {
  for (uint32_t i = 0; i < kAcceptsPerRound; ++i) {
    base::Status status;
    std::unique_ptr<ipc::UnixSocket> socket =
        consumer_listener_->Accept(&status);
    if (!socket) {
      if (!status.ok()) {
        RT_ELOG("consumer socket: %s", status.message().c_str());
        accept_backoff_until_ =
            Clock::now() + std::chrono::milliseconds(kAcceptBackoffMs);
      }
      return;
    }
    base::ClientIdentity creds;
    if (!socket->GetPeerCredentials(&creds)) {
      ++conn_stats_.consumers_refused;
      continue;
    }
    std::unique_ptr<Connection> c(new Connection());
    c->socket = std::move(socket);
    c->consumer = true;
    c->identity = creds;
    size_t consumers = 0;
    uint64_t of_uid = 0;
    for (const auto& other : connections_) {
      if (!other->socket || !other->consumer)
        continue;
      ++consumers;
      of_uid += other->identity.uid == c->identity.uid ? 1 : 0;
    }
    const uint32_t uid = static_cast<uint32_t>(c->identity.uid);
    const uint64_t uid_limit =
        options_.core.user_limits.For(uid, options_.core.service_uid)
            .max_consumers;
    std::string refusal;
    if (!ConsumerAllowed(*c))
      refusal = "not the service's user nor in its consumer group";
    else if (consumers >= options_.max_consumers)
      refusal = "max consumers are connected";
    else if (of_uid >= uid_limit)
      refusal = UserLimitMessage(
          uid, std::to_string(of_uid) + " consumer connections are open",
          uid_limit, "max-consumers-per-uid");
    if (!refusal.empty()) {
      // The first refusal of a uid, then every power of two: a peer
      // reconnecting in a loop cannot flood the log.
      const uint64_t n = ++consumer_refusals_per_uid_[uid];
      if ((n & (n - 1)) == 0) {
        RT_LOG(
            "refused a consumer connection from pid %d uid %d: %s (%llu "
            "refused for this uid so far)",
            c->identity.pid, c->identity.uid, refusal.c_str(),
            static_cast<unsigned long long>(n));
      }
      ++conn_stats_.consumers_refused;
      continue;  // closes
    }
    ++conn_stats_.consumers_accepted;
    c->consumer_id = next_consumer_id_++;
    connections_.push_back(std::move(c));
  }
}

void TracingService::ServeConsumer(Connection* c) {
  if (consumer_buf_.size() != ipc::kMaxConsumerMessageSize)
    consumer_buf_.resize(ipc::kMaxConsumerMessageSize);
  for (uint32_t i = 0; i < options_.messages_per_round && c->socket; ++i) {
    size_t size = 0;
    base::ScopedFd fd;
    base::Status status;
    const ipc::UnixSocket::RecvResult result = c->socket->Receive(
        consumer_buf_.data(), consumer_buf_.size(), &size, &fd, &status);
    switch (result) {
      case ipc::UnixSocket::RecvResult::kWouldBlock:
        return;
      case ipc::UnixSocket::RecvResult::kClosed:
        ++conn_stats_.consumer_disconnects;
        Close(c);
        return;
      case ipc::UnixSocket::RecvResult::kTooLong:
      case ipc::UnixSocket::RecvResult::kTooManyFds:
      case ipc::UnixSocket::RecvResult::kError:
        RT_LOG("consumer pid %d: %s; disconnecting", c->identity.pid,
               status.message().c_str());
        ++conn_stats_.consumer_violations;
        Close(c);
        return;
      case ipc::UnixSocket::RecvResult::kMessage:
        break;
    }
    ++conn_stats_.consumer_requests;
    ConsumerRequest request;
    status = ipc::DecodeConsumerRequest(consumer_buf_.data(), size, fd.valid(),
                                        &request);
    if (!status.ok()) {
      // A request that parses far enough to name itself gets the reason;
      // anything else is not a consumer speaking this protocol.
      ConsumerRequest partial;
      const bool named =
          size > ipc::kConsumerHeaderSize &&
          partial.ParseFromArray(
              consumer_buf_.data() + ipc::kConsumerHeaderSize,
              static_cast<int>(size - ipc::kConsumerHeaderSize)) &&
          partial.request_id() != 0;
      if (!named) {
        RT_LOG("consumer pid %d: %s; disconnecting", c->identity.pid,
               status.message().c_str());
        ++conn_stats_.consumer_violations;
        Close(c);
        return;
      }
      ++conn_stats_.consumer_request_errors;
      ConsumerResponse response;
      response.set_request_id(partial.request_id());
      response.set_ok(false);
      response.set_error(status.message());
      SendToConsumer(c, response);
      continue;
    }
    HandleConsumerRequest(c, request, std::move(fd));
    DispatchCore();
  }
}

void TracingService::HandleConsumerRequest(Connection* c,
                                           const ConsumerRequest& request,
                                           base::ScopedFd fd) {
  ConsumerResponse response;
  response.set_request_id(request.request_id());
  base::Status status;
  const Clock::time_point now = Clock::now();
  ServiceCore::SessionOwner owner;
  const auto accessible = [&](uint64_t id) {
    return FindAccessibleSession(*c, id, &owner);
  };
  bool answer_now = true;
  ConsumerResponse ended;  // Attach: a tracing_ended event to send after
  switch (request.request_case()) {
    case ConsumerRequest::kEnableTracing: {
      status = ipc::CheckTraceFileFd(fd.get());
      SessionId id = 0;
      if (status.ok()) {
        status = core_->sessions()->StartSession(
            request.enable_tracing().config(), std::move(fd), c->identity.uid,
            c->consumer_id, now, &id);
      }
      if (status.ok()) {
        c->sessions.insert(id);
        response.set_session_id(id);
        for (const std::string& warning : core_->sessions()->StartWarnings(id))
          response.add_warnings(warning);
      }
      break;
    }
    case ConsumerRequest::kDisableTracing:
      status = DisableTracing(c, request, now);
      // Answered with the SessionSummary once the trace is written.
      answer_now = !status.ok();
      break;
    case ConsumerRequest::kFlush: {
      const SessionId id = request.flush().session_id();
      status = accessible(id);
      if (status.ok()) {
        status = core_->sessions()->FlushSession(
            id, request.flush().timeout_ms(), request.request_id(), now,
            c->consumer_id);
      }
      answer_now = !status.ok();  // else when the flush completes
      break;
    }
    case ConsumerRequest::kGetTraceStats: {
      const SessionId id = request.get_trace_stats().session_id();
      status = accessible(id);
      std::string stats;
      if (status.ok())
        status = core_->sessions()->GetSessionTraceStats(id, &stats);
      if (status.ok()) {
        response.set_session_id(id);
        response.set_trace_stats(stats);
      }
      break;
    }
    case ConsumerRequest::kCloneSession:
      status = CloneSession(*c, request.clone_session().session_id(), fd.get(),
                            &response);
      break;
    case ConsumerRequest::kQueryServiceState:
      FillServiceState(*c, &response);
      break;
    case ConsumerRequest::kDetach:
      status = Detach(c, request.detach());
      if (status.ok())
        response.set_session_id(request.detach().session_id());
      break;
    case ConsumerRequest::kAttach:
      status = Attach(c, request.attach(), &response, &ended);
      break;
    case ConsumerRequest::REQUEST_NOT_SET:
      status = base::ErrStatus("no request");  // the decoder refuses it
      break;
  }
  if (!answer_now)
    return;
  response.set_ok(status.ok());
  if (!status.ok()) {
    ++conn_stats_.consumer_request_errors;
    response.set_error(status.message());
    response.clear_session_id();
  }
  if (SendToConsumer(c, response) && ended.tracing_ended())
    SendToConsumer(c, ended);
}

base::Status TracingService::FindAccessibleSession(
    const Connection& c,
    SessionId id,
    ServiceCore::SessionOwner* owner) const {
  if (core_->session_table()->GetSessionOwner(id, owner) &&
      ConsumerMayAccessSession(c.identity.uid, owner->consumer_uid)) {
    return base::OkStatus();
  }
  return base::ErrStatus("session_id: no session %llu of this user",
                         static_cast<unsigned long long>(id));
}

base::Status TracingService::DisableTracing(Connection* c,
                                            const ConsumerRequest& request,
                                            Clock::time_point now) {
  const SessionId id = request.disable_tracing().session_id();
  ServiceCore::SessionOwner owner;
  base::Status status = FindAccessibleSession(*c, id, &owner);
  if (!status.ok())
    return status;
  // The owner's request carries the stop's tag and is answered by the
  // kEnded event; any other waits in |waiting_disable| (the stop gets tag
  // 0, and the owner a tracing_ended event).
  const bool by_owner = owner.consumer_id == c->consumer_id;
  if (by_owner && !owner.stopping)
    return core_->sessions()->StopSession(id, request.request_id(), now);
  std::vector<uint64_t>& waiting = c->waiting_disable[id];
  if (waiting.size() >= kMaxWaitingDisables) {
    return base::ErrStatus(
        "session %llu: %zu DisableTracing requests wait for it already",
        static_cast<unsigned long long>(id), kMaxWaitingDisables);
  }
  if (!owner.stopping)
    status = core_->sessions()->StopSession(id, /*tag=*/0, now);
  if (status.ok())
    waiting.push_back(request.request_id());
  return status;
}

base::Status TracingService::CloneSession(const Connection& c,
                                          SessionId id,
                                          int fd,
                                          ConsumerResponse* response) {
  ServiceCore::SessionOwner owner;
  base::Status status = FindAccessibleSession(c, id, &owner);
  if (status.ok())
    status = ipc::CheckTraceFileFd(fd);
  ExportSummary summary;
  if (status.ok())
    status = core_->sessions()->CloneSession(id, fd, &summary);
  if (!status.ok())
    return status;
  response->set_session_id(id);
  SessionEvent ev;
  ev.session_id = id;
  ev.summary = summary;
  ev.packets_lost = summary.packets_overwritten + summary.packets_discarded +
                    summary.export_stats.invalid_packets;
  FillSummary(ev, response->mutable_summary());
  return base::OkStatus();
}

base::Status TracingService::Detach(Connection* c,
                                    const protos::DetachRequest& request) {
  const SessionId id = request.session_id();
  const auto id_ull = static_cast<unsigned long long>(id);
  ServiceCore::SessionOwner owner;
  base::Status status = FindAccessibleSession(*c, id, &owner);
  if (!status.ok())
    return status;
  if (owner.consumer_id != c->consumer_id) {
    return base::ErrStatus(
        "session %llu: only the connection that owns it may detach it", id_ull);
  }
  if (owner.stopping)
    return base::ErrStatus("session %llu is stopping", id_ull);
  // Keyed by the owner's uid: only that user can attach.
  status = detached_.Add(static_cast<uint32_t>(owner.consumer_uid),
                         request.key(), id);
  if (!status.ok())
    return status;
  core_->session_table()->SetSessionConsumer(id, 0);
  // No longer this connection's: its close does not free the session.
  c->sessions.erase(id);
  c->waiting_disable.erase(id);
  return base::OkStatus();
}

base::Status TracingService::Attach(Connection* c,
                                    const protos::AttachRequest& request,
                                    ConsumerResponse* response,
                                    ConsumerResponse* ended) {
  const uint32_t uid = c->identity.uid;
  const DetachedSessions::Entry* found = detached_.Find(uid, request.key());
  if (!found) {
    return base::ErrStatus("no detached session of this user by the key %s",
                           request.key().c_str());
  }
  response->set_session_id(found->id);
  if (request.probe())
    return base::OkStatus();
  DetachedSessions::Entry entry;
  detached_.Take(uid, request.key(), &entry);
  if (entry.ended) {
    *ended = std::move(entry.end);
    return base::OkStatus();
  }
  // A live entry is a session the core still has: its kEnded event is
  // delivered (DeliverEvent -> OnEnded) in the same dispatch that ends it.
  // Should one ever be missed, the attach fails rather than the service.
  if (!core_->session_table()->SetSessionConsumer(entry.id, c->consumer_id)) {
    return base::ErrStatus(
        "session %llu ended while detached and its end was not recorded",
        static_cast<unsigned long long>(entry.id));
  }
  c->sessions.insert(entry.id);
  return base::OkStatus();
}

void TracingService::FillServiceState(const Connection& c,
                                      ConsumerResponse* response) {
  protos::ServiceState* state = response->mutable_service_state();
  for (const ProducerInfo& p : core_->producers()->ListProducers()) {
    protos::ServiceState::Producer* out = state->add_producers();
    out->set_id(p.id);
    out->set_name(p.name);
    out->set_pid(p.identity.pid);
    out->set_uid(static_cast<uint32_t>(p.identity.uid));
    for (const std::string& ds : p.data_sources)
      out->add_data_sources(ds);
    out->set_ring_bytes(p.ring_bytes);
  }
  for (const SessionInfo& s :
       core_->session_table()->ListSessions(Clock::now())) {
    // Other users' sessions are left out, not even counted: their names,
    // buffers and timing are theirs (docs/sessions.md).
    if (!ConsumerMayAccessSession(c.identity.uid, s.consumer_uid))
      continue;
    protos::ServiceState::Session* out = state->add_sessions();
    out->set_id(s.id);
    if (!s.unique_name.empty())
      out->set_unique_name(s.unique_name);
    out->set_consumer_uid(static_cast<uint32_t>(s.consumer_uid));
    out->set_state(s.stopping ? "stopping" : "started");
    for (const SessionInfo::Buffer& b : s.buffers) {
      protos::ServiceState::Buffer* buffer = out->add_buffers();
      buffer->set_id(b.id);
      buffer->set_size_bytes(b.size_bytes);
      buffer->set_used_bytes(b.used_bytes);
      buffer->set_fill_policy(ToProto(b.policy));
    }
    out->set_num_data_source_instances(s.num_data_source_instances);
    out->set_elapsed_ms(s.elapsed_ms);
  }
  state->set_max_sessions(core_->options().max_sessions);
  state->set_max_total_buffer_bytes(core_->options().max_total_buffer_bytes);
  state->set_max_producers(core_->options().max_producers);
  // Last, into what is left of one message (ok, error and the omitted
  // count, set later, get kReserve).
  constexpr size_t kReserve = 256;
  const size_t size = response->ByteSizeLong();
  const size_t budget = ipc::kMaxConsumerPayloadSize > size + kReserve
                            ? ipc::kMaxConsumerPayloadSize - size - kReserve
                            : 0;
  const uint32_t omitted = AddDeclaredCategories(
      core_->producers()->ListDataSources(), budget, state);
  if (omitted != 0)
    state->set_categories_omitted(omitted);
}

bool TracingService::SendToConsumer(Connection* c,
                                    const ConsumerResponse& response) {
  if (!c->socket)
    return false;
  std::vector<uint8_t> bytes;
  base::Status status = ipc::EncodeConsumerResponse(response, &bytes);
  if (!status.ok()) {
    // Too large (a ServiceState of very many producers): say so instead.
    ConsumerResponse small;
    small.set_request_id(response.request_id());
    small.set_ok(false);
    small.set_error("the answer does not fit a message: " + status.message());
    status = ipc::EncodeConsumerResponse(small, &bytes);
    RT_CHECK(status.ok());
  }
  bool would_block = false;
  status = c->socket->Send(bytes.data(), bytes.size(), -1, &would_block);
  if (status.ok())
    return true;
  if (would_block) {
    RT_LOG("consumer pid %d does not read its socket; disconnecting",
           c->identity.pid);
    ++conn_stats_.consumers_dropped_not_reading;
  } else {
    RT_LOG("consumer pid %d: %s; disconnecting", c->identity.pid,
           status.message().c_str());
    ++conn_stats_.consumer_disconnects;
  }
  Close(c);
  return false;
}

TracingService::Connection* TracingService::FindConsumer(uint64_t id) {
  for (auto& c : connections_) {
    if (c->socket && c->consumer && c->consumer_id == id)
      return c.get();
  }
  return nullptr;
}

TracingService::Connection* TracingService::FindProducer(
    trace_buffer::ProducerID id) {
  for (auto& c : connections_) {
    if (c->socket && !c->consumer && c->producer_id == id)
      return c.get();
  }
  return nullptr;
}

void TracingService::DeliverEvent(const SessionEvent& ev) {
  Connection* c = FindConsumer(ev.consumer_id);
  if (ev.type == SessionEvent::Type::kFlushed) {
    if (!c)
      return;  // the consumer that asked left
    ConsumerResponse response;
    response.set_request_id(ev.tag);
    response.set_ok(ev.status.ok());
    if (!ev.status.ok())
      response.set_error(ev.status.message());
    response.set_session_id(ev.session_id);
    SendToConsumer(c, response);
    return;
  }
  ConsumerResponse response;
  response.set_ok(ev.status.ok());
  if (!ev.status.ok())
    response.set_error(ev.status.message());
  response.set_session_id(ev.session_id);
  FillSummary(ev, response.mutable_summary());
  // |c| is the owner: the answer to its stop if it asked for the stop, else
  // (the service, or another connection of its user, ended the session)
  // the tracing_ended event.
  if (c) {
    c->sessions.erase(ev.session_id);
    const bool owner_asked = !ev.by_service && ev.tag != 0;
    ConsumerResponse first = response;
    first.set_request_id(owner_asked ? ev.tag : 0);
    if (!owner_asked)
      first.set_tracing_ended(true);
    SendToConsumer(c, first);
  } else {
    // Detached: the owner learns it at its attach.
    ConsumerResponse end = response;
    end.set_request_id(0);
    end.set_tracing_ended(true);
    detached_.OnEnded(ev.session_id, end);
  }
  AnswerWaitingDisables(ev.session_id, std::move(response));
}

void TracingService::AnswerWaitingDisables(SessionId id,
                                           ConsumerResponse response) {
  // By index: a failed send closes a connection (its socket), it never
  // removes one from |connections_|.
  for (size_t i = 0; i < connections_.size(); ++i) {
    Connection* c = connections_[i].get();
    auto w = c->waiting_disable.find(id);
    if (w == c->waiting_disable.end())
      continue;
    const std::vector<uint64_t> waiting = std::move(w->second);
    c->waiting_disable.erase(w);
    for (uint64_t request_id : waiting) {
      response.set_request_id(request_id);
      if (!SendToConsumer(c, response))
        break;
    }
  }
}

void TracingService::SendCommand(const ProducerCommand& command) {
  Connection* c = FindProducer(command.producer_id);
  if (!c)
    return;  // it left; the core forgot its instances
  std::vector<uint8_t> buf(ipc::kMaxMessageSize);
  size_t size = 0;
  switch (command.type) {
    case ProducerCommand::Type::kStartDataSource: {
      ipc::StartDataSourceMsg msg;
      msg.instance_id = command.id;
      msg.target_buffer = command.target_buffer;
      msg.clear_period_ms = command.clear_period_ms;
      msg.name = command.data_source_name;
      msg.enabled_categories = command.enabled_categories;
      msg.disabled_categories = command.disabled_categories;
      msg.enabled_tags = command.enabled_tags;
      msg.disabled_tags = command.disabled_tags;
      msg.config = command.config;
      size = ipc::EncodeStartDataSource(msg, buf.data(), buf.size());
      break;
    }
    case ProducerCommand::Type::kStopDataSource:
      size = ipc::EncodeStopDataSource(command.id, buf.data(), buf.size());
      break;
    case ProducerCommand::Type::kFlush:
      size = ipc::EncodeFlush(command.id, buf.data(), buf.size());
      break;
  }
  // The config was validated with the same limits the encoder has.
  RT_CHECK(size > 0);
  bool would_block = false;
  const base::Status status =
      c->socket->Send(buf.data(), size, -1, &would_block);
  if (status.ok())
    return;
  RT_LOG(
      "pid %d (producer %u): cannot send a data source command (%s); "
      "disconnecting",
      c->identity.pid, static_cast<unsigned>(c->producer_id),
      would_block ? "it does not read its socket" : status.message().c_str());
  ++conn_stats_.producer_command_send_failures;
  Close(c);
}

void TracingService::DispatchCore() {
  // Bounded: each round's work comes from the previous round (a closed
  // consumer's aborted sessions send stops; a closed producer completes a
  // stop), and nothing here creates work forever.
  for (int round = 0; round < 16; ++round) {
    std::vector<ProducerCommand> commands = core_->sessions()->TakeCommands();
    std::vector<SessionEvent> events = core_->sessions()->TakeEvents();
    if (commands.empty() && events.empty())
      return;
    for (const ProducerCommand& command : commands)
      SendCommand(command);
    for (const SessionEvent& ev : events)
      DeliverEvent(ev);
  }
}

}  // namespace traced
}  // namespace ringtrace
