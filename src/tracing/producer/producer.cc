/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/producer.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <utility>

#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/producer/drain_notifier.h"
#include "src/tracing/producer/hello_client.h"
#include "src/tracing/producer/producer_ring.h"
#include "src/tracing/producer/socket_drain_transport.h"

namespace ringtrace {

namespace {

void SetStatus(base::Status* status, base::Status s) {
  if (status)
    *status = std::move(s);
}

}  // namespace

Producer::Producer() = default;

// Members go in reverse order: the ring (unmapped: no writer is left), the
// notifier, the transport, and last the socket, whose close tells the
// service to drain the ring one last time.
Producer::~Producer() = default;

std::unique_ptr<Producer> Producer::Connect(const ProducerOptions& options,
                                            base::Status* status) {
  if (options.drain_request_retry_ms > producer::DrainNotifier::kMaxRetryMs) {
    SetStatus(status, base::ErrStatus("drain_request_retry_ms %u > %u",
                                      options.drain_request_retry_ms,
                                      producer::DrainNotifier::kMaxRetryMs));
    return nullptr;
  }
  base::Status s;
  std::unique_ptr<ipc::UnixSocket> socket =
      ipc::UnixSocket::Connect(options.socket_path, &s);
  if (!socket) {
    SetStatus(status, base::ErrStatus(
                          "cannot connect to the ringtrace service at "
                          "'%s' (is ringtraced running?): %s",
                          options.socket_path.c_str(), s.message().c_str()));
    return nullptr;
  }
  producer::HandshakeResult hello;
  s = producer::Handshake(socket.get(), options, &hello);
  if (!s.ok()) {
    SetStatus(status, base::ErrStatus("ringtrace service at '%s': %s",
                                      options.socket_path.c_str(),
                                      s.message().c_str()));
    return nullptr;
  }

  std::unique_ptr<Producer> p(new Producer());
  p->producer_id_ = hello.reply.producer_id;
  p->target_buffer_ =
      static_cast<shm_ring::BufferID>(hello.reply.target_buffer);
  p->transport_ =
      std::make_unique<producer::SocketDrainTransport>(socket->fd());
  producer::DrainNotifier::Options notifier_options;
  notifier_options.read_pos = hello.region->view().read_pos();
  notifier_options.retry_ms = options.drain_request_retry_ms;
  notifier_options.transport = p->transport_.get();
  p->notifier_ = std::make_unique<producer::DrainNotifier>(notifier_options);
  producer::ProducerRing::Options ring_options;
  ring_options.target_buffer = p->target_buffer_;
  ring_options.policy = options.buffer_exhausted_policy;
  ring_options.stall_timeout_ms = options.stall_timeout_ms;
  ring_options.delegate = p->notifier_.get();
  p->ring_ = std::make_unique<producer::ProducerRing>(std::move(hello.region),
                                                      ring_options);
  p->socket_ = std::move(socket);
  SetStatus(status, base::OkStatus());
  return p;
}

std::unique_ptr<shm_ring::TraceWriterV2> Producer::NewTraceWriter(
    base::Status* status) {
  return ring_->NewTraceWriter(status);
}

bool Producer::connected() const {
  if (notifier_->disconnected())
    return false;
  // The service sends nothing after the HelloReply, so the socket becomes
  // readable only when it hangs up (or breaks the protocol).
  pollfd p;
  p.fd = socket_->fd();
  p.events = POLLIN;
#if defined(POLLRDHUP)
  p.events |= POLLRDHUP;
#endif
  p.revents = 0;
  if (poll(&p, 1, 0) <= 0)
    return true;  // nothing pending (or EINTR: ask again next time)
  bool gone = (p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
#if defined(POLLRDHUP)
  gone = gone || (p.revents & POLLRDHUP) != 0;
#endif
  if (!gone && (p.revents & POLLIN)) {
    // A datagram the protocol does not define: peek without consuming it.
    // recv() == 0 is the orderly shutdown; a datagram is left alone (the
    // producer has nothing to do with it, and the connection still works).
    uint8_t byte;
    const ssize_t n = recv(p.fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    gone = n == 0 ||
           (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
  }
  if (gone)
    notifier_->MarkDisconnected();
  return !gone;
}

ProducerStats Producer::stats() const {
  const producer::DrainNotifierStats n = notifier_->stats();
  ProducerStats s;
  s.writers_created = ring_->writers_created();
  s.drain_requests_sent = n.requests_sent;
  s.drain_requests_coalesced = n.requests_coalesced;
  s.drain_requests_dropped = n.requests_dropped;
  s.notifications_after_disconnect = n.notifications_after_disconnect;
  return s;
}

const shm_ring::RingGeometry& Producer::geometry() const {
  return ring_->geometry();
}

}  // namespace ringtrace
