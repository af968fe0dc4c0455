/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/tracing_session.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/ringtrace/ipc/consumer_port.pb.h"
#include "src/base/scoped_fd.h"
#include "src/tracing/consumer/consumer_client.h"
#include "src/tracing/consumer/trace_config_text.h"
#include "src/tracing/ipc/consumer_protocol.h"
#include "src/tracing/ipc/default_socket_paths.h"

namespace ringtrace {

namespace {

// The largest trace ReadTraceBlocking() reads into memory.
constexpr uint64_t kMaxTraceInMemory = uint64_t{4} << 30;

// How often the session's thread looks for the service's end event while
// the session runs and no call is waiting.
constexpr int kEventPollMs = 100;

}  // namespace

// The state behind the public class. |mutex_| serializes every use of the
// client and guards the state; the worker thread runs the callback forms
// and, while a session runs, watches for the service's end event and for
// the connection breaking. Abort() alone takes no lock: it shuts down
// |abort_fd_|, a duplicate of the client's socket taken at construction
// (valid even after the client closed its own), which wakes any call
// blocked on the socket.
class TracingSession::Impl {
 public:
  Impl(std::unique_ptr<consumer::ConsumerClient> client,
       const TracingSessionOptions& options)
      : client_(std::move(client)),
        stop_timeout_ms_(options.stop_timeout_ms > 0 ? options.stop_timeout_ms
                                                     : options.timeout_ms),
        wait_for_start_(options.wait_for_data_source_start),
        abort_fd_(fcntl(client_->fd(), F_DUPFD_CLOEXEC, 0)) {
    worker_ = std::thread([this] { Work(); });
  }

  ~Impl() {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      quit_ = true;
    }
    cv_.notify_all();
    worker_.join();
    // Stops a session still running; its trace is written.
    (void)StopBlocking();
  }

  base::Status Setup(const perfetto::protos::TraceConfig& config,
                     int output_fd) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (set_up_ || started_)
      return base::ErrStatus("the session was set up already");
    base::Status status = ipc::ValidateTraceConfig(config);
    if (!status.ok())
      return status;
    if (output_fd >= 0) {
      status = ipc::CheckTraceFileFd(output_fd);
      if (!status.ok())
        return status;
      out_fd_.reset(fcntl(output_fd, F_DUPFD_CLOEXEC, 0));
      if (!out_fd_.valid())
        return base::ErrStatus("dup: %s", strerror(errno));
      in_memory_ = false;
    } else {
      out_fd_.reset(memfd_create("ringtrace-session", MFD_CLOEXEC));
      if (!out_fd_.valid())
        return base::ErrStatus("memfd_create: %s", strerror(errno));
      in_memory_ = true;
    }
    config_ = config;
    set_up_ = true;
    return base::OkStatus();
  }

  base::Status StartBlocking() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!set_up_)
      return base::ErrStatus("Setup() first");
    if (started_)
      return base::ErrStatus("the session was started already");
    warnings_.clear();
    base::Status status = client_->EnableTracing(config_, out_fd_.get(),
                                                 &session_id_, &warnings_);
    if (!status.ok())
      return status;
    started_ = true;
    cv_.notify_all();  // the worker watches for the end from now on
    if (!wait_for_start_)
      return base::OkStatus();
    // The start barrier (tracing_session.h): each producer's reader handles
    // the StartDataSource before the Flush sent after it.
    status = client_->Flush(session_id_, 0);
    if (!status.ok()) {
      return base::ErrStatus(
          "the session started, but its data sources did not confirm: %s",
          status.message().c_str());
    }
    return base::OkStatus();
  }

  base::Status AttachBlocking(const std::string& key) {
    base::Status status;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (set_up_ || started_)
        return base::ErrStatus("the session was set up already");
      status = client_->Attach(key, /*probe=*/false, &session_id_);
      if (!status.ok())
        return status;
      set_up_ = true;
      started_ = true;
      in_memory_ = false;  // the trace goes to the detacher's file
      // An end while detached follows the answer at once: take it if it is
      // there already (else the worker or the next call does).
      (void)WaitForEventLocked(0);
      NoteBrokenLocked();
      cv_.notify_all();
    }
    CallOnStopIfEnded();
    return status;
  }

  base::Status DetachBlocking(const std::string& key) {
    base::Status status;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      status = CheckRunning();
      if (status.ok() && in_memory_) {
        status = base::ErrStatus(
            "a session without an output fd cannot be detached");
      }
      if (status.ok()) {
        status = client_->Detach(session_id_, key);
        NoteBrokenLocked();
      }
      if (status.ok())
        detached_ = true;
    }
    CallOnStopIfEnded();
    return status;
  }

  base::Status IsDetachedBlocking(const std::string& key, bool* detached) {
    base::Status status;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      status = client_->IsDetached(key, detached);
      NoteBrokenLocked();
    }
    CallOnStopIfEnded();
    return status;
  }

  base::Status QueryServiceStateBlocking(protos::ServiceState* state) {
    base::Status status;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      status = client_->QueryServiceState(state);
      // Its round trip may have read the session's end.
      TakeEvents();
      NoteBrokenLocked();
    }
    CallOnStopIfEnded();
    return status;
  }

  void Abort() {
    // Both directions: a call blocked in poll/recv wakes with end-of-file,
    // and the service sees this consumer hang up and frees its session.
    if (abort_fd_.valid())
      shutdown(abort_fd_.get(), SHUT_RDWR);
    // The worker marks the session ended (the connection broke) at its
    // next look (kEventPollMs); so does any call, at once.
  }

  uint64_t session_id() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return session_id_;
  }

  base::Status FlushBlocking(uint32_t timeout_ms) {
    base::Status status;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      status = CheckRunning();
      if (status.ok()) {
        status = client_->Flush(session_id_, timeout_ms);
        TakeEvents();
        NoteBrokenLocked();
      }
    }
    CallOnStopIfEnded();
    return status;
  }

  base::Status StopBlocking() {
    base::Status status;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (detached_)
        return base::ErrStatus("the session was detached");
      if (!started_ || ended_)
        return base::OkStatus();
      TakeEvents();
      NoteBrokenLocked();
      if (!ended_) {
        protos::SessionSummary summary;
        status =
            client_->DisableTracing(session_id_, stop_timeout_ms_, &summary);
        if (status.ok()) {
          SetSummary(summary, "", "");
        } else {
          // It may have ended meanwhile: its event says so.
          TakeEvents();
          if (ended_)
            status = base::OkStatus();
          else
            NoteBrokenLocked();
        }
      }
    }
    CallOnStopIfEnded();
    return status;
  }

  base::Status WaitForEndBlocking(int timeout_ms, bool* ended) {
    base::Status status;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      *ended = ended_;
      if (detached_)
        return base::ErrStatus("the session was detached");
      if (!started_ || ended_)
        return base::OkStatus();
      status = WaitForEventLocked(timeout_ms);
      NoteBrokenLocked();
      *ended = ended_;
    }
    CallOnStopIfEnded();
    return status;
  }

  base::Status ReadTraceBlocking(std::string* trace) {
    std::lock_guard<std::mutex> lock(mutex_);
    trace->clear();
    if (!in_memory_)
      return base::ErrStatus("the trace went to the caller's file");
    if (!ended_)
      return base::ErrStatus("the session has not ended");
    if (!summary_.error.empty()) {
      return base::ErrStatus("the session has no whole trace: %s",
                             summary_.error.c_str());
    }
    struct stat st = {};
    if (fstat(out_fd_.get(), &st) != 0)
      return base::ErrStatus("fstat: %s", strerror(errno));
    if (st.st_size < 0 || static_cast<uint64_t>(st.st_size) > kMaxTraceInMemory)
      return base::ErrStatus(
          "the trace is larger than %llu bytes",
          static_cast<unsigned long long>(kMaxTraceInMemory));
    trace->resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < trace->size()) {
      const ssize_t n = pread(out_fd_.get(), &(*trace)[done],
                              trace->size() - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        trace->clear();
        return base::ErrStatus("reading the trace: %s",
                               n < 0 ? strerror(errno) : "short read");
      }
      done += static_cast<size_t>(n);
    }
    return base::OkStatus();
  }

  base::Status GetTraceStatsBlocking(std::string* trace_stats) {
    base::Status status;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      status = CheckRunning();
      if (status.ok()) {
        status = client_->GetTraceStats(session_id_, trace_stats);
        TakeEvents();
        NoteBrokenLocked();
      }
    }
    CallOnStopIfEnded();
    return status;
  }

  base::Status CloneBlocking(int fd) {
    base::Status status;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      status = CheckRunning();
      if (status.ok()) {
        status = client_->CloneSession(session_id_, fd);
        TakeEvents();
        NoteBrokenLocked();
      }
    }
    CallOnStopIfEnded();
    return status;
  }

  void Post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_all();
  }

  void SetOnStopCallback(std::function<void()> on_stop) {
    std::lock_guard<std::mutex> lock(mutex_);
    on_stop_ = std::move(on_stop);
  }

  std::vector<std::string> warnings() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return warnings_;
  }
  TracingSessionSummary summary() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return summary_;
  }
  bool started() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return started_;
  }
  bool ended() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return ended_;
  }

 private:
  base::Status CheckRunning() {
    TakeEvents();
    NoteBrokenLocked();
    if (detached_)
      return base::ErrStatus("the session was detached");
    if (!started_)
      return base::ErrStatus("the session was not started");
    if (ended_) {
      return summary_.connection_lost
                 ? base::ErrStatus("%s", summary_.error.c_str())
                 : base::ErrStatus("the session has ended");
    }
    return base::OkStatus();
  }

  // The end events queued so far (mutex_ held). An event of another
  // session is not this object's (it owns one).
  void TakeEvents() {
    protos::ConsumerResponse event;
    while (client_->TakeEvent(&event)) {
      if (!event.tracing_ended() || ended_ || detached_ ||
          event.session_id() != session_id_) {
        continue;
      }
      const bool failed = event.has_ok() && !event.ok();
      std::string error;
      if (failed) {
        error = event.error().empty() ? "the service failed the session"
                                      : event.error();
      }
      SetSummary(event.summary(),
                 event.error().empty() ? "ended by the service" : event.error(),
                 error);
    }
  }

  // A running session whose connection broke is over: the service frees
  // the session of a consumer that is gone, and nothing more can be
  // learned about it (mutex_ held).
  void NoteBrokenLocked() {
    const base::Status& broken = client_->broken();
    if (broken.ok() || !started_ || ended_ || detached_)
      return;
    SetSummary(protos::SessionSummary(), "", broken.message());
    summary_.connection_lost = true;
  }

  base::Status WaitForEventLocked(int timeout_ms) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(timeout_ms);
    // At least one read, without blocking when |timeout_ms| is 0.
    for (bool first = true;; first = false) {
      TakeEvents();
      if (ended_)
        return base::OkStatus();
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0 && !first)
        return base::OkStatus();
      bool got = false;
      base::Status status = client_->WaitForEvent(
          static_cast<int>(std::max<int64_t>(left, 0)), &got);
      if (!status.ok())
        return status;
    }
  }

  void SetSummary(const protos::SessionSummary& s,
                  const std::string& why,
                  const std::string& error) {
    ended_ = true;
    summary_ = TracingSessionSummary();
    summary_.packets_written = s.packets_written();
    summary_.bytes_written = s.bytes_written();
    summary_.packets_lost = s.packets_lost();
    summary_.duration_ms = s.duration_ms();
    summary_.ended_by_service = why;
    summary_.error = error;
    summary_.compressed = s.has_uncompressed_bytes();
    summary_.uncompressed_bytes = s.uncompressed_bytes();
    summary_.compression_cpu_ns = s.compression_cpu_ns();
  }

  std::function<void()> TakeOnStop() {
    std::function<void()> f = std::move(on_stop_);
    on_stop_ = nullptr;
    return f;
  }

  // Calls the on-stop callback (once, without the lock) if the session
  // ended.
  void CallOnStopIfEnded() {
    std::function<void()> on_stop;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (ended_)
        on_stop = TakeOnStop();
    }
    if (on_stop)
      on_stop();
  }

  // The worker: the posted tasks in order; between them, while a session
  // runs, a bounded wait for the service's end event (it calls on_stop).
  void Work() {
    for (;;) {
      std::function<void()> task;
      std::function<void()> on_stop;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait_for(lock, std::chrono::milliseconds(kEventPollMs),
                     [&] { return quit_ || !tasks_.empty(); });
        if (!tasks_.empty()) {
          task = std::move(tasks_.front());
          tasks_.pop_front();
        } else if (quit_) {
          return;
        } else if (started_ && !ended_ && !detached_) {
          // Non-blocking: what the socket holds now (a hang-up included).
          (void)WaitForEventLocked(0);
          NoteBrokenLocked();
          if (ended_)
            on_stop = TakeOnStop();
        }
      }
      if (task)
        task();
      if (on_stop)
        on_stop();
    }
  }

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::unique_ptr<consumer::ConsumerClient> client_;
  const int stop_timeout_ms_;  // StopBlocking()'s wait
  const bool wait_for_start_;
  const base::ScopedFd abort_fd_;
  perfetto::protos::TraceConfig config_;
  base::ScopedFd out_fd_;
  bool in_memory_ = false;
  bool set_up_ = false;
  bool started_ = false;
  bool ended_ = false;
  bool detached_ = false;  // DetachBlocking(): the session is not ours
  bool quit_ = false;
  uint64_t session_id_ = 0;
  std::vector<std::string> warnings_;
  TracingSessionSummary summary_;
  std::function<void()> on_stop_;
  std::deque<std::function<void()>> tasks_;
  std::thread worker_;  // last: started when everything above exists
};

// static
std::unique_ptr<TracingSession> TracingSession::Connect(
    const TracingSessionOptions& options,
    base::Status* status) {
  if (options.timeout_ms <= 0) {
    *status = base::ErrStatus("timeout_ms must be > 0");
    return nullptr;
  }
  if (options.stop_timeout_ms < 0) {
    *status = base::ErrStatus("stop_timeout_ms must be >= 0");
    return nullptr;
  }
  const std::string path = options.consumer_socket_path.empty()
                               ? ipc::DefaultConsumerSocketPath()
                               : options.consumer_socket_path;
  std::unique_ptr<consumer::ConsumerClient> client =
      consumer::ConsumerClient::Connect(path, options.timeout_ms, status);
  if (!client)
    return nullptr;
  client->set_timeout_ms(options.timeout_ms);
  *status = base::OkStatus();
  return std::unique_ptr<TracingSession>(
      new TracingSession(std::make_unique<Impl>(std::move(client), options)));
}

TracingSession::TracingSession(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
TracingSession::~TracingSession() = default;

base::Status TracingSession::Setup(const perfetto::protos::TraceConfig& config,
                                   int output_fd) {
  return impl_->Setup(config, output_fd);
}

base::Status TracingSession::SetupFromText(const std::string& text,
                                           int output_fd) {
  perfetto::protos::TraceConfig config;
  base::Status status =
      consumer::ParseTextTraceConfig(text, "<config>", &config);
  if (!status.ok())
    return status;
  return impl_->Setup(config, output_fd);
}

base::Status TracingSession::StartBlocking() {
  return impl_->StartBlocking();
}
std::vector<std::string> TracingSession::start_warnings() const {
  return impl_->warnings();
}
base::Status TracingSession::FlushBlocking(uint32_t timeout_ms) {
  return impl_->FlushBlocking(timeout_ms);
}
base::Status TracingSession::StopBlocking() {
  return impl_->StopBlocking();
}
base::Status TracingSession::WaitForEndBlocking(int timeout_ms, bool* ended) {
  return impl_->WaitForEndBlocking(timeout_ms, ended);
}
base::Status TracingSession::ReadTraceBlocking(std::string* trace) {
  return impl_->ReadTraceBlocking(trace);
}
base::Status TracingSession::GetTraceStatsBlocking(std::string* trace_stats) {
  return impl_->GetTraceStatsBlocking(trace_stats);
}
base::Status TracingSession::CloneBlocking(int fd) {
  return impl_->CloneBlocking(fd);
}

void TracingSession::Start(DoneCallback done) {
  Impl* impl = impl_.get();
  impl->Post([impl, done] { done(impl->StartBlocking()); });
}
void TracingSession::Flush(uint32_t timeout_ms, DoneCallback done) {
  Impl* impl = impl_.get();
  impl->Post(
      [impl, timeout_ms, done] { done(impl->FlushBlocking(timeout_ms)); });
}
void TracingSession::Stop(DoneCallback done) {
  Impl* impl = impl_.get();
  impl->Post([impl, done] { done(impl->StopBlocking()); });
}
void TracingSession::SetOnStopCallback(std::function<void()> on_stop) {
  impl_->SetOnStopCallback(std::move(on_stop));
}

TracingSessionSummary TracingSession::summary() const {
  return impl_->summary();
}
bool TracingSession::started() const {
  return impl_->started();
}
bool TracingSession::ended() const {
  return impl_->ended();
}

uint64_t TracingSession::session_id() const {
  return impl_->session_id();
}
base::Status TracingSession::QueryServiceStateBlocking(
    protos::ServiceState* state) {
  return impl_->QueryServiceStateBlocking(state);
}
base::Status TracingSession::DetachBlocking(const std::string& key) {
  return impl_->DetachBlocking(key);
}
base::Status TracingSession::AttachBlocking(const std::string& key) {
  return impl_->AttachBlocking(key);
}
base::Status TracingSession::IsDetachedBlocking(const std::string& key,
                                                bool* detached) {
  return impl_->IsDetachedBlocking(key, detached);
}
void TracingSession::Abort() {
  impl_->Abort();
}

}  // namespace ringtrace
