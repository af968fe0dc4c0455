/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/producer/test/fake_service.h"
#include "src/tracing/core/shm_ring/writer_loss_area.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <utility>
#include <vector>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace producer {

namespace {
// The service thread polls its sockets this often for the test's requests.
constexpr int kPollMs = 5;
}  // namespace

int CountOpenFds() {
  int n = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(dir))
      n += e->d_name[0] != '.' ? 1 : 0;
    closedir(dir);
    return n - 1;  // the directory's own fd
  }
  return -1;
}

std::unique_ptr<FakeService> FakeService::Start(const std::string& path,
                                                const Config& config) {
  base::Status status;
  auto listener = ipc::UnixSocket::Listen(path, &status);
  if (!listener)
    return nullptr;
  std::unique_ptr<FakeService> service(
      new FakeService(std::move(listener), config));
  service->thread_ = std::thread([s = service.get()] { s->Run(); });
  return service;
}

FakeService::FakeService(std::unique_ptr<ipc::UnixSocket> listener,
                         const Config& config)
    : config_(config), listener_(std::move(listener)) {}

FakeService::~FakeService() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  thread_.join();
}

bool FakeService::Serve() {
  // Accept one producer.
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_ || close_requested_)
        return false;
    }
    if (!listener_->WaitReadable(kPollMs))
      continue;
    base::Status status;
    conn_ = listener_->Accept(&status);
    if (conn_)
      break;
    if (!status.ok())
      return false;
  }
  // Its Hello.
  uint8_t buf[ipc::kMaxMessageSize];
  size_t size = 0;
  ipc::Message msg;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_ || close_requested_)
        return false;
    }
    if (!conn_->WaitReadable(kPollMs))
      continue;
    base::Status status;
    if (conn_->Receive(buf, sizeof(buf), &size, nullptr, &status) !=
        ipc::UnixSocket::RecvResult::kMessage) {
      return false;
    }
    if (!ipc::DecodeMessage(buf, size, &msg).ok() ||
        msg.type != ipc::MessageType::kHello) {
      return false;
    }
    break;
  }
  std::unique_ptr<shm_ring::SharedRingRegion> region;
  if (config_.reply && config_.status != ipc::HelloStatus::kOk) {
    ipc::HelloReplyMsg reply;
    reply.status = config_.status;
    const size_t n = ipc::EncodeHelloReply(reply, buf, sizeof(buf));
    if (n == 0 || !conn_->Send(buf, n).ok())
      return false;
    conn_.reset();  // the service closes the connection after a refusal
    std::lock_guard<std::mutex> lock(mutex_);
    hello_ = msg.hello;
    hello_done_ = true;
    producer_gone_ = true;  // nothing more to serve
    cv_.notify_all();
    return true;
  }
  if (config_.reply) {
    base::Status status;
    region = shm_ring::SharedRingRegion::CreateMemfd(
        config_.geometry, shm_ring::kWriterLossAreaSize, &status);
    if (!region)
      return false;
    ipc::HelloReplyMsg reply;
    reply.producer_id = config_.producer_id;
    reply.chunk_size = config_.geometry.chunk_size;
    reply.num_chunks = config_.geometry.num_chunks;
    reply.target_buffer = config_.target_buffer;
    const size_t n = ipc::EncodeHelloReply(reply, buf, sizeof(buf));
    if (n == 0 || !conn_->Send(buf, n, region->fd()).ok())
      return false;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  hello_ = msg.hello;
  region_ = std::move(region);
  hello_done_ = true;
  cv_.notify_all();
  return true;
}

void FakeService::Run() {
  if (!Serve()) {
    std::lock_guard<std::mutex> lock(mutex_);
    protocol_error_ = true;
    cv_.notify_all();
  }
  // Count DrainRequests until the producer hangs up or the test ends it.
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (stop_ || close_requested_)
        break;
      if (producer_gone_ || protocol_error_) {
        cv_.wait_for(lock, std::chrono::milliseconds(kPollMs));
        continue;
      }
    }
    if (!conn_->WaitReadable(kPollMs))
      continue;
    uint8_t buf[ipc::kMaxMessageSize];
    size_t size = 0;
    base::Status status;
    const auto r = conn_->Receive(buf, sizeof(buf), &size, nullptr, &status);
    ipc::Message msg;
    std::lock_guard<std::mutex> lock(mutex_);
    if (r == ipc::UnixSocket::RecvResult::kMessage &&
        ipc::DecodeMessage(buf, size, &msg).ok() &&
        msg.type == ipc::MessageType::kDrainRequest) {
      drain_requests_++;
      const ipc::DrainRequestMsg& d = msg.drain_request;
      if (d.has_loss_report) {
        if (d.flags & ipc::kLossReportFinal)
          final_reports_++;
        for (uint32_t i = 0; i < d.num_entries; i++) {
          losses_[d.entries[i].writer_id] = d.entries[i];
          loss_entries_received_++;
        }
      }
    } else if (r == ipc::UnixSocket::RecvResult::kClosed) {
      producer_gone_ = true;
    } else if (r != ipc::UnixSocket::RecvResult::kWouldBlock) {
      protocol_error_ = true;
    }
    cv_.notify_all();
  }
  conn_.reset();
  listener_.reset();
  std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
  cv_.notify_all();
}

bool FakeService::WaitHelloDone() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait_for(lock, std::chrono::milliseconds(kWaitMs),
               [&] { return hello_done_ || protocol_error_; });
  return hello_done_;
}

ipc::HelloMsg FakeService::hello() {
  std::lock_guard<std::mutex> lock(mutex_);
  return hello_;
}

shm_ring::SharedRingRegion* FakeService::region() {
  std::lock_guard<std::mutex> lock(mutex_);
  return region_.get();
}

uint64_t FakeService::drain_requests() {
  std::lock_guard<std::mutex> lock(mutex_);
  return drain_requests_;
}

std::map<uint32_t, ipc::WriterLossEntry> FakeService::losses() {
  std::lock_guard<std::mutex> lock(mutex_);
  return losses_;
}

uint64_t FakeService::final_reports() {
  std::lock_guard<std::mutex> lock(mutex_);
  return final_reports_;
}

uint64_t FakeService::loss_entries_received() {
  std::lock_guard<std::mutex> lock(mutex_);
  return loss_entries_received_;
}

bool FakeService::WaitForDrainRequests(uint64_t n) {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_for(lock, std::chrono::milliseconds(kWaitMs),
                      [&] { return drain_requests_ >= n; });
}

bool FakeService::WaitForProducerGone() {
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_for(lock, std::chrono::milliseconds(kWaitMs),
                      [&] { return producer_gone_; });
}

void FakeService::CloseConnection() {
  std::unique_lock<std::mutex> lock(mutex_);
  close_requested_ = true;
  cv_.notify_all();
  RT_CHECK(cv_.wait_for(lock, std::chrono::milliseconds(kWaitMs),
                        [&] { return closed_; }));
}

base::Status FakeConnection::Connect(const FakeService::Config& config,
                                     ProducerOptions options) {
  const std::string path = dir.File("svc.sock");
  service = FakeService::Start(path, config);
  if (!service)
    return base::ErrStatus("the fake service cannot listen at %s",
                           path.c_str());
  options.socket_path = path;
  base::Status status;
  producer = Producer::Connect(options, &status);
  return status;
}

}  // namespace producer
}  // namespace ringtrace
