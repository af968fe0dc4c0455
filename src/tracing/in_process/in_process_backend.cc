/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/in_process_backend.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <utility>
#include <vector>

#include "ringtrace/logging.h"
#include "ringtrace/track_event_data_source.h"
#include "src/tracing/service/traced/tracing_service.h"
#include "src/tracing/track_event/track_event_instances.h"

namespace ringtrace {

namespace {

constexpr char kDirectoryPrefix[] = "ringtrace-inproc-";
constexpr char kProducerSocket[] = "producer.sock";
constexpr char kConsumerSocket[] = "consumer.sock";

// The parents to try for the private directory, in order (the file comment
// of the header).
std::vector<std::string> DirectoryParents(const std::string& chosen) {
  if (!chosen.empty())
    return {chosen};
  std::vector<std::string> parents;
  const char* runtime_dir = getenv("XDG_RUNTIME_DIR");
  if (runtime_dir != nullptr && runtime_dir[0] == '/')
    parents.emplace_back(runtime_dir);
  parents.emplace_back("/tmp");
  return parents;
}

// Makes the private directory (mkdtemp: a new name, mode 0700) under the
// first parent where the socket paths fit in sun_path and mkdtemp succeeds.
base::Status MakePrivateDirectory(const std::string& chosen_parent,
                                  std::string* dir) {
  base::Status last = base::ErrStatus("no directory to create");
  for (const std::string& parent : DirectoryParents(chosen_parent)) {
    std::string templ = parent + "/" + kDirectoryPrefix + "XXXXXX";
    // The longer socket name, its '/' and the terminating NUL.
    if (templ.size() + 1 + sizeof(kConsumerSocket) >
        sizeof(sockaddr_un::sun_path)) {
      last = base::ErrStatus(
          "in-process backend: the socket paths under %s would be longer "
          "than a Unix socket path may be",
          parent.c_str());
      continue;
    }
    if (mkdtemp(&templ[0]) == nullptr) {
      last = base::ErrStatus("in-process backend: mkdtemp %s: %s",
                             templ.c_str(), strerror(errno));
      continue;
    }
    // mkdtemp asks for 0700 through the umask; the sockets must be
    // reachable by this user whatever the umask is.
    if (chmod(templ.c_str(), 0700) != 0) {
      last = base::ErrStatus("in-process backend: chmod %s: %s", templ.c_str(),
                             strerror(errno));
      (void)rmdir(templ.c_str());
      continue;
    }
    *dir = templ;
    return base::OkStatus();
  }
  return last;
}

base::Status CheckOptions(const InProcessBackendOptions& options) {
  if (options.max_sessions == 0 || options.max_sessions > 1024)
    return base::ErrStatus(
        "in-process backend: max_sessions must be in [1, 1024]");
  if (options.max_buffer_bytes == 0)
    return base::ErrStatus("in-process backend: max_buffer_bytes is 0");
  if (options.drain_period_ms == 0 || options.drain_period_ms > 60000)
    return base::ErrStatus(
        "in-process backend: drain_period_ms must be in [1, 60000]");
  if (options.connect_timeout_ms <= 0)
    return base::ErrStatus("in-process backend: connect_timeout_ms <= 0");
  return base::OkStatus();
}

}  // namespace

// The directory, the service and the app's connection to it. The members
// are torn down in the destructor's explicit order.
class InProcessBackend::Impl {
 public:
  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  ~Impl() {
    // The connection first: every instance gets OnStop (the writers' losses
    // go with the acks). The Producer lives on while threads' writers hold
    // it; this thread's are released here, so that, if they were the last,
    // its final loss report reaches the service and its ring is drained
    // before the service stops. (Another thread's writer released later
    // finds the service gone: the Producer logs that its final report could
    // not be sent; no session is left to report into.)
    tracing_.reset();
    track_event::ReleaseStoppedInstanceWriters();
    // Then the service: each live session is stopped and written; the
    // listeners remove their own socket files.
    if (service_started_) {
      const base::Status status = service_->Stop(nullptr);
      if (!status.ok())
        RT_ELOG("in-process backend: %s", status.message().c_str());
    }
    service_.reset();
    track_event_.reset();
    // Empty unless someone else put a file there: then it stays, with the
    // directory (never remove what we did not create).
    if (!directory_.empty() && rmdir(directory_.c_str()) != 0) {
      RT_ELOG("in-process backend: cannot remove %s: %s", directory_.c_str(),
              strerror(errno));
    }
  }

  base::Status Start(const InProcessBackendOptions& options) {
    base::Status status =
        MakePrivateDirectory(options.parent_directory, &directory_);
    if (!status.ok())
      return status;
    producer_socket_ = directory_ + "/" + kProducerSocket;
    consumer_socket_ = directory_ + "/" + kConsumerSocket;
    status = StartService(options);
    if (!status.ok())
      return status;
    return Connect(options);
  }

  base::Status RegisterDataSource(const std::string& name,
                                  DataSourceHandler* handler) {
    const base::Status status = tracing_->RegisterDataSource(name, handler);
    if (!status.ok())
      return status;
    // Serialized by Tracing's own refusal of a second name: each call that
    // got here added one data source.
    const uint64_t expected =
        data_sources_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (!WaitForService(expected)) {
      return base::ErrStatus(
          "in-process backend: the service did not get data source '%s' "
          "within %d ms",
          name.c_str(), connect_timeout_ms_);
    }
    return base::OkStatus();
  }

  const std::string& directory() const { return directory_; }
  const std::string& producer_socket() const { return producer_socket_; }
  const std::string& consumer_socket() const { return consumer_socket_; }
  Tracing* tracing() { return tracing_.get(); }

 private:
  base::Status StartService(const InProcessBackendOptions& options) {
    traced::TracingService::Options service_options;
    service_options.socket_path = producer_socket_;
    service_options.consumer_socket_path = consumer_socket_;
    service_options.own_uid_only = true;
    traced::ServiceCore::Options& core = service_options.core;
    core.max_sessions = options.max_sessions;
    core.max_total_buffer_bytes = options.max_buffer_bytes;
    core.drain_tick_ns = uint64_t{options.drain_period_ms} * 1000000;
    // One user: the app's; its limits are the service's.
    core.user_limits.max_sessions = options.max_sessions;
    core.user_limits.max_buffer_bytes = options.max_buffer_bytes;
    core.user_limits.max_consumers = service_options.max_consumers;
    service_.reset(new traced::TracingService(service_options));
    const base::Status status = service_->Start();
    service_started_ = status.ok();
    return status;
  }

  // Connects the app and waits until the service holds the connection and
  // its data sources.
  base::Status Connect(const InProcessBackendOptions& options) {
    TracingOptions tracing_options;
    tracing_options.producer = options.producer;
    tracing_options.producer.socket_path = producer_socket_;
    tracing_options.producer.on_disconnect = nullptr;
    tracing_options.min_backoff_ms = 1;
    tracing_options.max_backoff_ms = 100;
    tracing_.reset(new Tracing(tracing_options));
    connect_timeout_ms_ = options.connect_timeout_ms;
    if (options.register_track_event) {
      track_event_.reset(new track_event::TrackEventDataSource());
      const base::Status status = tracing_->RegisterDataSource(
          track_event::TrackEventDataSource::kName, track_event_.get());
      if (!status.ok())
        return status;
      data_sources_.store(1, std::memory_order_relaxed);
    }
    const base::Status status = tracing_->Start();
    if (!status.ok())
      return status;
    if (tracing_->WaitForConnection(0, connect_timeout_ms_) == 0 ||
        !WaitForService(data_sources_.load(std::memory_order_relaxed))) {
      return base::ErrStatus(
          "in-process backend: the app did not connect to its service within "
          "%d ms",
          connect_timeout_ms_);
    }
    return base::OkStatus();
  }

  // Waits until the service holds a producer and has seen |data_sources|
  // data sources registered.
  bool WaitForService(uint64_t data_sources) {
    return service_->WaitForStats(
        [&](const traced::ServiceStats& s) {
          return s.producers.producers_connected >= 1 &&
                 s.producers.data_sources_seen >= data_sources;
        },
        connect_timeout_ms_);
  }

  std::string directory_;  // empty until made
  std::string producer_socket_;
  std::string consumer_socket_;
  std::unique_ptr<traced::TracingService> service_;
  bool service_started_ = false;
  std::unique_ptr<track_event::TrackEventDataSource> track_event_;
  std::unique_ptr<Tracing> tracing_;
  int connect_timeout_ms_ = 0;
  // The data sources registered through the backend. Relaxed: a count
  // only; the service's stats (under its mutex) are what is waited for.
  std::atomic<uint64_t> data_sources_{0};
};

// static
std::unique_ptr<InProcessBackend> InProcessBackend::Create(
    const InProcessBackendOptions& options,
    base::Status* status) {
  *status = CheckOptions(options);
  if (!status->ok())
    return nullptr;
  auto impl = std::make_unique<Impl>();
  *status = impl->Start(options);
  if (!status->ok())
    return nullptr;  // |impl| undoes what was done
  return std::unique_ptr<InProcessBackend>(
      new InProcessBackend(std::move(impl)));
}

InProcessBackend::InProcessBackend(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

InProcessBackend::~InProcessBackend() = default;

std::unique_ptr<TracingSession> InProcessBackend::NewSession(
    const TracingSessionOptions& options,
    base::Status* status) {
  TracingSessionOptions session_options = options;
  session_options.consumer_socket_path = impl_->consumer_socket();
  session_options.wait_for_data_source_start = true;
  return TracingSession::Connect(session_options, status);
}

std::unique_ptr<TracingSession> InProcessBackend::NewSession(
    base::Status* status) {
  return NewSession(TracingSessionOptions(), status);
}

base::Status InProcessBackend::RegisterDataSource(const std::string& name,
                                                  DataSourceHandler* handler) {
  return impl_->RegisterDataSource(name, handler);
}

Tracing* InProcessBackend::tracing() {
  return impl_->tracing();
}
const std::string& InProcessBackend::directory() const {
  return impl_->directory();
}
const std::string& InProcessBackend::producer_socket_path() const {
  return impl_->producer_socket();
}
const std::string& InProcessBackend::consumer_socket_path() const {
  return impl_->consumer_socket();
}

}  // namespace ringtrace
