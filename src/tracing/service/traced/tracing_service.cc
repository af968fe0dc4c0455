/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/tracing_service.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "src/base/logging.h"
#include "src/tracing/ipc/wire_protocol.h"

namespace ringtrace {
namespace traced {

namespace {

constexpr size_t kFixedPollFds = 2;  // the eventfd, the listener

}  // namespace

TracingService::TracingService(const Options& options) : options_(options) {}

TracingService::~TracingService() {
  if (running_)
    (void)Stop(nullptr);  // nobody to report to
}

base::Status TracingService::Start() {
  if (running_ || core_)
    return base::ErrStatus("the service was already started");
  if (options_.socket_path.empty())
    return base::ErrStatus("no socket path");
  if (options_.out_path.empty())
    return base::ErrStatus("no output file");
  if (options_.hello_timeout_ms == 0 || options_.messages_per_round == 0 ||
      options_.max_pending_connections == 0) {
    return base::ErrStatus(
        "hello timeout, messages per round and pending connections must be "
        "> 0");
  }
  base::Status status;
  std::unique_ptr<ServiceCore> core =
      ServiceCore::Create(options_.core, &status);
  if (!core)
    return status;
  ipc::ScopedFd out_fd(open(options_.out_path.c_str(),
                            O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!out_fd.valid()) {
    return base::ErrStatus("cannot open %s: %s", options_.out_path.c_str(),
                           strerror(errno));
  }
  ipc::ScopedFd wake_fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_fd.valid())
    return base::ErrStatus("eventfd: %s", strerror(errno));
  std::unique_ptr<ipc::UnixSocket> listener =
      ipc::UnixSocket::Listen(options_.socket_path, &status);
  if (!listener)
    return status;

  core_ = std::move(core);
  out_fd_ = std::move(out_fd);
  wake_fd_ = std::move(wake_fd);
  listener_ = std::move(listener);
  start_time_ = Clock::now();
  Publish();
  running_ = true;
  thread_ = std::thread([this] { Run(); });
  return base::OkStatus();
}

base::Status TracingService::Stop(ServiceSummary* summary) {
  if (!running_)
    return base::ErrStatus("the service is not running");
  running_ = false;
  const uint64_t one = 1;
  // An eventfd write of 1 cannot block or fail short of a full counter.
  if (write(wake_fd_.get(), &one, sizeof(one)) != sizeof(one))
    RT_ELOG("cannot wake the service thread: %s", strerror(errno));
  thread_.join();
  listener_.reset();  // unlinks the socket file

  ServiceSummary local;
  ServiceSummary* s = summary ? summary : &local;
  *s = ServiceSummary();
  base::Status status = core_->Finish(out_fd_.get(), &s->export_summary);
  if (status.ok() && fsync(out_fd_.get()) != 0 && errno != EINVAL)
    status = base::ErrStatus("fsync %s: %s", options_.out_path.c_str(),
                             strerror(errno));
  if (close(out_fd_.release()) != 0 && status.ok())
    status = base::ErrStatus("close %s: %s", options_.out_path.c_str(),
                             strerror(errno));
  Publish();
  s->stats = stats();
  s->out_path = options_.out_path;
  s->elapsed_s =
      std::chrono::duration<double>(Clock::now() - start_time_).count();
  return status;
}

ServiceStats TracingService::stats() const {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  return published_;
}

bool TracingService::WaitForStats(
    const std::function<bool(const ServiceStats&)>& pred,
    int timeout_ms) const {
  std::unique_lock<std::mutex> lock(stats_mutex_);
  return stats_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                            [&] { return pred(published_); });
}

void TracingService::Publish() {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  published_.producers = core_->stats();
  published_.connections = conn_stats_;
  stats_cv_.notify_all();
}

int TracingService::NextTimeoutMs(Clock::time_point now) const {
  Clock::time_point next = Clock::time_point::max();
  for (const auto& c : connections_) {
    if (c->producer_id == 0)
      next = std::min(next, c->hello_deadline);
  }
  if (accept_backoff_until_ > now)
    next = std::min(next, accept_backoff_until_);
  if (next == Clock::time_point::max())
    return -1;
  if (next <= now)
    return 0;
  // Rounded up, so the loop never wakes just before a deadline.
  const auto us =
      std::chrono::duration_cast<std::chrono::microseconds>(next - now).count();
  return static_cast<int>(std::min<int64_t>((us + 999) / 1000, 1 << 30));
}

void TracingService::Run() {
  std::vector<pollfd> fds;
  // One iteration per poll round; ends when Stop() signals the eventfd.
  for (;;) {
    Clock::time_point now = Clock::now();
    fds.clear();
    fds.push_back({wake_fd_.get(), POLLIN, 0});
    // fd -1: poll ignores the entry (listener in back-off).
    fds.push_back(
        {accept_backoff_until_ > now ? -1 : listener_->fd(), POLLIN, 0});
    for (const auto& c : connections_)
      fds.push_back({c->socket->fd(), POLLIN, 0});
    const int rc = poll(fds.data(), fds.size(), NextTimeoutMs(now));
    if (rc < 0 && errno != EINTR) {
      // Only EFAULT/EINVAL/ENOMEM: nothing to retry. Stop() still exports.
      RT_ELOG("poll: %s; the service stops accepting", strerror(errno));
      break;
    }
    if (rc > 0 && fds[0].revents != 0)
      break;
    now = Clock::now();
    // Connections accepted below are not in |fds| and wait for next round.
    const size_t polled = fds.size() - kFixedPollFds;
    for (size_t i = 0; rc > 0 && i < polled; ++i) {
      if (fds[kFixedPollFds + i].revents != 0)
        Serve(connections_[i].get());
    }
    if (rc > 0 && fds[1].revents != 0)
      AcceptNew(now);
    for (auto& c : connections_) {
      if (c->socket && c->producer_id == 0 && now >= c->hello_deadline) {
        ++conn_stats_.hello_timeouts;
        Close(c.get());
      }
    }
    connections_.erase(std::remove_if(connections_.begin(), connections_.end(),
                                      [](const std::unique_ptr<Connection>& c) {
                                        return !c->socket;
                                      }),
                       connections_.end());
    Publish();
  }
  // The producers' rings stay registered: ServiceCore::Finish() gives each
  // its final drain.
  connections_.clear();
  Publish();
}

void TracingService::AcceptNew(Clock::time_point now) {
  for (uint32_t i = 0; i < kAcceptsPerRound; ++i) {
    base::Status status;
    std::unique_ptr<ipc::UnixSocket> socket = listener_->Accept(&status);
    if (!socket) {
      if (!status.ok()) {
        RT_ELOG("%s", status.message().c_str());
        accept_backoff_until_ =
            now + std::chrono::milliseconds(kAcceptBackoffMs);
      }
      return;
    }
    ++conn_stats_.connections_accepted;
    const size_t pending = static_cast<size_t>(
        std::count_if(connections_.begin(), connections_.end(),
                      [](const std::unique_ptr<Connection>& c) {
                        return c->socket && c->producer_id == 0;
                      }));
    ipc::PeerCredentials creds;
    if (pending >= options_.max_pending_connections ||
        !socket->GetPeerCredentials(&creds)) {
      ++conn_stats_.connections_refused;
      continue;  // |socket| closes
    }
    std::unique_ptr<Connection> c(new Connection());
    c->socket = std::move(socket);
    c->identity.pid = static_cast<int32_t>(creds.pid);
    c->identity.uid = static_cast<int32_t>(creds.uid);
    c->hello_deadline =
        now + std::chrono::milliseconds(options_.hello_timeout_ms);
    connections_.push_back(std::move(c));
  }
}

void TracingService::Serve(Connection* c) {
  uint8_t buf[ipc::kMaxMessageSize];
  for (uint32_t i = 0; i < options_.messages_per_round && c->socket; ++i) {
    size_t size = 0;
    ipc::ScopedFd fd;
    base::Status status;
    switch (c->socket->Receive(buf, sizeof(buf), &size, &fd, &status)) {
      case ipc::UnixSocket::RecvResult::kWouldBlock:
        return;
      case ipc::UnixSocket::RecvResult::kClosed:
        ++conn_stats_.peer_disconnects;
        Close(c);
        return;
      case ipc::UnixSocket::RecvResult::kError:
        RT_LOG("pid %d: %s; disconnecting", c->identity.pid,
               status.message().c_str());
        ++conn_stats_.violations_refused_datagram;
        Close(c);
        return;
      case ipc::UnixSocket::RecvResult::kMessage:
        break;
    }
    if (fd.valid()) {
      RT_LOG("pid %d: fd attached to a producer message; disconnecting",
             c->identity.pid);
      ++conn_stats_.violations_fd_attached;
      Close(c);  // |fd| closes with the scope
      return;
    }
    ipc::Message msg;
    status = ipc::DecodeMessage(buf, size, &msg);
    if (!status.ok()) {
      RT_LOG("pid %d: %s; disconnecting", c->identity.pid,
             status.message().c_str());
      ++conn_stats_.violations_malformed;
      Close(c);
      return;
    }
    switch (msg.type) {
      case ipc::MessageType::kHello:
        if (c->producer_id != 0) {
          RT_LOG("pid %d: second Hello; disconnecting", c->identity.pid);
          ++conn_stats_.violations_second_hello;
          Close(c);
          return;
        }
        HandleHello(c, msg.hello);
        break;
      case ipc::MessageType::kDrainRequest:
        if (c->producer_id == 0) {
          RT_LOG("pid %d: DrainRequest before Hello; disconnecting",
                 c->identity.pid);
          ++conn_stats_.violations_early_drain_request;
          Close(c);
          return;
        }
        core_->OnDrainRequest(c->producer_id);
        break;
      case ipc::MessageType::kHelloReply:
        RT_LOG("pid %d: sent a HelloReply; disconnecting", c->identity.pid);
        ++conn_stats_.violations_unexpected_type;
        Close(c);
        return;
    }
  }
}

void TracingService::HandleHello(Connection* c, const ipc::HelloMsg& hello) {
  const ServiceCore::Admission admission = core_->Admit(hello, c->identity);
  uint8_t buf[ipc::kMaxMessageSize];
  const size_t size = ipc::EncodeHelloReply(admission.reply, buf, sizeof(buf));
  RT_CHECK(size > 0);  // our own reply always encodes
  const base::Status status = c->socket->Send(buf, size, admission.ring_fd);
  const bool ok = admission.reply.status == ipc::HelloStatus::kOk;
  if (ok)
    c->producer_id =
        static_cast<trace_buffer::ProducerID>(admission.reply.producer_id);
  if (!status.ok()) {
    RT_LOG("pid %d: cannot send the HelloReply: %s", c->identity.pid,
           status.message().c_str());
    ++conn_stats_.send_errors;
    Close(c);
    return;
  }
  if (!ok) {
    RT_LOG("pid %d: Hello refused: %s", c->identity.pid,
           ipc::HelloStatusToString(admission.reply.status));
    Close(c);
  }
}

void TracingService::Close(Connection* c) {
  if (c->producer_id != 0)
    core_->RemoveProducer(c->producer_id);
  c->producer_id = 0;
  c->socket.reset();
}

std::string FormatSummary(const ServiceSummary& s) {
  const ProducerStats& p = s.stats.producers;
  const ConnectionStats& c = s.stats.connections;
  const ExportSummary& e = s.export_summary;
  const auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  char text[1024];
  const int n = snprintf(
      text, sizeof(text),
      "ringtraced: %.2f s, %llu producers seen (%llu Hellos refused: %llu "
      "version, %llu too many, %llu service error), %llu connections, %llu "
      "protocol violations, %llu Hello timeouts. %llu packets exported "
      "(%llu bytes) to %s (%llu bytes). Loss: %llu packets overwritten in "
      "the buffer, %llu chunks discarded by the buffer, %llu dropped by the "
      "drainer, %llu invalid packets, %llu packets marked "
      "previous_packet_dropped; drainer: %llu chunks, %llu holes, %llu "
      "rings with a protocol error.\n",
      s.elapsed_s, u(p.producers_seen),
      u(p.hellos_rejected_version + p.hellos_rejected_too_many +
        p.hellos_rejected_service_error),
      u(p.hellos_rejected_version), u(p.hellos_rejected_too_many),
      u(p.hellos_rejected_service_error), u(c.connections_accepted),
      u(c.protocol_violations()), u(c.hello_timeouts),
      u(e.export_stats.packets_exported),
      u(e.export_stats.packet_bytes_exported), s.out_path.c_str(),
      u(e.file_size), u(e.packets_overwritten),
      u(e.buffer_stats.chunks_discarded),
      u(e.drainer_stats.chunks_unroutable +
        e.drainer_stats.chunks_rejected_by_sink),
      u(e.export_stats.invalid_packets), u(e.export_stats.packets_with_loss),
      u(e.drainer_stats.reader.chunks_emitted), u(e.drainer_stats.reader.holes),
      u(e.drainer_stats.reader.protocol_errors));
  return std::string(text, static_cast<size_t>(std::max(
                               0, std::min<int>(n, sizeof(text) - 1))));
}

}  // namespace traced
}  // namespace ringtrace
