/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/consumer_connection.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

namespace ringtrace {
namespace cli {

ClientConnection::ClientConnection(
    std::unique_ptr<consumer::ConsumerClient> client)
    : client_(std::move(client)),
      abort_fd_(fcntl(client_->fd(), F_DUPFD_CLOEXEC, 0)) {}

ClientConnection::~ClientConnection() = default;

base::Status ClientConnection::EnableTracing(
    const perfetto::protos::TraceConfig& config,
    int out_fd,
    uint64_t* session_id,
    std::vector<std::string>* warnings) {
  return client_->EnableTracing(config, out_fd, session_id, warnings);
}

base::Status ClientConnection::DisableTracing(
    uint64_t session_id,
    uint32_t timeout_ms,
    ringtrace::protos::SessionSummary* summary) {
  const int timeout = static_cast<int>(std::min<uint32_t>(timeout_ms, INT_MAX));
  return client_->DisableTracing(session_id, timeout, summary);
}

base::Status ClientConnection::CloneSession(uint64_t session_id, int out_fd) {
  return client_->CloneSession(session_id, out_fd);
}

base::Status ClientConnection::Detach(uint64_t session_id,
                                      const std::string& key) {
  return client_->Detach(session_id, key);
}

base::Status ClientConnection::Attach(const std::string& key,
                                      bool probe,
                                      uint64_t* session_id) {
  return client_->Attach(key, probe, session_id);
}

base::Status ClientConnection::QueryServiceState(
    ringtrace::protos::ServiceState* state) {
  return client_->QueryServiceState(state);
}

int ClientConnection::event_fd() {
  // The duplicate: the client closes its own fd when the connection breaks.
  return abort_fd_.get();
}

bool ClientConnection::TakeEvent(ringtrace::protos::ConsumerResponse* event,
                                 base::Status* status) {
  if (client_->TakeEvent(event))
    return true;
  if (!client_->broken().ok()) {
    *status = client_->broken();
    return false;
  }
  bool got_event = false;
  base::Status read = client_->WaitForEvent(0, &got_event);
  if (!read.ok()) {
    *status = read;
    return false;
  }
  return got_event && client_->TakeEvent(event);
}

void ClientConnection::Abort() {
  // Both directions: a call blocked in poll/recv wakes with end-of-file,
  // and the service sees the consumer hang up and frees its sessions.
  if (abort_fd_.valid())
    shutdown(abort_fd_.get(), SHUT_RDWR);
}

}  // namespace cli
}  // namespace ringtrace
