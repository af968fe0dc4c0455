/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/tracing.h"

#include <chrono>
#include <condition_variable>
#include <thread>
#include <utility>
#include <vector>

#include "ringtrace/logging.h"
#include "src/base/thread_annotations.h"
#include "src/base/time.h"
#include "src/tracing/ipc/default_socket_paths.h"
#include "src/tracing/ipc/wire_protocol.h"

namespace ringtrace {

namespace {
// A connection that lived at least this long resets the backoff; one lost
// sooner (a service that accepts and hangs up at once) keeps growing it, so
// no pair of ringtraced and app can spin.
constexpr uint64_t kStableConnectionMs = 1000;

// |options| with an empty socket path resolved to the default, once: every
// reconnect and log line names the same socket.
TracingOptions WithSocketPath(TracingOptions options) {
  if (options.producer.socket_path.empty())
    options.producer.socket_path = ipc::DefaultProducerSocketPath();
  return options;
}
}  // namespace

class Tracing::Impl {
 public:
  // |generation| is the owning Tracing's (read inline by generation()).
  Impl(const TracingOptions& options, std::atomic<uint64_t>* generation)
      : options_(WithSocketPath(options)), generation_(*generation) {}
  ~Impl();

  base::Status RegisterDataSource(const std::string& name,
                                  DataSourceHandler* handler);
  base::Status Start();
  std::shared_ptr<Producer> GetProducer(uint64_t* generation) const;
  uint64_t WaitForConnection(uint64_t after_generation, int timeout_ms);
  bool connected() const;
  TracingStats stats() const;

 private:
  struct DataSource {
    std::string name;
    DataSourceHandler* handler;
  };

  void Run();
  // One connection attempt; on success installs the connection and
  // registers the data sources. False if it did not connect.
  bool TryConnect();
  // on_disconnect of the connection of |generation| (its reader thread).
  void OnDisconnect(uint64_t generation);
  // Stops the data sources of |producer| and drops the reference, on the
  // calling thread (never a reader thread, never under mutex_: it joins
  // the reader, which may be waiting for mutex_ in OnDisconnect).
  static void Release(std::shared_ptr<Producer> producer);

  const TracingOptions options_;
  // Tracing::generation_: the release store installing a connection pairs
  // with Tracing::generation()'s acquire load.
  std::atomic<uint64_t>& generation_;

  mutable base::Mutex mutex_;
  std::condition_variable cv_;
  bool started_ RT_GUARDED_BY(mutex_) = false;
  bool stop_ RT_GUARDED_BY(mutex_) = false;
  std::vector<DataSource> data_sources_ RT_GUARDED_BY(mutex_);
  // The current connection (null while disconnected) and a lost one the
  // thread has yet to release: a reference is held until its reader thread
  // was joined, so the last reference never drops on that thread.
  std::shared_ptr<Producer> producer_ RT_GUARDED_BY(mutex_);
  std::shared_ptr<Producer> lost_ RT_GUARDED_BY(mutex_);
  TracingStats stats_ RT_GUARDED_BY(mutex_);
  std::thread thread_;
};

Tracing::Tracing(const TracingOptions& options)
    : impl_(std::make_unique<Impl>(options, &generation_)) {}

Tracing::~Tracing() = default;

base::Status Tracing::RegisterDataSource(const std::string& name,
                                         DataSourceHandler* handler) {
  return impl_->RegisterDataSource(name, handler);
}

base::Status Tracing::Start() {
  return impl_->Start();
}

std::shared_ptr<Producer> Tracing::GetProducer(uint64_t* generation) const {
  return impl_->GetProducer(generation);
}

uint64_t Tracing::WaitForConnection(uint64_t after_generation, int timeout_ms) {
  return impl_->WaitForConnection(after_generation, timeout_ms);
}

bool Tracing::connected() const {
  return impl_->connected();
}

TracingStats Tracing::stats() const {
  return impl_->stats();
}

Tracing::Impl::~Impl() {
  {
    base::MutexLock lock(&mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
  std::shared_ptr<Producer> current;
  std::shared_ptr<Producer> lost;
  {
    base::MutexLock lock(&mutex_);
    current = std::move(producer_);
    lost = std::move(lost_);
  }
  Release(std::move(lost));
  Release(std::move(current));
}

base::Status Tracing::Impl::RegisterDataSource(const std::string& name,
                                               DataSourceHandler* handler) {
  if (!ipc::IsValidDataSourceName(name)) {
    return base::ErrStatus(
        "invalid data source name '%s' (1..%zu printable ASCII characters)",
        name.c_str(), ipc::kMaxDataSourceNameSize);
  }
  if (!handler)
    return base::ErrStatus("data source '%s' without a handler", name.c_str());
  std::shared_ptr<Producer> producer;
  {
    base::MutexLock lock(&mutex_);
    for (const DataSource& ds : data_sources_) {
      if (ds.name == name)
        return base::ErrStatus("data source '%s' is already registered",
                               name.c_str());
    }
    if (data_sources_.size() >= ipc::kMaxDataSourcesPerProducer) {
      return base::ErrStatus("more than %zu data sources",
                             ipc::kMaxDataSourcesPerProducer);
    }
    data_sources_.push_back(DataSource{name, handler});
    // A connection installed from now on registers it from data_sources_;
    // the current one (if any) is told here.
    producer = producer_;
  }
  if (producer) {
    const base::Status s = producer->RegisterDataSource(name, handler);
    if (!s.ok()) {
      // The connection is being lost (the Producer disconnected itself);
      // the next one registers the data source.
      base::MutexLock lock(&mutex_);
      ++stats_.register_failures;
    }
  }
  return base::OkStatus();
}

base::Status Tracing::Impl::Start() {
  if (options_.min_backoff_ms == 0 ||
      options_.max_backoff_ms < options_.min_backoff_ms) {
    return base::ErrStatus("TracingOptions: backoff %u..%u ms",
                           options_.min_backoff_ms, options_.max_backoff_ms);
  }
  base::MutexLock lock(&mutex_);
  if (started_)
    return base::OkStatus();
  started_ = true;
  thread_ = std::thread([this] { Run(); });
  return base::OkStatus();
}

std::shared_ptr<Producer> Tracing::Impl::GetProducer(
    uint64_t* generation) const {
  base::MutexLock lock(&mutex_);
  if (generation) {
    // relaxed: the mutex orders it with the installation.
    *generation = generation_.load(std::memory_order_relaxed);
  }
  return producer_;
}

uint64_t Tracing::Impl::WaitForConnection(uint64_t after_generation,
                                          int timeout_ms) {
  base::MutexLock lock(&mutex_);
  const auto reached = [&] {
    mutex_.AssertHeld();
    return producer_ &&
           generation_.load(std::memory_order_relaxed) > after_generation;
  };
  cv_.wait_for(lock.native(), std::chrono::milliseconds(timeout_ms), reached);
  return reached() ? generation_.load(std::memory_order_relaxed) : 0;
}

bool Tracing::Impl::connected() const {
  base::MutexLock lock(&mutex_);
  return producer_ != nullptr;
}

TracingStats Tracing::Impl::stats() const {
  base::MutexLock lock(&mutex_);
  return stats_;
}

void Tracing::Impl::Release(std::shared_ptr<Producer> producer) {
  if (!producer)
    return;
  // Every started instance gets OnStop, the reader thread is joined: no
  // handler runs after this. The Producer itself lives on while writers
  // hold it.
  producer->StopDataSources();
  producer.reset();
}

bool Tracing::Impl::TryConnect() {
  uint64_t generation = 0;
  {
    base::MutexLock lock(&mutex_);
    ++stats_.connect_attempts;
    // Only this thread installs connections: the next one is this.
    generation = stats_.connections + 1;
  }
  ProducerOptions options = options_.producer;
  options.on_disconnect = [this, generation] { OnDisconnect(generation); };
  base::Status status;
  std::unique_ptr<Producer> connected = Producer::Connect(options, &status);
  if (!connected) {
    base::MutexLock lock(&mutex_);
    ++stats_.connect_failures;
    return false;
  }
  std::shared_ptr<Producer> producer(std::move(connected));
  std::vector<DataSource> sources;
  {
    base::MutexLock lock(&mutex_);
    producer_ = producer;
    sources = data_sources_;
    ++stats_.connections;
    // release: pairs with generation()'s acquire load.
    generation_.store(generation, std::memory_order_release);
  }
  cv_.notify_all();
  for (const DataSource& ds : sources) {
    if (!producer->RegisterDataSource(ds.name, ds.handler).ok()) {
      // The Producer shut the connection down; its reader reports the loss.
      base::MutexLock lock(&mutex_);
      ++stats_.register_failures;
      break;
    }
  }
  return true;
}

void Tracing::Impl::OnDisconnect(uint64_t generation) {
  {
    base::MutexLock lock(&mutex_);
    ++stats_.disconnects;
    // relaxed: under the mutex, which orders it with the installation.
    if (producer_ && generation_.load(std::memory_order_relaxed) == generation)
      lost_ = std::move(producer_);  // released by the thread, not here
  }
  cv_.notify_all();
}

void Tracing::Impl::Run() {
  uint32_t backoff_ms = options_.min_backoff_ms;
  bool first_failure_logged = false;
  for (;;) {
    {
      base::MutexLock lock(&mutex_);
      if (stop_)
        return;
    }
    if (!TryConnect()) {
      if (!first_failure_logged) {
        RT_LOG(
            "ringtrace: no tracing service at '%s' yet; retrying in the "
            "background",
            options_.producer.socket_path.c_str());
        first_failure_logged = true;
      }
    } else {
      first_failure_logged = false;
      const uint64_t connected_ms = base::MonotonicMs();
      std::shared_ptr<Producer> lost;
      {
        base::MutexLock lock(&mutex_);
        cv_.wait(lock.native(), [&] {
          mutex_.AssertHeld();
          return stop_ || lost_ != nullptr;
        });
        if (stop_)
          return;  // the destructor releases the connection
        lost = std::move(lost_);
      }
      Release(std::move(lost));
      if (base::MonotonicMs() - connected_ms >= kStableConnectionMs)
        backoff_ms = options_.min_backoff_ms;
      RT_LOG("ringtrace: the tracing service went away; reconnecting");
    }
    base::MutexLock lock(&mutex_);
    cv_.wait_for(lock.native(), std::chrono::milliseconds(backoff_ms), [&] {
      mutex_.AssertHeld();
      return stop_;
    });
    backoff_ms = backoff_ms > options_.max_backoff_ms / 2
                     ? options_.max_backoff_ms
                     : backoff_ms * 2;
  }
}

}  // namespace ringtrace
