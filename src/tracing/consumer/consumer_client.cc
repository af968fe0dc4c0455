/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/consumer/consumer_client.h"

#include <inttypes.h>
#include <poll.h>
#include <unistd.h>

#include <utility>

#include "protos/perfetto/config/trace_config.pb.h"
#include "src/base/scoped_fd.h"
#include "src/base/time.h"
#include "src/tracing/ipc/consumer_protocol.h"

namespace ringtrace {
namespace consumer {
namespace {

using protos::ConsumerRequest;
using protos::ConsumerResponse;

uint64_t DeadlineAfter(int timeout_ms) {
  return base::MonotonicMs() +
         static_cast<uint64_t>(timeout_ms < 0 ? 0 : timeout_ms);
}

int MsLeft(uint64_t deadline_ms) {
  const uint64_t now = base::MonotonicMs();
  return now >= deadline_ms ? 0 : static_cast<int>(deadline_ms - now);
}

const char* RequestName(const ConsumerRequest& request) {
  switch (request.request_case()) {
    case ConsumerRequest::kEnableTracing:
      return "EnableTracing";
    case ConsumerRequest::kDisableTracing:
      return "DisableTracing";
    case ConsumerRequest::kFlush:
      return "Flush";
    case ConsumerRequest::kGetTraceStats:
      return "GetTraceStats";
    case ConsumerRequest::kCloneSession:
      return "CloneSession";
    case ConsumerRequest::kQueryServiceState:
      return "QueryServiceState";
    case ConsumerRequest::kDetach:
      return "Detach";
    case ConsumerRequest::kAttach:
      return "Attach";
    case ConsumerRequest::REQUEST_NOT_SET:
      break;
  }
  return "request";
}

}  // namespace

// static
std::unique_ptr<ConsumerClient> ConsumerClient::Connect(const std::string& path,
                                                        int timeout_ms,
                                                        base::Status* status) {
  base::Status s;
  std::unique_ptr<ipc::UnixSocket> socket =
      ipc::UnixSocket::ConnectWithTimeout(path, timeout_ms, &s);
  if (!socket) {
    *status = base::ErrStatus("consumer socket: %s (is ringtraced running?)",
                              s.message().c_str());
    return nullptr;
  }
  base::ClientIdentity peer;
  if (!socket->GetPeerCredentials(&peer)) {
    *status = base::ErrStatus(
        "consumer socket %s: cannot read the "
        "service's credentials",
        path.c_str());
    return nullptr;
  }
  *status = CheckServiceUid(static_cast<uid_t>(peer.uid), getuid());
  if (!status->ok()) {
    *status = base::ErrStatus("consumer socket %s: %s", path.c_str(),
                              status->message().c_str());
    return nullptr;
  }
  return FromSocket(std::move(socket));
}

// static
base::Status ConsumerClient::CheckServiceUid(uid_t service_uid,
                                             uid_t client_uid) {
  if (service_uid == client_uid || service_uid == 0)
    return base::OkStatus();
  return base::ErrStatus(
      "served by uid %u, neither you (uid %u) nor root: not trusted with "
      "trace files",
      static_cast<unsigned>(service_uid), static_cast<unsigned>(client_uid));
}

// static
std::unique_ptr<ConsumerClient> ConsumerClient::FromSocket(
    std::unique_ptr<ipc::UnixSocket> socket) {
  return std::unique_ptr<ConsumerClient>(new ConsumerClient(std::move(socket)));
}

ConsumerClient::ConsumerClient(std::unique_ptr<ipc::UnixSocket> socket)
    : socket_(std::move(socket)), recv_buf_(ipc::kMaxConsumerMessageSize) {
  // Sends must never block past a deadline: poll(2) does the waiting.
  socket_->SetNonBlocking(true);
}

ConsumerClient::~ConsumerClient() = default;

int ConsumerClient::fd() const {
  return socket_ ? socket_->fd() : -1;
}

base::Status ConsumerClient::Break(base::Status status) {
  broken_ = status;
  socket_.reset();
  return status;
}

base::Status ConsumerClient::SendUntil(const std::vector<uint8_t>& datagram,
                                       int fd,
                                       uint64_t deadline_ms) {
  for (;;) {
    bool would_block = false;
    base::Status s =
        socket_->Send(datagram.data(), datagram.size(), fd, &would_block);
    if (s.ok())
      return s;
    if (!would_block)
      return Break(base::ErrStatus("consumer socket: %s", s.message().c_str()));
    const int left = MsLeft(deadline_ms);
    if (left == 0) {
      // Nothing was sent: the connection stays usable.
      return base::ErrStatus(
          "consumer socket: timed out sending (the service is not reading)");
    }
    pollfd p = {};
    p.fd = socket_->fd();
    p.events = POLLOUT;
    poll(&p, 1, left);  // EINTR or readiness: retry the send
  }
}

base::Status ConsumerClient::ReadOne(uint64_t deadline_ms,
                                     uint64_t want_id,
                                     ConsumerResponse* response,
                                     bool* got,
                                     bool* timed_out) {
  *got = false;
  *timed_out = false;
  if (!socket_->WaitReadable(MsLeft(deadline_ms))) {
    *timed_out = true;
    return base::OkStatus();
  }
  size_t size = 0;
  base::ScopedFd fd;
  base::Status rs;
  switch (
      socket_->Receive(recv_buf_.data(), recv_buf_.size(), &size, &fd, &rs)) {
    case ipc::UnixSocket::RecvResult::kMessage:
      break;
    case ipc::UnixSocket::RecvResult::kWouldBlock:
      return base::OkStatus();  // a spurious wake-up
    case ipc::UnixSocket::RecvResult::kClosed:
      return Break(
          base::ErrStatus("consumer socket: the service closed the "
                          "connection"));
    case ipc::UnixSocket::RecvResult::kTooLong:
    case ipc::UnixSocket::RecvResult::kTooManyFds:
      return Break(base::ErrStatus("consumer socket: protocol violation: %s",
                                   rs.message().c_str()));
    case ipc::UnixSocket::RecvResult::kError:
      return Break(
          base::ErrStatus("consumer socket: %s", rs.message().c_str()));
  }
  if (fd.valid()) {
    return Break(base::ErrStatus(
        "consumer socket: protocol violation: a response with an fd"));
  }
  ConsumerResponse msg;
  base::Status s = ipc::DecodeConsumerResponse(recv_buf_.data(), size, &msg);
  if (!s.ok()) {
    return Break(base::ErrStatus("consumer socket: protocol violation: %s",
                                 s.message().c_str()));
  }
  const uint64_t id = msg.request_id();
  if (id == 0) {  // tracing_ended (DecodeConsumerResponse checked it)
    if (events_.size() >= kMaxQueuedEvents) {
      return Break(base::ErrStatus(
          "consumer socket: protocol violation: more than %zu events queued",
          kMaxQueuedEvents));
    }
    events_.push_back(std::move(msg));
    return base::OkStatus();
  }
  if (want_id != 0 && id == want_id) {
    *response = std::move(msg);
    *got = true;
    return base::OkStatus();
  }
  if (abandoned_ids_.erase(id) == 1)
    return base::OkStatus();  // the late answer of a call that timed out
  return Break(base::ErrStatus(
      "consumer socket: protocol violation: a response to request %" PRIu64
      ", which is not waiting for one",
      id));
}

base::Status ConsumerClient::Call(ConsumerRequest* request,
                                  int fd,
                                  int timeout_ms,
                                  ConsumerResponse* response) {
  if (!broken_.ok())
    return broken_;
  const uint64_t deadline_ms = DeadlineAfter(timeout_ms);
  const uint64_t id = next_request_id_++;
  request->set_request_id(id);
  std::vector<uint8_t> datagram;
  base::Status s = ipc::EncodeConsumerRequest(*request, &datagram);
  if (!s.ok())
    return s;
  s = SendUntil(datagram, fd, deadline_ms);
  if (!s.ok())
    return s;
  for (;;) {
    bool got = false;
    bool timed_out = false;
    s = ReadOne(deadline_ms, id, response, &got, &timed_out);
    if (!s.ok())
      return s;
    if (got)
      break;
    if (timed_out) {
      abandoned_ids_.insert(id);
      return base::ErrStatus("consumer socket: no answer to %s within %d ms",
                             RequestName(*request), timeout_ms);
    }
  }
  if (!response->ok())
    return base::ErrStatus("%s", response->error().c_str());
  return base::OkStatus();
}

base::Status ConsumerClient::EnableTracing(
    const perfetto::protos::TraceConfig& config,
    int out_fd,
    uint64_t* session_id,
    std::vector<std::string>* warnings) {
  *session_id = 0;
  if (warnings)
    warnings->clear();
  base::Status s = ipc::ValidateTraceConfig(config);
  if (!s.ok())
    return s;
  s = ipc::CheckTraceFileFd(out_fd);
  if (!s.ok())
    return s;
  ConsumerRequest request;
  *request.mutable_enable_tracing()->mutable_config() = config;
  ConsumerResponse response;
  s = Call(&request, out_fd, timeout_ms_, &response);
  if (!s.ok())
    return s;
  if (response.session_id() == 0) {
    return Break(base::ErrStatus(
        "consumer socket: protocol violation: EnableTracing answered "
        "without a session_id"));
  }
  *session_id = response.session_id();
  if (warnings)
    warnings->assign(response.warnings().begin(), response.warnings().end());
  return base::OkStatus();
}

base::Status ConsumerClient::DisableTracing(uint64_t session_id,
                                            int timeout_ms,
                                            protos::SessionSummary* summary) {
  ConsumerRequest request;
  request.mutable_disable_tracing()->set_session_id(session_id);
  ConsumerResponse response;
  base::Status s = Call(&request, -1, timeout_ms, &response);
  if (s.ok() && summary)
    *summary = response.summary();
  return s;
}

base::Status ConsumerClient::Flush(uint64_t session_id, uint32_t timeout_ms) {
  if (timeout_ms > ipc::kMaxTimeoutMs) {
    return base::ErrStatus("flush timeout %u ms is outside 0..%u", timeout_ms,
                           ipc::kMaxTimeoutMs);
  }
  ConsumerRequest request;
  request.mutable_flush()->set_session_id(session_id);
  request.mutable_flush()->set_timeout_ms(timeout_ms);
  const uint32_t wait = timeout_ms == 0 ? ipc::kMaxTimeoutMs : timeout_ms;
  ConsumerResponse response;
  return Call(&request, -1, static_cast<int>(wait) + kFlushMarginMs, &response);
}

base::Status ConsumerClient::GetTraceStats(uint64_t session_id,
                                           std::string* stats_bytes) {
  ConsumerRequest request;
  request.mutable_get_trace_stats()->set_session_id(session_id);
  ConsumerResponse response;
  base::Status s = Call(&request, -1, timeout_ms_, &response);
  if (s.ok())
    *stats_bytes = std::move(*response.mutable_trace_stats());
  return s;
}

base::Status ConsumerClient::CloneSession(uint64_t session_id, int fd) {
  base::Status s = ipc::CheckTraceFileFd(fd);
  if (!s.ok())
    return s;
  ConsumerRequest request;
  request.mutable_clone_session()->set_session_id(session_id);
  ConsumerResponse response;
  return Call(&request, fd, timeout_ms_, &response);
}

base::Status ConsumerClient::QueryServiceState(protos::ServiceState* state) {
  ConsumerRequest request;
  request.mutable_query_service_state();
  ConsumerResponse response;
  base::Status s = Call(&request, -1, timeout_ms_, &response);
  if (s.ok())
    *state = std::move(*response.mutable_service_state());
  return s;
}

base::Status ConsumerClient::Detach(uint64_t session_id,
                                    const std::string& key) {
  base::Status s = ipc::CheckDetachKey("detach key", key);
  if (!s.ok())
    return s;
  ConsumerRequest request;
  request.mutable_detach()->set_session_id(session_id);
  request.mutable_detach()->set_key(key);
  ConsumerResponse response;
  return Call(&request, -1, timeout_ms_, &response);
}

base::Status ConsumerClient::Attach(const std::string& key,
                                    bool probe,
                                    uint64_t* session_id) {
  base::Status s = ipc::CheckDetachKey("attach key", key);
  if (!s.ok())
    return s;
  ConsumerRequest request;
  request.mutable_attach()->set_key(key);
  if (probe)
    request.mutable_attach()->set_probe(true);
  ConsumerResponse response;
  s = Call(&request, -1, timeout_ms_, &response);
  if (s.ok())
    *session_id = response.session_id();
  return s;
}

base::Status ConsumerClient::IsDetached(const std::string& key,
                                        bool* detached) {
  *detached = false;
  base::Status s = ipc::CheckDetachKey("attach key", key);
  if (!s.ok())
    return s;
  ConsumerRequest request;
  request.mutable_attach()->set_key(key);
  request.mutable_attach()->set_probe(true);
  ConsumerResponse response;
  s = Call(&request, -1, timeout_ms_, &response);
  if (s.ok()) {
    *detached = true;
    return s;
  }
  // Call() fills |response| only when the answer came.
  if (response.has_ok() && !response.ok() && broken_.ok())
    return base::OkStatus();
  return s;
}

bool ConsumerClient::TakeEvent(ConsumerResponse* event) {
  if (events_.empty())
    return false;
  *event = std::move(events_.front());
  events_.pop_front();
  return true;
}

base::Status ConsumerClient::WaitForEvent(int timeout_ms, bool* got_event) {
  *got_event = !events_.empty();
  if (*got_event)
    return base::OkStatus();
  if (!broken_.ok())
    return broken_;
  const uint64_t deadline_ms = DeadlineAfter(timeout_ms);
  while (events_.empty()) {
    bool got = false;
    bool timed_out = false;
    ConsumerResponse unused;
    base::Status s = ReadOne(deadline_ms, 0, &unused, &got, &timed_out);
    if (!s.ok())
      return s;
    if (timed_out)
      break;
  }
  *got_event = !events_.empty();
  return base::OkStatus();
}

}  // namespace consumer
}  // namespace ringtrace
