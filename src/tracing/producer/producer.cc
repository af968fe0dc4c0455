/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/producer.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "ringtrace/logging.h"
#include "src/base/time.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"
#include "src/tracing/ipc/default_socket_paths.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/producer/drain_notifier.h"
#include "src/tracing/producer/hello_client.h"
#include "src/tracing/producer/producer_ring.h"
#include "src/tracing/producer/service_reader.h"
#include "src/tracing/producer/socket_drain_transport.h"
#include "src/tracing/producer/writer_loss_registry.h"

namespace ringtrace {

namespace {

void SetStatus(base::Status* status, base::Status s) {
  if (status)
    *status = std::move(s);
}

}  // namespace

namespace producer {

// The process-wide list of live Producers and the pthread_atfork handlers
// that make them inert in a fork child.
//
// prepare (parent, before fork) takes the list's lock, so that no Producer
// is half constructed or half destroyed when the address space is copied;
// parent releases it; child walks the list, makes every Producer inert, and
// releases it. The child handler runs in the only thread of the new process
// and does async-signal-safe work only (atomic stores, mmap).
struct ForkHandlers {
  static std::mutex& Mutex() {
    static std::mutex mutex;
    return mutex;
  }
  static Producer*& Head() {
    static Producer* head = nullptr;
    return head;
  }
  static void Install() {
    static std::once_flag once;
    std::call_once(once, [] {
      // Mutex() and Head() exist before any handler can run.
      Mutex();
      Head();
      const int rc = pthread_atfork(&Prepare, &Parent, &Child);
      RT_CHECK(rc == 0);
    });
  }
  static void Register(Producer* p) {
    std::lock_guard<std::mutex> lock(Mutex());
    p->prev_ = nullptr;
    p->next_ = Head();
    if (Head())
      Head()->prev_ = p;
    Head() = p;
  }
  static void Unregister(Producer* p) {
    std::lock_guard<std::mutex> lock(Mutex());
    if (!p->prev_ && Head() != p)
      return;  // never registered
    if (p->prev_)
      p->prev_->next_ = p->next_;
    else
      Head() = p->next_;
    if (p->next_)
      p->next_->prev_ = p->prev_;
    p->prev_ = p->next_ = nullptr;
  }
  static void Prepare() { Mutex().lock(); }
  static void Parent() { Mutex().unlock(); }
  static void Child() {
    for (Producer* p = Head(); p; p = p->next_)
      p->BecomeInertAfterFork();
    Mutex().unlock();
  }
};

}  // namespace producer

Producer::Producer() = default;

// After the final report, members go in reverse order: the ring (unmapped:
// no writer is left), the notifier, the transport, the socket, whose close
// tells the service to drain the ring one last time, and last the loss
// registry.
Producer::~Producer() {
  producer::ForkHandlers::Unregister(this);
  if (!reader_) {
    // Connect() failed to start the reader: nothing was published.
  } else if (inert_after_fork_) {
    // The reader thread does not exist here, and its lock may have been
    // copied while held: close the child's fd copy and leave the rest.
    reader_->AbandonInChild();
    (void)reader_.release();  // deliberately leaked (see service_reader.h)
    return;
  } else {
    // First: the reader uses the socket and calls the handlers; after this
    // no handler is called again.
    reader_->Stop();
  }
  if (!inert_after_fork_ && !notifier_->disconnected())
    SendFinalLossReport();
  if (!inert_after_fork_)
    DisconnectInOrder();
}

void Producer::DisconnectInOrder() {
  // A Unix socket closed with datagrams still queued resets the connection
  // (ECONNRESET at the service), and the peer's pending error is reported
  // before the datagrams we sent last: the final loss report would be lost.
  // So the close waits for the service's: shutdown(SHUT_WR) gives it EOF
  // after our last datagrams; it reads them, drains the ring and closes its
  // end (recv here returns 0). Until then whatever it still sends (a flush,
  // a stop of a session ending meanwhile) is read and dropped, so nothing
  // is left unread here when we close. Bounded by disconnect_timeout_ms: a
  // service that does not answer gets its reset.
  const int fd = socket_->fd();
  const bool half_closed = shutdown(fd, SHUT_WR) == 0;
  const uint64_t deadline_ms =
      base::MonotonicMs() + options_.disconnect_timeout_ms;
  uint8_t byte;
  for (int i = 0; i < 4096; ++i) {
    // A 1-byte buffer truncates (drops) the rest of the datagram, and fds
    // without a control buffer are closed by the kernel.
    const ssize_t n = recv(fd, &byte, 1, MSG_DONTWAIT);
    if (n == 0)
      return;  // the service closed its end: nothing more can arrive
    if (n > 0 || errno == EINTR)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return;  // the connection is gone
    const uint64_t now_ms = base::MonotonicMs();
    if (!half_closed || now_ms >= deadline_ms)
      return;
    pollfd p = {fd, POLLIN, 0};
    const int rc = poll(&p, 1, static_cast<int>(deadline_ms - now_ms));
    if (rc == 0)
      return;  // timed out
  }
}

void Producer::SendFinalLossReport() {
  // Every writer is gone: the counters are final. Each datagram carries
  // kLossReportFinal; one without entries if nothing was ever lost, so the
  // service knows the producer's counts are complete.
  std::vector<ipc::WriterLossEntry> entries;
  losses_->ForEachLoss(
      [&entries](const ipc::WriterLossEntry& e) { entries.push_back(e); });
  const uint64_t deadline_ms =
      base::MonotonicMs() + options_.disconnect_timeout_ms;
  size_t next = 0;
  do {
    ipc::DrainRequestMsg msg;
    msg.flags = ipc::kLossReportFinal;
    while (next < entries.size() &&
           msg.num_entries < ipc::kMaxLossEntriesPerMessage) {
      msg.entries[msg.num_entries++] = entries[next++];
    }
    uint8_t buf[ipc::kMaxProducerMessageSize];
    const size_t size = ipc::EncodeLossReport(msg, buf, sizeof(buf));
    RT_CHECK(size > 0);
    if (!producer::SendBefore(socket_->fd(), buf, size, deadline_ms)) {
      RT_ELOG(
          "ringtrace producer %u: the final loss report could not be sent "
          "within %u ms; the trace may not show every loss",
          producer_id_, options_.disconnect_timeout_ms);
      return;
    }
  } while (next < entries.size());
}

void Producer::BecomeInertAfterFork() {
  if (inert_after_fork_)
    return;  // a Producer inherited across two forks
  inert_after_fork_ = true;
  // No DrainRequest is sent again, and every writer refuses new packets.
  notifier_->MarkDisconnected();
  // A deferred stop's ack closure called here must not ack the parent's
  // instance through the eventfd both processes share.
  if (reader_)
    reader_->CloseAcksInChild();
  if (!ring_->MakeInertAfterFork()) {
    static const char kMessage[] =
        "ringtrace: fork child: cannot replace the inherited ring mapping; "
        "do not use the inherited trace writers\n";
    // write(2): async-signal-safe; nothing to do if it fails.
    ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
    (void)ignored;
  }
}

std::unique_ptr<Producer> Producer::Connect(const ProducerOptions& options,
                                            base::Status* status) {
  if (options.drain_request_retry_ms > producer::DrainNotifier::kMaxRetryMs) {
    SetStatus(status, base::ErrStatus("drain_request_retry_ms %u > %u",
                                      options.drain_request_retry_ms,
                                      producer::DrainNotifier::kMaxRetryMs));
    return nullptr;
  }
  producer::ForkHandlers::Install();
  const uint64_t deadline_ms = base::MonotonicMs() + options.connect_timeout_ms;
  base::Status s;
  const int connect_ms = options.connect_timeout_ms > INT32_MAX
                             ? INT32_MAX
                             : static_cast<int>(options.connect_timeout_ms);
  // The same default as ringtraced's and the CLI's (default_socket_paths.h).
  const std::string path = options.socket_path.empty()
                               ? ipc::DefaultProducerSocketPath()
                               : options.socket_path;
  std::unique_ptr<ipc::UnixSocket> socket =
      ipc::UnixSocket::ConnectWithTimeout(path, connect_ms, &s);
  if (!socket) {
    SetStatus(status,
              base::ErrStatus("cannot connect to the ringtrace service at "
                              "'%s' (is ringtraced running?): %s",
                              path.c_str(), s.message().c_str()));
    return nullptr;
  }
  producer::HandshakeResult hello;
  const uint64_t now_ms = base::MonotonicMs();
  const uint32_t hello_ms =
      now_ms >= deadline_ms ? 0 : static_cast<uint32_t>(deadline_ms - now_ms);
  s = producer::Handshake(socket.get(), options, hello_ms, &hello);
  if (!s.ok()) {
    SetStatus(status, base::ErrStatus("ringtrace service at '%s': %s",
                                      path.c_str(), s.message().c_str()));
    return nullptr;
  }

  std::unique_ptr<Producer> p(new Producer());
  p->options_ = options;
  p->producer_id_ = hello.reply.producer_id;
  p->target_buffer_ =
      static_cast<shm_ring::BufferID>(hello.reply.target_buffer);
  p->losses_ = std::make_unique<producer::WriterLossRegistry>();
  p->losses_->AttachSharedArea(hello.region->trailer(),
                               hello.region->trailer_bytes());
  p->transport_ = std::make_unique<producer::SocketDrainTransport>(
      socket->fd(), p->losses_.get());
  producer::DrainNotifier::Options notifier_options;
  notifier_options.read_pos = hello.region->view().read_pos();
  notifier_options.retry_ms = options.drain_request_retry_ms;
  // The fill rule of drain_notifier.h: an eighth of the ring.
  notifier_options.ring_chunks = hello.region->view().geometry().num_chunks;
  notifier_options.publish_threshold_chunks =
      std::max<uint32_t>(1, notifier_options.ring_chunks / 8);
  notifier_options.transport = p->transport_.get();
  p->notifier_ = std::make_unique<producer::DrainNotifier>(notifier_options);
  producer::ProducerRing::Options ring_options;
  ring_options.target_buffer = p->target_buffer_;
  ring_options.policy = options.buffer_exhausted_policy;
  ring_options.stall_timeout_ms = options.stall_timeout_ms;
  ring_options.delegate = p->notifier_.get();
  ring_options.refuse = p->notifier_->writers_refuse_switch();
  ring_options.losses = p->losses_.get();
  p->ring_ = std::make_unique<producer::ProducerRing>(std::move(hello.region),
                                                      ring_options);
  p->socket_ = std::move(socket);
  producer::ServiceReader::Options reader_options;
  reader_options.socket = p->socket_.get();
  reader_options.notifier = p->notifier_.get();
  reader_options.producer = p.get();
  reader_options.ack_timeout_ms = options.disconnect_timeout_ms;
  reader_options.on_disconnect = options.on_disconnect;
  reader_options.losses = p->losses_.get();
  // Registered for the atfork handlers before a reader thread can exist, so
  // a fork() from now on finds the Producer in the list.
  producer::ForkHandlers::Register(p.get());
  p->reader_ = producer::ServiceReader::Create(reader_options, &s);
  if (!p->reader_) {
    SetStatus(status,
              base::ErrStatus("ringtrace producer: %s", s.message().c_str()));
    return nullptr;
  }
  // Watching the connection needs the thread now; otherwise it starts with
  // the first data source.
  if (options.on_disconnect)
    p->reader_->StartThread();
  SetStatus(status, base::OkStatus());
  return p;
}

std::unique_ptr<shm_ring::TraceWriterV2> Producer::NewTraceWriter(
    base::Status* status) {
  return NewWriter(target_buffer_, status);
}

std::unique_ptr<shm_ring::TraceWriterV2> Producer::NewTraceWriter(
    shm_ring::BufferID target_buffer,
    base::Status* status) {
  return NewWriter(target_buffer, status);
}

std::unique_ptr<shm_ring::TraceWriterV2> Producer::NewWriter(
    shm_ring::BufferID target_buffer,
    base::Status* status) {
  std::unique_ptr<shm_ring::TraceWriterV2> writer =
      ring_->NewTraceWriter(target_buffer, status);
  // Shared-owned: the writer keeps this Producer alive (producer.h,
  // "Lifetime"). Owned by a unique_ptr: weak_from_this() is empty.
  if (writer) {
    std::shared_ptr<Producer> self = weak_from_this().lock();
    if (self)
      shm_ring::TraceWriterV2Owner::AttachOwner(writer.get(), std::move(self));
  }
  return writer;
}

base::Status Producer::RegisterDataSource(const std::string& name,
                                          DataSourceHandler* handler) {
  if (inert_after_fork_) {
    return base::ErrStatus(
        "data source '%s': this Producer was inherited across fork()",
        name.c_str());
  }
  return reader_->Register(name, handler, options_.connect_timeout_ms);
}

void Producer::StopDataSources() {
  if (!inert_after_fork_)
    reader_->Stop();
}

bool Producer::connected() const {
  if (inert_after_fork_ || notifier_->disconnected())
    return false;
  // The socket is readable when the service hung up, or sent a message the
  // reader thread has not taken yet.
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
    // Peek without consuming: recv() == 0 is the orderly shutdown; a
    // datagram is the reader thread's.
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
  // Lock-free (usable in a fork child as well).
  const producer::ServiceReaderStats r = reader_->stats();
  s.data_sources_registered = r.data_sources_registered;
  s.categories_published = r.categories_published;
  s.categories_not_published = r.categories_not_published;
  s.instances_started = r.instances_started;
  s.instances_stopped = r.instances_stopped;
  s.instances_stopped_without_request = r.instances_stopped_without_request;
  s.stops_deferred = r.stops_deferred;
  s.deferred_stops_acked = r.deferred_stops_acked;
  s.flushes = r.flushes;
  s.service_protocol_violations = r.service_protocol_violations;
  s.ack_send_failures = r.ack_send_failures;
  s.inert_after_fork = inert_after_fork_;
  return s;
}

const shm_ring::RingGeometry& Producer::geometry() const {
  return ring_->geometry();
}

}  // namespace ringtrace
