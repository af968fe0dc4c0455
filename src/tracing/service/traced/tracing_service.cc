/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/tracing_service.h"

#include "protos/ringtrace/ipc/consumer_port.pb.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "ringtrace/logging.h"
#include "src/tracing/ipc/wire_protocol.h"

namespace ringtrace {
namespace traced {

namespace {

// Indices in the poll set; the connections follow.
constexpr size_t kWakePollFd = 0;      // Stop()
constexpr size_t kSnapshotPollFd = 1;  // Snapshot()
constexpr size_t kListenerPollFd = 2;
constexpr size_t kStoppedRingsPollFd = 3;  // ProducerTable::stopped_rings_fd
constexpr size_t kConsumerListenerPollFd = 4;
constexpr size_t kFixedPollFds = 5;

// Adds 1 to eventfd |fd|. A write of 1 cannot block (EFD_NONBLOCK) or fail
// short of a full counter (2^64 - 2 wake-ups without a read).
void SignalEventFd(int fd) {
  const uint64_t one = 1;
  if (write(fd, &one, sizeof(one)) != sizeof(one))
    RT_ELOG("cannot wake the service thread: %s", strerror(errno));
}

}  // namespace

perfetto::protos::TraceConfig DefaultOutConfig(
    uint32_t buffer_kb,
    trace_buffer::TraceBufferV2::OverwritePolicy fill_policy) {
  perfetto::protos::TraceConfig config;
  perfetto::protos::TraceConfig::BufferConfig* buffer = config.add_buffers();
  buffer->set_size_kb(buffer_kb);
  buffer->set_fill_policy(
      fill_policy == trace_buffer::TraceBufferV2::OverwritePolicy::kOverwrite
          ? perfetto::protos::TraceConfig::BufferConfig::RING_BUFFER
          : perfetto::protos::TraceConfig::BufferConfig::DISCARD);
  perfetto::protos::DataSourceConfig* ds =
      config.add_data_sources()->mutable_config();
  ds->set_name("track_event");
  ds->set_target_buffer(0);
  return config;
}

TracingService::TracingService(const Options& options) : options_(options) {}

TracingService::~TracingService() {
  if (running_)
    (void)Stop(nullptr);  // nobody to report to
}

base::PendingFileOptions TracingService::OutputFileOptions(
    bool follow_symlink) const {
  base::PendingFileOptions options;
  options.follow_symlink = follow_symlink;
  options.follow_hint = "--out-symlink follow writes through it";
  // /dev/null, /dev/stdout, a FIFO: written in place.
  options.allow_direct = true;
  options.group = options_.out_group;
  return options;
}

base::Status TracingService::Start() {
  if (running_ || core_)
    return base::ErrStatus("the service was already started");
  if (options_.socket_path.empty())
    return base::ErrStatus("no socket path");
  if (options_.out_path.empty() && options_.consumer_socket_path.empty())
    return base::ErrStatus("no output file and no consumer socket");
  if (!options_.consumer_socket_path.empty() &&
      (options_.consumer_socket_path == options_.socket_path ||
       options_.consumer_socket_path == options_.out_path)) {
    return base::ErrStatus("the consumer socket %s is another path's too",
                           options_.consumer_socket_path.c_str());
  }
  if (options_.max_consumers == 0)
    return base::ErrStatus("max consumers must be > 0");
  if (options_.hello_timeout_ms == 0 || options_.messages_per_round == 0 ||
      options_.max_pending_connections == 0 ||
      options_.max_pending_per_uid == 0 || options_.snapshot_timeout_ms == 0) {
    return base::ErrStatus(
        "hello timeout, messages per round, pending connections and snapshot "
        "timeout must be > 0");
  }
  base::Status status;
  std::unique_ptr<ServiceCore> core =
      ServiceCore::Create(options_.core, &status);
  if (!core)
    return status;
  if (options_.out_path == options_.socket_path)
    return base::ErrStatus("the socket and the output file are both %s",
                           options_.out_path.c_str());
  std::unique_ptr<base::PendingFile> out_file;
  if (!options_.out_path.empty()) {
    status = base::PendingFile::Create(
        options_.out_path, OutputFileOptions(options_.follow_symlink),
        &out_file);
    if (!status.ok())
      return status;
    // The session shares the file (and its offset) through its own fd.
    base::ScopedFd session_fd(fcntl(out_file->fd(), F_DUPFD_CLOEXEC, 0));
    if (!session_fd.valid())
      return base::ErrStatus("dup: %s", strerror(errno));
    SessionId id = 0;
    status = core->sessions()->StartDefaultSession(
        options_.out_config, std::move(session_fd), Clock::now(), &id);
    if (!status.ok())
      return base::ErrStatus("the --out session: %s", status.message().c_str());
  }
  base::ScopedFd wake_fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  base::ScopedFd snapshot_fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_fd.valid() || !snapshot_fd.valid())
    return base::ErrStatus("eventfd: %s", strerror(errno));
  // The consumer socket listens first: once the producer socket accepts
  // (what ringtraced's users wait for), both do.
  std::unique_ptr<ipc::UnixSocket> consumer_listener;
  if (!options_.consumer_socket_path.empty()) {
    consumer_listener =
        ipc::UnixSocket::Listen(options_.consumer_socket_path,
                                options_.consumer_socket_options, &status);
    if (!consumer_listener)
      return status;
  }
  std::unique_ptr<ipc::UnixSocket> listener = ipc::UnixSocket::Listen(
      options_.socket_path, options_.socket_options, &status);
  if (!listener)
    return status;

  core_ = std::move(core);
  consumer_listener_ = std::move(consumer_listener);
  out_file_ = std::move(out_file);
  wake_fd_ = std::move(wake_fd);
  snapshot_fd_ = std::move(snapshot_fd);
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
  SignalEventFd(wake_fd_.get());
  thread_.join();
  listener_.reset();  // unlinks the socket file
  consumer_listener_.reset();

  ServiceSummary local;
  ServiceSummary* s = summary ? summary : &local;
  *s = ServiceSummary();
  core_->set_service_counters(MakeServiceCounters());  // thread joined
  // Sessions were ended and written by the service thread (the default one
  // too); this removes the producers and stops the drain thread.
  ring_drainer::RingStats drainer_stats;
  base::Status status = core_->Finish(&drainer_stats);
  if (out_file_) {
    const ServiceCore::DefaultSessionEnd& end =
        core_->sessions()->default_session_end();
    RT_CHECK(end.ended);  // EndAllSessions ran
    s->export_summary = end.summary;
    const base::Status written =
        FinishOutput(out_file_.get(), end.status, &s->written);
    if (status.ok())
      status = written;
    out_file_.reset();
  }
  s->export_summary.drainer_stats = drainer_stats;
  Publish();
  s->stats = stats();
  s->out_path = options_.out_path;
  s->elapsed_s =
      std::chrono::duration<double>(Clock::now() - start_time_).count();
  return status;
}

base::Status TracingService::Snapshot(const std::string& path,
                                      ServiceSummary* summary) {
  if (!running_)
    return base::ErrStatus("snapshot %s: the service is not running",
                           path.c_str());
  if (path.empty())
    return base::ErrStatus("snapshot: no file name");
  uint64_t id = 0;
  {
    base::MutexLock lock(&snapshot_mutex_);
    if (snapshot_.done != snapshot_.requested) {
      return base::ErrStatus(
          "snapshot %s: the previous one (%s) is still being written",
          path.c_str(), snapshot_.path.c_str());
    }
    id = ++snapshot_.requested;
    snapshot_.path = path;
  }
  SignalEventFd(snapshot_fd_.get());

  base::Status status;
  ExportSummary export_summary;
  {
    base::MutexLock lock(&snapshot_mutex_);
    if (!snapshot_cv_.wait_for(
            lock.native(),
            std::chrono::milliseconds(options_.snapshot_timeout_ms), [&] {
              snapshot_mutex_.AssertHeld();
              return snapshot_.done == id;
            })) {
      return base::ErrStatus(
          "snapshot %s: the service thread did not finish it within %u ms "
          "(it may still complete)",
          path.c_str(), options_.snapshot_timeout_ms);
    }
    status = snapshot_.status;
    export_summary = snapshot_.summary;
  }
  if (summary) {
    *summary = ServiceSummary();
    summary->stats = stats();  // published before the answer
    summary->export_summary = export_summary;
    summary->out_path = path;
    summary->written = status.ok();
    summary->elapsed_s =
        std::chrono::duration<double>(Clock::now() - start_time_).count();
  }
  return status;
}

void TracingService::ServeSnapshotRequest() {
  uint64_t id = 0;
  std::string path;
  {
    base::MutexLock lock(&snapshot_mutex_);
    if (snapshot_.done == snapshot_.requested)
      return;  // a wake-up left over from a request already served
    id = snapshot_.requested;
    path = snapshot_.path;
  }
  if (snapshot_hook_for_testing_)
    snapshot_hook_for_testing_();
  ExportSummary export_summary;
  core_->set_service_counters(MakeServiceCounters());
  const base::Status status = WriteSnapshot(path, &export_summary);
  if (status.ok())
    ++snapshots_written_;
  else
    ++snapshot_errors_;
  base::MutexLock lock(&snapshot_mutex_);
  snapshot_.done = id;
  snapshot_.status = status;
  snapshot_.summary = export_summary;
  // Published while the request is already marked done (lock order:
  // snapshot_mutex_, then stats_mutex_ inside Publish()): whoever sees this
  // snapshot counted in the stats may request the next one at once, and the
  // caller woken below reads stats() that count it.
  Publish();
  snapshot_cv_.notify_all();
}

base::Status TracingService::WriteSnapshot(const std::string& path,
                                           ExportSummary* summary) {
  // The trace file is replaced by Stop() only; its temporary file is ours.
  struct stat out_st = {};
  struct stat path_st = {};
  if (out_file_ &&
      (path == options_.out_path || path == out_file_->final_path() ||
       path == out_file_->temp_path() ||
       (fstat(out_file_->fd(), &out_st) == 0 &&
        stat(path.c_str(), &path_st) == 0 && out_st.st_dev == path_st.st_dev &&
        out_st.st_ino == path_st.st_ino))) {
    return base::ErrStatus("snapshot %s: that is the trace file", path.c_str());
  }
  std::unique_ptr<base::PendingFile> file;
  base::Status status = base::PendingFile::Create(
      path, OutputFileOptions(/*follow_symlink=*/false), &file);
  if (!status.ok())
    return base::ErrStatus("snapshot: %s", status.message().c_str());
  bool written = false;
  const SessionId id = core_->session_table()->default_session();
  status = FinishOutput(
      file.get(),
      id != 0 ? core_->sessions()->CloneSession(id, file->fd(), summary)
              : base::ErrStatus("no --out session runs (it has ended)"),
      &written);
  if (!status.ok())
    return base::ErrStatus("snapshot: %s", status.message().c_str());
  return status;
}

// static
base::Status TracingService::FinishOutput(base::PendingFile* file,
                                          base::Status export_status,
                                          bool* written) {
  *written = false;
  if (!export_status.ok()) {
    // The partial file goes away with |file|'s owner; the message says
    // where the bytes were going, not which fd.
    return base::ErrStatus("cannot write %s: %s; the trace was not written",
                           file->path().c_str(),
                           export_status.message().c_str());
  }
  base::Status status = file->Commit();
  *written = file->committed();
  return status;
}

void TracingService::FailPendingSnapshot() {
  base::MutexLock lock(&snapshot_mutex_);
  if (snapshot_.done == snapshot_.requested)
    return;
  ++snapshot_errors_;  // published by Run()'s last Publish()
  snapshot_.done = snapshot_.requested;
  snapshot_.status = base::ErrStatus("snapshot %s: the service stopped first",
                                     snapshot_.path.c_str());
  snapshot_.summary = ExportSummary();
  snapshot_cv_.notify_all();
}

ServiceStats TracingService::stats() const {
  base::MutexLock lock(&stats_mutex_);
  return published_;
}

bool TracingService::WaitForStats(
    const std::function<bool(const ServiceStats&)>& pred,
    int timeout_ms) const {
  base::MutexLock lock(&stats_mutex_);
  return stats_cv_.wait_for(lock.native(),
                            std::chrono::milliseconds(timeout_ms), [&] {
                              stats_mutex_.AssertHeld();
                              return pred(published_);
                            });
}

void TracingService::Publish() {
  base::MutexLock lock(&stats_mutex_);
  published_.producers = core_->producers()->stats();
  published_.sessions = core_->sessions()->session_stats();
  published_.sessions_active =
      static_cast<uint32_t>(core_->session_table()->num_sessions());
  published_.connections = conn_stats_;
  published_.snapshots_written = snapshots_written_;
  published_.snapshot_errors = snapshot_errors_;
  stats_cv_.notify_all();
}

int TracingService::NextTimeoutMs(Clock::time_point now) const {
  Clock::time_point next = Clock::time_point::max();
  for (const auto& c : connections_) {
    if (IsPending(*c))
      next = std::min(next, c->hello_deadline);
  }
  next = std::min(next, core_->sessions()->NextDeadline());
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

void TracingService::ServeQueuedBeforeStop() {
  // What producers sent before the stop (their loss reports, the final
  // report of one that just disconnected) is read before Finish() removes
  // them, so the trace's TraceStats has it. Bounded per connection, so a
  // flooding producer cannot hold the stop back.
  constexpr int kRounds = 64;
  for (auto& c : connections_) {
    for (int round = 0;
         round < kRounds && c->socket && !c->consumer && c->producer_id != 0;
         ++round) {
      Serve(c.get());
    }
  }
}

void TracingService::Run() {
  std::vector<pollfd> fds;
  // Stop() signalled wake_fd_: the sessions were told to stop, and the loop
  // goes on serving their producers' acks until they ended or this passed.
  bool stopping = false;
  Clock::time_point stop_deadline = Clock::time_point::max();
  // One iteration per poll round; ends once stopping and every session
  // ended, or the grace passed.
  for (;;) {
    Clock::time_point now = Clock::now();
    fds.clear();
    fds.push_back({wake_fd_.get(), POLLIN, 0});      // kWakePollFd
    fds.push_back({snapshot_fd_.get(), POLLIN, 0});  // kSnapshotPollFd
    // kListenerPollFd; fd -1: poll ignores the entry (listener in back-off).
    fds.push_back(
        {accept_backoff_until_ > now ? -1 : listener_->fd(), POLLIN, 0});
    fds.push_back({core_->producers()->stopped_rings_fd(), POLLIN, 0});
    // kConsumerListenerPollFd (-1 without a consumer socket, or in back-off).
    fds.push_back({!consumer_listener_ || accept_backoff_until_ > now
                       ? -1
                       : consumer_listener_->fd(),
                   POLLIN, 0});
    for (const auto& c : connections_)
      fds.push_back({c->socket->fd(), POLLIN, 0});
    int timeout_ms = NextTimeoutMs(now);
    if (stopping) {
      const int grace_left = static_cast<int>(std::max<int64_t>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(
                 stop_deadline - now)
                     .count() +
                 1));
      timeout_ms =
          timeout_ms < 0 ? grace_left : std::min(timeout_ms, grace_left);
    }
    const int rc = poll(fds.data(), fds.size(), timeout_ms);
    if (rc < 0 && errno != EINTR) {
      // Only EFAULT/EINVAL/ENOMEM: nothing to retry. Stop() still exports.
      RT_ELOG("poll: %s; the service stops accepting", strerror(errno));
      break;
    }
    now = Clock::now();
    if (rc > 0 && fds[kWakePollFd].revents != 0 && !stopping) {
      uint64_t count = 0;  // resets the eventfd: it is polled on
      if (read(wake_fd_.get(), &count, sizeof(count)) < 0 && errno != EAGAIN)
        RT_ELOG("wake eventfd: %s", strerror(errno));
      stopping = true;
      stop_deadline = now + std::chrono::milliseconds(options_.stop_grace_ms);
      // What producers sent before the stop is read before any session
      // that needs no ack ends at once; the others' stops go out with this
      // round's DispatchCore().
      ServeQueuedBeforeStop();
      core_->set_service_counters(MakeServiceCounters());
      core_->sessions()->StopAllSessions(now);
    }
    // Connections accepted below are not in |fds| and wait for next round.
    const size_t polled = fds.size() - kFixedPollFds;
    for (size_t i = 0; rc > 0 && i < polled; ++i) {
      if (fds[kFixedPollFds + i].revents == 0 || !connections_[i]->socket)
        continue;
      if (connections_[i]->consumer)
        ServeConsumer(connections_[i].get());
      else
        Serve(connections_[i].get());
    }
    // After the connections: what they sent before the request (a
    // DrainRequest, an EOF and its final drain) is in the snapshot.
    if (rc > 0 && fds[kSnapshotPollFd].revents != 0) {
      uint64_t count = 0;  // resets the eventfd; the slot holds the request
      if (read(snapshot_fd_.get(), &count, sizeof(count)) < 0 &&
          errno != EAGAIN) {
        RT_ELOG("snapshot eventfd: %s", strerror(errno));
      }
      ServeSnapshotRequest();
    }
    if (rc > 0 && fds[kStoppedRingsPollFd].revents != 0)
      DisconnectStoppedProducers();
    if (rc > 0 && fds[kListenerPollFd].revents != 0)
      AcceptNew(now);
    if (rc > 0 && fds[kConsumerListenerPollFd].revents != 0)
      AcceptConsumers();
    for (auto& c : connections_) {
      if (IsPending(*c) && now >= c->hello_deadline) {
        ++conn_stats_.hello_timeouts;
        Close(c.get());
      }
    }
    // Last in the round: whatever the round made the core owe (an answer,
    // a command, an event of a session that ended) goes out before poll(2)
    // may sleep.
    core_->sessions()->AdvanceSessions(Clock::now());
    DispatchCore();
    connections_.erase(std::remove_if(connections_.begin(), connections_.end(),
                                      [](const std::unique_ptr<Connection>& c) {
                                        return !c->socket;
                                      }),
                       connections_.end());
    Publish();
    if (stopping && (core_->session_table()->num_sessions() == 0 ||
                     Clock::now() >= stop_deadline)) {
      break;
    }
  }
  ServeQueuedBeforeStop();
  // Every session left (its data sources did not all ack within the grace)
  // is written before the connections close (a consumer that closes is not
  // one that hung up): its consumer gets tracing_ended. The traces'
  // TraceStats carry the connection counters as of now.
  core_->set_service_counters(MakeServiceCounters());
  core_->sessions()->EndAllSessions(Clock::now());
  DispatchCore();
  // The producers' rings stay registered (EndAllSessions gave each its
  // final drain); ServiceCore::Finish() removes them.
  connections_.clear();
  FailPendingSnapshot();
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
    base::ClientIdentity creds;
    if (!socket->GetPeerCredentials(&creds)) {
      RT_ELOG("cannot read a new connection's credentials: %s; closing it",
              strerror(errno));
      ++conn_stats_.connections_refused;
      continue;  // |socket| closes
    }
    if (options_.own_uid_only && static_cast<uid_t>(creds.uid) != geteuid()) {
      ++conn_stats_.connections_refused;
      const uint64_t n = ++refusals_per_uid_[static_cast<uint32_t>(creds.uid)];
      if ((n & (n - 1)) == 0) {  // the first, then every power of two
        RT_LOG(
            "refused a connection from pid %d uid %u: this service admits "
            "its own uid only; %llu refused for this uid so far",
            static_cast<int>(creds.pid), static_cast<unsigned>(creds.uid),
            static_cast<unsigned long long>(n));
      }
      continue;  // |socket| closes
    }
    if (!AdmitPending(creds))
      continue;
    std::unique_ptr<Connection> c(new Connection());
    c->socket = std::move(socket);
    c->identity = creds;
    c->hello_deadline =
        now + std::chrono::milliseconds(options_.hello_timeout_ms);
    connections_.push_back(std::move(c));
  }
}

bool TracingService::AdmitPending(const base::ClientIdentity& creds) {
  size_t pending = 0;
  size_t pending_of_uid = 0;
  for (const auto& c : connections_) {
    if (!IsPending(*c))
      continue;
    ++pending;
    if (c->identity.uid == creds.uid)
      ++pending_of_uid;
  }
  const bool per_uid = pending_of_uid >= options_.max_pending_per_uid;
  if (!per_uid && pending < options_.max_pending_connections)
    return true;
  ++conn_stats_.connections_refused;
  if (per_uid)
    ++conn_stats_.connections_refused_per_uid;
  const uint64_t n = ++refusals_per_uid_[static_cast<uint32_t>(creds.uid)];
  if ((n & (n - 1)) == 0) {  // the first, then every power of two
    RT_LOG(
        "refused a connection from pid %d uid %u: %zu of its connections "
        "(limit %u) and %zu in all (limit %u) owe their Hello; %llu refused "
        "for this uid so far",
        static_cast<int>(creds.pid), static_cast<unsigned>(creds.uid),
        pending_of_uid, options_.max_pending_per_uid, pending,
        options_.max_pending_connections, static_cast<unsigned long long>(n));
  }
  return false;
}

void TracingService::DisconnectStoppedProducers() {
  for (trace_buffer::ProducerID id :
       core_->producers()->TakeStoppedProducers()) {
    for (auto& c : connections_) {
      if (!c->socket || c->producer_id != id)
        continue;
      RT_LOG(
          "pid %d (producer %u): its ring broke the ring protocol and is no "
          "longer read; disconnecting",
          c->identity.pid, static_cast<unsigned>(id));
      ++conn_stats_.producers_disconnected_ring_error;
      Close(c.get());
    }
  }
}

ServiceCounters TracingService::MakeServiceCounters() const {
  ServiceCounters counters;
  counters.connections_refused = conn_stats_.connections_refused;
  counters.connections_refused_per_uid =
      conn_stats_.connections_refused_per_uid;
  counters.hello_timeouts = conn_stats_.hello_timeouts;
  counters.protocol_violations = conn_stats_.protocol_violations();
  counters.producers_disconnected_ring_error =
      conn_stats_.producers_disconnected_ring_error;
  return counters;
}

void TracingService::Serve(Connection* c) {
  // A producer message is never longer: a longer datagram is refused whole
  // (and DecodeMessage bounds each type by its layout).
  if (producer_buf_.size() != ipc::kMaxProducerDatagramSize)
    producer_buf_.resize(ipc::kMaxProducerDatagramSize);
  uint8_t* const buf = producer_buf_.data();
  for (uint32_t i = 0; i < options_.messages_per_round && c->socket; ++i) {
    size_t size = 0;
    base::ScopedFd fd;
    base::Status status;
    const ipc::UnixSocket::RecvResult result =
        c->socket->Receive(buf, producer_buf_.size(), &size, &fd, &status);
    switch (result) {
      case ipc::UnixSocket::RecvResult::kWouldBlock:
        return;
      case ipc::UnixSocket::RecvResult::kClosed:
        ++conn_stats_.peer_disconnects;
        Close(c);
        return;
      case ipc::UnixSocket::RecvResult::kTooLong:
      case ipc::UnixSocket::RecvResult::kTooManyFds:
      case ipc::UnixSocket::RecvResult::kError:
        RT_LOG("pid %d: %s; disconnecting", c->identity.pid,
               status.message().c_str());
        if (result == ipc::UnixSocket::RecvResult::kTooLong)
          ++conn_stats_.violations_oversized_datagram;
        else if (result == ipc::UnixSocket::RecvResult::kTooManyFds)
          ++conn_stats_.violations_too_many_fds;
        else
          ++conn_stats_.receive_errors;
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
        core_->producers()->OnDrainRequest(c->producer_id);
        if (msg.drain_request.has_loss_report)
          core_->OnLossReport(c->producer_id, msg.drain_request);
        break;
      case ipc::MessageType::kRegisterDataSource:
      case ipc::MessageType::kDataSourceStopped:
      case ipc::MessageType::kFlushAck:
      case ipc::MessageType::kDataSourceCategories:
        if (!HandleDataSourceMessage(c, msg))
          return;  // closed
        break;
      case ipc::MessageType::kHelloReply:
      case ipc::MessageType::kStartDataSource:
      case ipc::MessageType::kStopDataSource:
      case ipc::MessageType::kFlush:
        RT_LOG("pid %d: sent message type %u; disconnecting", c->identity.pid,
               static_cast<unsigned>(msg.type));
        ++conn_stats_.violations_unexpected_type;
        Close(c);
        return;
    }
  }
}

bool TracingService::HandleDataSourceMessage(Connection* c,
                                             const ipc::Message& msg) {
  if (c->producer_id == 0) {
    RT_LOG("pid %d: message type %u before Hello; disconnecting",
           c->identity.pid, static_cast<unsigned>(msg.type));
    ++conn_stats_.violations_unexpected_type;
    Close(c);
    return false;
  }
  const Clock::time_point now = Clock::now();
  base::Status status;
  if (msg.type == ipc::MessageType::kRegisterDataSource) {
    status = core_->RegisterDataSource(c->producer_id,
                                       msg.register_data_source.name, now);
  } else if (msg.type == ipc::MessageType::kDataSourceCategories) {
    status = core_->producers()->DeclareCategories(c->producer_id,
                                                   msg.data_source_categories);
  } else if (msg.type == ipc::MessageType::kDataSourceStopped) {
    status =
        core_->sessions()->OnDataSourceStopped(c->producer_id, msg.id, now);
  } else {
    status = core_->sessions()->OnFlushAck(c->producer_id, msg.id, now);
  }
  if (!status.ok()) {
    RT_LOG("pid %d (producer %u): %s; disconnecting", c->identity.pid,
           static_cast<unsigned>(c->producer_id), status.message().c_str());
    ++conn_stats_.violations_data_source;
    Close(c);
    return false;
  }
  // Instances to start, a stop or a flush that completed.
  DispatchCore();
  return c->socket != nullptr;
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
    // A uid at its limit may retry in a loop: its first refusal is logged,
    // then every power of two.
    const uint64_t n =
        admission.reply.status == ipc::HelloStatus::kUserLimit
            ? ++hello_refusals_per_uid_[static_cast<uint32_t>(c->identity.uid)]
            : 1;
    if ((n & (n - 1)) == 0) {
      RT_LOG("pid %d uid %d: Hello refused (%s): %s", c->identity.pid,
             c->identity.uid, ipc::HelloStatusToString(admission.reply.status),
             admission.refusal.c_str());
    }
    Close(c);
  }
}

void TracingService::Close(Connection* c) {
  if (c->producer_id != 0)
    core_->RemoveProducer(c->producer_id);
  c->producer_id = 0;
  // A consumer that left: its sessions are freed, nothing is written.
  const std::set<SessionId> sessions = std::move(c->sessions);
  c->sessions.clear();
  c->waiting_disable.clear();
  c->socket.reset();
  for (SessionId id : sessions) {
    core_->sessions()->AbortSession(id);
    // Another connection's DisableTracing waiting for it gets the reason.
    protos::ConsumerResponse response;
    response.set_ok(false);
    response.set_error(
        "session " + std::to_string(id) +
        " was freed unwritten: the consumer that started it left");
    AnswerWaitingDisables(id, std::move(response));
  }
}

std::string FormatSummary(const ServiceSummary& s) {
  const ProducerStats& p = s.stats.producers;
  const ConnectionStats& c = s.stats.connections;
  const ExportSummary& e = s.export_summary;
  const auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  char text[2048];
  // The default session's trace (--out): written, failed, or none.
  std::string trace;
  if (s.written) {
    snprintf(text, sizeof(text),
             "%llu packets (%llu bytes) exported to %s "
             "(%llu bytes)",
             u(e.export_stats.packets_exported),
             u(e.export_stats.packet_bytes_exported), s.out_path.c_str(),
             u(e.file_size));
    trace = text;
  } else if (s.out_path.empty()) {
    trace = "No --out trace (sessions are the consumers')";
  } else {
    snprintf(text, sizeof(text),
             "%llu packets (%llu bytes) NOT written (the "
             "export failed; untouched: %s)",
             u(e.export_stats.packets_exported),
             u(e.export_stats.packet_bytes_exported), s.out_path.c_str());
    trace = text;
  }
  const int n = snprintf(
      text, sizeof(text),
      "ringtraced: %.2f s, %llu producers seen (%llu Hellos refused: %llu "
      "version, %llu too many, %llu over a per-user limit, %llu service "
      "error; %llu rings served smaller to fit a budget), %llu connections, "
      "%llu "
      "protocol violations, %llu Hello timeouts, %llu connections refused "
      "(%llu by the per-uid limit), %llu producers disconnected for a ring "
      "protocol error, %llu ProducerIDs reused. %s. Loss: %llu packets "
      "overwritten in "
      "the buffer, %llu chunks discarded by the buffer, %llu dropped by the "
      "drainer, %llu invalid packets, %llu packets marked "
      "previous_packet_dropped; drainer: %llu chunks, %llu holes, %llu "
      "rings with a protocol error. %llu snapshots written, %llu failed.\n",
      s.elapsed_s, u(p.producers_seen),
      u(p.hellos_rejected_version + p.hellos_rejected_too_many +
        p.hellos_rejected_user_limit + p.hellos_rejected_service_error),
      u(p.hellos_rejected_version), u(p.hellos_rejected_too_many),
      u(p.hellos_rejected_user_limit), u(p.hellos_rejected_service_error),
      u(p.rings_clamped_to_budget), u(c.connections_accepted),
      u(c.protocol_violations()), u(c.hello_timeouts), u(c.connections_refused),
      u(c.connections_refused_per_uid), u(c.producers_disconnected_ring_error),
      u(p.producer_ids_reused), trace.c_str(), u(e.packets_overwritten),
      u(e.buffer_stats.chunks_discarded), u(e.drainer_stats.chunks_unroutable),
      u(e.export_stats.invalid_packets), u(e.export_stats.packets_with_loss),
      u(e.drainer_stats.reader.chunks_emitted), u(e.drainer_stats.reader.holes),
      u(e.drainer_stats.reader.protocol_errors), u(s.stats.snapshots_written),
      u(s.stats.snapshot_errors));
  std::string out(text, static_cast<size_t>(
                            std::max(0, std::min<int>(n, sizeof(text) - 1))));
  const SessionStats& ss = s.stats.sessions;
  const int m = snprintf(
      text, sizeof(text),
      "ringtraced: sessions: %llu started, %llu written, %llu write errors, "
      "%llu refused, %llu freed unwritten (consumer left); %llu data source "
      "stop timeouts, %llu flush timeouts; %llu consumer connections (%llu "
      "refused, %llu dropped for not reading, %llu protocol violations).\n",
      u(ss.sessions_started), u(ss.sessions_written),
      u(ss.sessions_write_errors), u(ss.sessions_refused),
      u(ss.sessions_aborted), u(ss.data_source_stop_timeouts),
      u(ss.flush_timeouts), u(c.consumers_accepted), u(c.consumers_refused),
      u(c.consumers_dropped_not_reading), u(c.consumer_violations));
  out.append(text, static_cast<size_t>(
                       std::max(0, std::min<int>(m, sizeof(text) - 1))));
  return out;
}

}  // namespace traced
}  // namespace ringtrace
