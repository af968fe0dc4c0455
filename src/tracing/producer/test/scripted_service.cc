/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/producer/test/scripted_service.h"

#include <utility>
#include <vector>

#include "src/base/time.h"
#include "src/tracing/core/shm_ring/writer_loss_area.h"

namespace ringtrace {
namespace producer {

std::unique_ptr<ScriptedService> ScriptedService::Start(const std::string& path,
                                                        const Config& config) {
  base::Status status;
  std::unique_ptr<ipc::UnixSocket> listener =
      ipc::UnixSocket::Listen(path, &status);
  if (!listener)
    return nullptr;
  std::unique_ptr<ScriptedService> service(
      new ScriptedService(std::move(listener), config));
  ScriptedService* s = service.get();
  service->thread_ = std::thread([s] { s->handshake_ok_ = s->Handshake(); });
  return service;
}

ScriptedService::ScriptedService(std::unique_ptr<ipc::UnixSocket> listener,
                                 const Config& config)
    : config_(config), listener_(std::move(listener)) {}

ScriptedService::~ScriptedService() {
  if (thread_.joinable())
    thread_.join();
  conn_.reset();
  listener_.reset();
}

bool ScriptedService::Handshake() {
  const uint64_t deadline = base::MonotonicMs() + kWaitMs;
  while (!conn_) {
    if (base::MonotonicMs() >= deadline)
      return false;
    if (!listener_->WaitReadable(100))
      continue;
    base::Status status;
    conn_ = listener_->Accept(&status);
    if (!conn_ && !status.ok())
      return false;
  }
  conn_->SetNonBlocking(false);
  if (!conn_->WaitReadable(kWaitMs))
    return false;
  uint8_t buf[ipc::kMaxMessageSize];
  size_t size = 0;
  base::Status status;
  if (conn_->Receive(buf, sizeof(buf), &size, nullptr, &status) !=
      ipc::UnixSocket::RecvResult::kMessage) {
    return false;
  }
  ipc::Message msg;
  if (!ipc::DecodeMessage(buf, size, &msg).ok() ||
      msg.type != ipc::MessageType::kHello) {
    return false;
  }
  hello_ = msg.hello;
  region_ = shm_ring::SharedRingRegion::CreateMemfd(
      config_.geometry, shm_ring::kWriterLossAreaSize, &status);
  if (!region_)
    return false;
  ipc::HelloReplyMsg reply;
  reply.producer_id = config_.producer_id;
  reply.chunk_size = config_.geometry.chunk_size;
  reply.num_chunks = config_.geometry.num_chunks;
  reply.target_buffer = config_.target_buffer;
  const size_t n = ipc::EncodeHelloReply(reply, buf, sizeof(buf));
  if (n == 0 || !conn_->Send(buf, n, region_->fd()).ok())
    return false;
  conn_->SetNonBlocking(true);
  return true;
}

bool ScriptedService::WaitConnected() {
  if (thread_.joinable())
    thread_.join();
  return handshake_ok_;
}

bool ScriptedService::Send(const uint8_t* data, size_t size, int fd) {
  return conn_ && conn_->Send(data, size, fd).ok();
}

bool ScriptedService::SendStart(const ipc::StartDataSourceMsg& msg) {
  std::vector<uint8_t> buf(ipc::kMaxMessageSize);
  const size_t n = ipc::EncodeStartDataSource(msg, buf.data(), buf.size());
  return n > 0 && Send(buf.data(), n);
}

bool ScriptedService::SendStop(uint32_t instance_id) {
  uint8_t buf[ipc::kMaxProducerMessageSize];
  const size_t n = ipc::EncodeStopDataSource(instance_id, buf, sizeof(buf));
  return n > 0 && Send(buf, n);
}

bool ScriptedService::SendFlush(uint32_t flush_id) {
  uint8_t buf[ipc::kMaxProducerMessageSize];
  const size_t n = ipc::EncodeFlush(flush_id, buf, sizeof(buf));
  return n > 0 && Send(buf, n);
}

bool ScriptedService::ReadOne(int wait_ms) {
  if (!conn_ || hung_up_ || bad_datagram_)
    return false;
  if (wait_ms > 0 && !conn_->WaitReadable(wait_ms))
    return false;
  uint8_t buf[ipc::kMaxMessageSize];
  size_t size = 0;
  base::Status status;
  switch (conn_->Receive(buf, sizeof(buf), &size, nullptr, &status)) {
    case ipc::UnixSocket::RecvResult::kMessage:
      break;
    case ipc::UnixSocket::RecvResult::kWouldBlock:
      return false;
    case ipc::UnixSocket::RecvResult::kClosed:
      hung_up_ = true;
      return false;
    default:
      bad_datagram_ = true;
      return false;
  }
  ipc::Message msg;
  if (!ipc::DecodeMessage(buf, size, &msg).ok()) {
    bad_datagram_ = true;
    return false;
  }
  if (msg.type == ipc::MessageType::kDrainRequest) {
    ++drain_requests_;
    if (msg.drain_request.has_loss_report &&
        (msg.drain_request.flags & ipc::kLossReportFinal)) {
      ++final_loss_reports_;
    }
    return true;
  }
  if (msg.type == ipc::MessageType::kDataSourceCategories) {
    for (const ipc::CategoryDescriptor& c :
         msg.data_source_categories.categories) {
      declared_.push_back(Declared{msg.data_source_categories.data_source, c});
    }
    return true;
  }
  queued_.push_back(std::move(msg));
  return true;
}

bool ScriptedService::WaitForDeclaredCategory(const std::string& name) {
  const uint64_t deadline = base::MonotonicMs() + kWaitMs;
  for (;;) {
    for (const Declared& d : declared_) {
      if (d.category.name == name)
        return true;
    }
    const uint64_t now = base::MonotonicMs();
    if (now >= deadline)
      return false;
    if (!ReadOne(static_cast<int>(deadline - now)) &&
        (hung_up_ || bad_datagram_)) {
      return false;
    }
  }
}

bool ScriptedService::Receive(ipc::Message* msg) {
  const uint64_t deadline = base::MonotonicMs() + kWaitMs;
  while (queued_.empty()) {
    const uint64_t now = base::MonotonicMs();
    if (now >= deadline)
      return false;
    if (!ReadOne(static_cast<int>(deadline - now)) &&
        (hung_up_ || bad_datagram_)) {
      return false;
    }
  }
  *msg = std::move(queued_.front());
  queued_.pop_front();
  return true;
}

bool ScriptedService::HasPendingMessage() {
  while (queued_.empty() && ReadOne(0)) {
  }
  return !queued_.empty();
}

bool ScriptedService::WaitForHangUp() {
  const uint64_t deadline = base::MonotonicMs() + kWaitMs;
  while (!hung_up_) {
    const uint64_t now = base::MonotonicMs();
    if (now >= deadline || bad_datagram_ || !conn_)
      return false;
    ReadOne(static_cast<int>(deadline - now));
  }
  return true;
}

bool ScriptedService::hung_up() {
  while (ReadOne(0)) {
  }
  return hung_up_;
}

void ScriptedService::Close() {
  conn_.reset();
}

}  // namespace producer
}  // namespace ringtrace
