/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/producer/service_reader.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <utility>

#include "ringtrace/logging.h"
#include "src/base/time.h"
#include "src/tracing/producer/drain_notifier.h"

namespace ringtrace {

DataSourceHandler::~DataSourceHandler() = default;

std::vector<DataSourceCategory> DataSourceHandler::Categories() const {
  return {};
}

void DataSourceHandler::OnStopRequested(uint32_t instance_id,
                                        std::function<void()> ack) {
  OnStop(instance_id);
  ack();
}

namespace producer {

std::shared_ptr<DeferredStopAcks> DeferredStopAcks::Create(
    base::Status* status) {
  std::shared_ptr<DeferredStopAcks> acks(new DeferredStopAcks());
  acks->fd_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!acks->fd_.valid()) {
    *status = base::ErrStatus("eventfd: %s", strerror(errno));
    return nullptr;
  }
  return acks;
}

void DeferredStopAcks::Ack(uint32_t instance_id) {
  // acquire: pairs with the release stores of Close() and CloseInChild().
  if (closed_.load(std::memory_order_acquire))
    return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    acked_.push_back(instance_id);
  }
  // After the push: a Take() that misses the id is followed by this wake-up.
  // An eventfd write fails only at its counter's maximum, after 2^64 - 2
  // unread acks; the id is queued either way.
  const uint64_t one = 1;
  while (write(fd_.get(), &one, sizeof(one)) < 0 && errno == EINTR) {
  }
}

std::vector<uint32_t> DeferredStopAcks::Take() {
  uint64_t count = 0;
  // Non-blocking: EAGAIN when nothing was written since the last read.
  while (read(fd_.get(), &count, sizeof(count)) < 0 && errno == EINTR) {
  }
  std::vector<uint32_t> out;
  std::lock_guard<std::mutex> lock(mutex_);
  out.swap(acked_);
  return out;
}

void DeferredStopAcks::Close() {
  // release: pairs with the acquire load in Ack().
  closed_.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> lock(mutex_);
  acked_.clear();
}

void DeferredStopAcks::CloseInChild() {
  // release: pairs with the acquire load in Ack() (the child's threads are
  // created after this handler ran).
  closed_.store(true, std::memory_order_release);
}

size_t ToCategoryDescriptors(const std::vector<DataSourceCategory>& categories,
                             size_t room,
                             std::vector<ipc::CategoryDescriptor>* out,
                             std::string* first_left_out) {
  out->clear();
  std::set<std::string> names;
  size_t left_out = 0;
  for (const DataSourceCategory& category : categories) {
    bool ok = out->size() < room && ipc::IsValidCategoryName(category.name) &&
              category.tags.size() <= ipc::kMaxTagsPerCategory &&
              names.count(category.name) == 0;
    for (size_t i = 0; ok && i < category.tags.size(); i++)
      ok = ipc::IsValidCategoryTag(category.tags[i]);
    if (!ok) {
      if (left_out++ == 0 && first_left_out)
        *first_left_out = category.name;
      continue;
    }
    names.insert(category.name);
    ipc::CategoryDescriptor d;
    d.name = category.name;
    d.description =
        category.description.substr(0, ipc::kMaxCategoryDescriptionSize);
    for (char& ch : d.description) {
      if (static_cast<unsigned char>(ch) < 0x20 ||
          static_cast<unsigned char>(ch) > 0x7e) {
        ch = '?';
      }
    }
    d.tags = category.tags;
    out->push_back(std::move(d));
  }
  return left_out;
}

bool SendBefore(int fd,
                const uint8_t* data,
                size_t size,
                uint64_t deadline_ms) {
  for (;;) {
    const ssize_t n = send(fd, data, size, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(size))
      return true;
    if (n >= 0)
      return false;  // SEQPACKET: cannot be short
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS)
      return false;  // the service is gone
    const uint64_t now = base::MonotonicMs();
    if (now >= deadline_ms)
      return false;
    pollfd p = {};
    p.fd = fd;
    p.events = POLLOUT;
    const uint64_t left = deadline_ms - now;
    poll(&p, 1, left > 1000 ? 1000 : static_cast<int>(left));
  }
}

std::unique_ptr<ServiceReader> ServiceReader::Create(const Options& options,
                                                     base::Status* status) {
  RT_CHECK(options.socket);
  std::unique_ptr<ServiceReader> reader(new ServiceReader(options));
  reader->wake_fd_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!reader->wake_fd_.valid()) {
    *status = base::ErrStatus("eventfd: %s", strerror(errno));
    return nullptr;
  }
  reader->acks_ = DeferredStopAcks::Create(status);
  if (!reader->acks_)
    return nullptr;
  *status = base::OkStatus();
  return reader;
}

ServiceReader::ServiceReader(const Options& options) : options_(options) {}

ServiceReader::~ServiceReader() {
  Stop();
}

bool ServiceReader::OnReaderThread() const {
  // thread_ is assigned once, before the thread runs, and never again.
  return std::this_thread::get_id() == thread_.get_id();
}

void ServiceReader::StartThread() {
  base::MutexLock lock(&mutex_);
  StartThreadLocked();
}

void ServiceReader::StartThreadLocked() {
  if (thread_.joinable() || stop_requested_.load(std::memory_order_relaxed))
    return;
  // The thread sees a fully constructed reader: std::thread's constructor
  // synchronizes with the start of the thread function.
  thread_ = std::thread([this] { Run(); });
}

void ServiceReader::Stop() {
  std::lock_guard<std::mutex> stopping(stop_mutex_);
  bool has_thread = false;
  {
    base::MutexLock lock(&mutex_);
    // release: pairs with the acquire load in Run() after poll() returns.
    // Under mutex_, so no thread starts after it (StartThreadLocked).
    stop_requested_.store(true, std::memory_order_release);
    has_thread = thread_.joinable();
    if (!has_thread)
      ended_ = true;  // no thread, so no started instance either
  }
  if (!has_thread)
    return;
  // A handler destroying its own Producer would join this very thread.
  RT_CHECK(!OnReaderThread());
  const uint64_t one = 1;
  // The counter only wakes the poll(); a failed write (impossible for an
  // eventfd below its maximum) would leave the thread to notice the flag
  // on its next wake-up, so it is retried on EINTR only.
  while (write(wake_fd_.get(), &one, sizeof(one)) < 0 && errno == EINTR) {
  }
  thread_.join();
}

void ServiceReader::AbandonInChild() {
  wake_fd_.reset();
}

bool ServiceReader::ended() const {
  base::MutexLock lock(&mutex_);
  return ended_;
}

ServiceReaderStats ServiceReader::stats() const {
  // relaxed: statistics (see the header).
  ServiceReaderStats s;
  s.data_sources_registered = registered_.load(std::memory_order_relaxed);
  s.categories_published =
      categories_published_.load(std::memory_order_relaxed);
  s.categories_not_published =
      categories_not_published_.load(std::memory_order_relaxed);
  s.instances_started = started_count_.load(std::memory_order_relaxed);
  s.instances_stopped = stopped_.load(std::memory_order_relaxed);
  s.instances_stopped_without_request =
      stopped_without_request_.load(std::memory_order_relaxed);
  s.stops_deferred = stops_deferred_.load(std::memory_order_relaxed);
  s.deferred_stops_acked = deferred_acked_.load(std::memory_order_relaxed);
  s.flushes = flushes_.load(std::memory_order_relaxed);
  s.service_protocol_violations = violations_.load(std::memory_order_relaxed);
  s.ack_send_failures = ack_failures_.load(std::memory_order_relaxed);
  return s;
}

base::Status ServiceReader::Register(const std::string& name,
                                     DataSourceHandler* handler,
                                     uint32_t send_timeout_ms) {
  if (!handler)
    return base::ErrStatus("data source '%s' without a handler", name.c_str());
  ipc::RegisterDataSourceMsg msg;
  msg.name = name;
  uint8_t buf[ipc::kMaxProducerMessageSize];
  const size_t size = ipc::EncodeRegisterDataSource(msg, buf, sizeof(buf));
  if (size == 0) {
    return base::ErrStatus(
        "invalid data source name '%s' (1..%zu printable ASCII characters)",
        name.c_str(), ipc::kMaxDataSourceNameSize);
  }
  // Asked before any lock: the handler is the app's code.
  const std::vector<DataSourceCategory> declared = handler->Categories();
  std::vector<ipc::CategoryDescriptor> categories;
  size_t left_out = 0;
  std::string first_left_out;
  {
    base::MutexLock lock(&mutex_);
    if (ended_ || stop_requested_.load(std::memory_order_relaxed)) {
      return base::ErrStatus(
          "data source '%s': the producer is disconnected or stopped",
          name.c_str());
    }
    for (const Source& s : sources_) {
      if (s.name == name)
        return base::ErrStatus("data source '%s' is already registered",
                               name.c_str());
    }
    if (sources_.size() >= ipc::kMaxDataSourcesPerProducer) {
      return base::ErrStatus("more than %zu data sources",
                             ipc::kMaxDataSourcesPerProducer);
    }
    // Recorded before the message goes out: the service's StartDataSource
    // may follow at once, and the reader must know the name then.
    sources_.push_back(Source{name, handler});
    StartThreadLocked();
    left_out = ToCategoryDescriptors(
        declared, ipc::kMaxDeclaredCategoriesPerProducer - categories_reserved_,
        &categories, &first_left_out);
    categories_reserved_ += categories.size();
  }
  registered_.fetch_add(1, std::memory_order_relaxed);
  if (left_out != 0) {
    categories_not_published_.fetch_add(left_out, std::memory_order_relaxed);
    RT_ELOG(
        "ringtrace producer: data source '%s': %zu categories not published "
        "to the service (the first: '%s'): an invalid or repeated name or "
        "tag, more than %zu tags, or more than %zu categories in all",
        name.c_str(), left_out, first_left_out.c_str(),
        ipc::kMaxTagsPerCategory, ipc::kMaxDeclaredCategoriesPerProducer);
  }
  if (!SendBefore(options_.socket->fd(), buf, size,
                  base::MonotonicMs() + send_timeout_ms) ||
      !SendCategories(name, categories, send_timeout_ms)) {
    // The service is gone or does not read: without the registration it
    // would never start the data source; disconnect (the reader sees the
    // hang-up and ends).
    shutdown(options_.socket->fd(), SHUT_RDWR);
    return base::ErrStatus(
        "data source '%s': cannot send RegisterDataSource or its categories "
        "within %u ms; disconnected",
        name.c_str(), send_timeout_ms);
  }
  return base::OkStatus();
}

bool ServiceReader::SendCategories(
    const std::string& name,
    const std::vector<ipc::CategoryDescriptor>& categories,
    uint32_t send_timeout_ms) {
  // Larger than an app thread's messages: not on the stack.
  std::vector<uint8_t> buf(ipc::kMaxDataSourceCategoriesSize);
  for (size_t first = 0; first < categories.size();
       first += ipc::kMaxCategoriesPerMessage) {
    ipc::DataSourceCategoriesMsg msg;
    msg.data_source = name;
    const size_t last =
        std::min(categories.size(), first + ipc::kMaxCategoriesPerMessage);
    msg.categories.assign(categories.begin() + static_cast<ptrdiff_t>(first),
                          categories.begin() + static_cast<ptrdiff_t>(last));
    const size_t size =
        ipc::EncodeDataSourceCategories(msg, buf.data(), buf.size());
    RT_CHECK(size > 0);  // ToCategoryDescriptors kept valid entries only
    if (!SendBefore(options_.socket->fd(), buf.data(), size,
                    base::MonotonicMs() + send_timeout_ms)) {
      return false;
    }
    categories_published_.fetch_add(last - first, std::memory_order_relaxed);
  }
  return true;
}

void ServiceReader::Run() {
  // The largest service message (a StartDataSource) does not belong on the
  // stack.
  std::vector<uint8_t> buf(ipc::kMaxMessageSize);
  bool lost = false;
  for (;;) {
    pollfd fds[3] = {};
    fds[0].fd = options_.socket->fd();
    fds[0].events = POLLIN;
    fds[1].fd = wake_fd_.get();
    fds[1].events = POLLIN;
    fds[2].fd = acks_->fd();
    fds[2].events = POLLIN;
    const int rc = poll(fds, 3, -1);
    // acquire: pairs with the release store in Stop().
    if (stop_requested_.load(std::memory_order_acquire))
      break;
    if (rc < 0) {
      if (errno == EINTR)
        continue;
      RT_ELOG("ringtrace producer: poll: %s; disconnecting", strerror(errno));
      shutdown(options_.socket->fd(), SHUT_RDWR);
      lost = true;
      break;
    }
    if (fds[2].revents != 0 && SendDeferredAcks() == Next::kLost) {
      lost = true;
      break;
    }
    if (fds[0].revents == 0)
      continue;
    if (ReceiveOne(&buf) == Next::kLost) {
      lost = true;
      break;
    }
  }
  Finish(lost);
}

ServiceReader::Next ServiceReader::ReceiveOne(std::vector<uint8_t>* buf) {
  size_t size = 0;
  base::ScopedFd fd;
  base::Status status;
  switch (
      options_.socket->Receive(buf->data(), buf->size(), &size, &fd, &status)) {
    case ipc::UnixSocket::RecvResult::kMessage:
      break;
    case ipc::UnixSocket::RecvResult::kWouldBlock:
      return Next::kContinue;
    case ipc::UnixSocket::RecvResult::kClosed:
      return Next::kLost;
    case ipc::UnixSocket::RecvResult::kTooLong:
    case ipc::UnixSocket::RecvResult::kTooManyFds:
      return Violation(status.message().c_str());
    case ipc::UnixSocket::RecvResult::kError:
      RT_ELOG("ringtrace producer: receiving from the service: %s",
              status.message().c_str());
      shutdown(options_.socket->fd(), SHUT_RDWR);
      return Next::kLost;
  }
  if (fd.valid())
    return Violation("an fd attached to a service message");
  ipc::Message msg;
  status = ipc::DecodeMessage(buf->data(), size, &msg);
  if (!status.ok())
    return Violation(status.message().c_str());
  return Dispatch(msg);
}

ServiceReader::Next ServiceReader::Dispatch(const ipc::Message& msg) {
  switch (msg.type) {
    case ipc::MessageType::kStartDataSource:
      return OnStartDataSource(msg.start_data_source);
    case ipc::MessageType::kStopDataSource:
      return OnStopDataSource(msg.id);
    case ipc::MessageType::kFlush:
      return OnFlush(msg.id);
    case ipc::MessageType::kHello:
    case ipc::MessageType::kHelloReply:
    case ipc::MessageType::kDrainRequest:
    case ipc::MessageType::kRegisterDataSource:
    case ipc::MessageType::kDataSourceStopped:
    case ipc::MessageType::kFlushAck:
    case ipc::MessageType::kDataSourceCategories:
      break;
  }
  return Violation("a message type the service does not send");
}

ServiceReader::Next ServiceReader::OnStartDataSource(
    const ipc::StartDataSourceMsg& start) {
  DataSourceHandler* handler = nullptr;
  {
    base::MutexLock lock(&mutex_);
    size_t index = sources_.size();
    for (size_t i = 0; i < sources_.size(); ++i) {
      if (sources_[i].name == start.name)
        index = i;
    }
    if (index == sources_.size()) {
      lock.Unlock();
      return Violation("StartDataSource for a data source never registered");
    }
    if (stopping_.count(start.instance_id) != 0) {
      lock.Unlock();
      return Violation("StartDataSource for an instance still stopping");
    }
    if (!started_.emplace(start.instance_id, index).second) {
      lock.Unlock();
      return Violation("StartDataSource for an instance already started");
    }
    handler = sources_[index].handler;
  }
  started_count_.fetch_add(1, std::memory_order_relaxed);
  DataSourceInstanceConfig config;
  config.instance_id = start.instance_id;
  config.target_buffer = static_cast<shm_ring::BufferID>(start.target_buffer);
  config.name = start.name;
  config.enabled_categories = start.enabled_categories;
  config.disabled_categories = start.disabled_categories;
  config.enabled_tags = start.enabled_tags;
  config.disabled_tags = start.disabled_tags;
  config.config = start.config;
  config.clear_period_ms = start.clear_period_ms;
  config.producer = options_.producer;
  handler->OnStart(config);
  return Next::kContinue;
}

ServiceReader::Next ServiceReader::OnStopDataSource(uint32_t instance_id) {
  DataSourceHandler* handler = nullptr;
  {
    base::MutexLock lock(&mutex_);
    auto it = started_.find(instance_id);
    if (it == started_.end()) {
      lock.Unlock();
      return Violation("StopDataSource for an instance not started");
    }
    handler = sources_[it->second].handler;
    started_.erase(it);
  }
  stopped_.fetch_add(1, std::memory_order_relaxed);
  stopping_.emplace(instance_id, /*deferred=*/false);
  std::shared_ptr<DeferredStopAcks> acks = acks_;
  handler->OnStopRequested(instance_id,
                           [acks, instance_id] { acks->Ack(instance_id); });
  // An ack given before the handler returned goes out now, as it always
  // did; otherwise the stop is deferred until the ack wakes the thread.
  const Next next = SendDeferredAcks();
  auto it = stopping_.find(instance_id);
  if (it != stopping_.end()) {
    it->second = true;
    stops_deferred_.fetch_add(1, std::memory_order_relaxed);
  }
  return next;
}

ServiceReader::Next ServiceReader::SendDeferredAcks() {
  for (uint32_t instance_id : acks_->Take()) {
    auto it = stopping_.find(instance_id);
    if (it == stopping_.end())
      continue;  // acked twice
    const bool deferred = it->second;
    stopping_.erase(it);
    uint8_t buf[ipc::kMaxProducerMessageSize];
    const size_t size =
        ipc::EncodeDataSourceStopped(instance_id, buf, sizeof(buf));
    RT_CHECK(size > 0);  // instance_id != 0: the decoder checked
    if (deferred)
      deferred_acked_.fetch_add(1, std::memory_order_relaxed);
    if (!SendAck(buf, size))
      return Next::kLost;
  }
  return Next::kContinue;
}

ServiceReader::Next ServiceReader::OnFlush(uint32_t flush_id) {
  std::vector<DataSourceHandler*> handlers;
  {
    base::MutexLock lock(&mutex_);
    for (const Source& s : sources_) {
      bool seen = false;
      for (DataSourceHandler* h : handlers)
        seen = seen || h == s.handler;
      if (!seen)
        handlers.push_back(s.handler);
    }
  }
  flushes_.fetch_add(1, std::memory_order_relaxed);
  for (DataSourceHandler* h : handlers)
    h->OnFlush(flush_id);
  uint8_t buf[ipc::kMaxProducerMessageSize];
  const size_t size = ipc::EncodeFlushAck(flush_id, buf, sizeof(buf));
  RT_CHECK(size > 0);
  return SendAck(buf, size) ? Next::kContinue : Next::kLost;
}

void ServiceReader::SendChangedLosses(uint64_t deadline_ms) {
  if (!options_.losses)
    return;
  // Bounded even while writers keep losing: the service gets the rest with
  // the next DrainRequest.
  constexpr int kMaxLossReportsPerAck = 64;
  for (int i = 0; i < kMaxLossReportsPerAck; i++) {
    ipc::DrainRequestMsg report;
    WriterLossRegistry::Batch batch;
    if (options_.losses->CollectChanged(&report, &batch) == 0)
      return;
    uint8_t buf[ipc::kMaxProducerMessageSize];
    const size_t size = ipc::EncodeLossReport(report, buf, sizeof(buf));
    RT_CHECK(size > 0);  // our own entries
    if (!SendBefore(options_.socket->fd(), buf, size, deadline_ms))
      return;  // the ack's own send reports the failure
    options_.losses->MarkReported(batch);
  }
}

bool ServiceReader::SendAck(const uint8_t* data, size_t size) {
  const uint64_t deadline_ms = base::MonotonicMs() + options_.ack_timeout_ms;
  SendChangedLosses(deadline_ms);
  if (SendBefore(options_.socket->fd(), data, size, deadline_ms)) {
    return true;
  }
  ack_failures_.fetch_add(1, std::memory_order_relaxed);
  RT_ELOG(
      "ringtrace producer: cannot send an ack to the service within %u ms; "
      "disconnecting",
      options_.ack_timeout_ms);
  shutdown(options_.socket->fd(), SHUT_RDWR);
  return false;
}

ServiceReader::Next ServiceReader::Violation(const char* what) {
  violations_.fetch_add(1, std::memory_order_relaxed);
  RT_ELOG(
      "ringtrace producer: the service broke the protocol (%s); "
      "disconnecting",
      what);
  // The service sees the hang-up; app threads' sends fail from now on. The
  // fd stays open (they may still be about to send on it).
  shutdown(options_.socket->fd(), SHUT_RDWR);
  return Next::kLost;
}

void ServiceReader::Finish(bool lost) {
  if (lost && options_.notifier)
    options_.notifier->MarkDisconnected();  // writers refuse new packets
  // Stops still waiting for their ack stay the handlers' (no OnStop); their
  // acks have nobody to go to.
  acks_->Close();
  stopping_.clear();
  std::vector<std::pair<uint32_t, DataSourceHandler*>> stopping;
  {
    base::MutexLock lock(&mutex_);
    ended_ = true;
    for (const auto& it : started_)
      stopping.emplace_back(it.first, sources_[it.second].handler);
    started_.clear();
  }
  for (const auto& it : stopping) {
    stopped_without_request_.fetch_add(1, std::memory_order_relaxed);
    it.second->OnStop(it.first);
  }
  if (lost && options_.on_disconnect)
    options_.on_disconnect();
}

}  // namespace producer
}  // namespace ringtrace
