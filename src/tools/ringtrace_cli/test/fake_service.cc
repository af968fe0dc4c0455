/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/test/fake_service.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <utility>

#include "src/tracing/ipc/consumer_protocol.h"

namespace ringtrace {
namespace cli {
namespace {

using ringtrace::protos::ConsumerRequest;
using ringtrace::protos::ConsumerResponse;

// Far beyond any wait of these tests: it only keeps a broken test from
// hanging forever.
constexpr int kSafetyMs = 20000;

void WriteAll(int fd, const std::string& data) {
  if (data.empty())
    return;
  EXPECT_EQ(write(fd, data.data(), data.size()),
            static_cast<ssize_t>(data.size()));
}

// False if the client is gone (its hang-up is no failure of the test).
bool Respond(ipc::UnixSocket* conn, const ConsumerResponse& response) {
  std::vector<uint8_t> datagram;
  EXPECT_TRUE(ipc::EncodeConsumerResponse(response, &datagram).ok());
  return conn->Send(datagram.data(), datagram.size()).ok();
}

ConsumerResponse Answer(const ConsumerRequest& request,
                        const base::Status& status) {
  ConsumerResponse response;
  response.set_request_id(request.request_id());
  response.set_ok(status.ok());
  if (!status.ok())
    response.set_error(status.message());
  return response;
}

enum class Read { kRequest, kClosed, kTimeout };

// One request (DecodeConsumerRequest checks it as the service does).
Read ReadRequest(ipc::UnixSocket* conn,
                 int timeout_ms,
                 ConsumerRequest* request,
                 base::ScopedFd* fd) {
  if (!conn->WaitReadable(timeout_ms))
    return Read::kTimeout;
  std::vector<uint8_t> buf(ipc::kMaxConsumerMessageSize);
  size_t size = 0;
  base::Status status;
  const ipc::UnixSocket::RecvResult r =
      conn->Receive(buf.data(), buf.size(), &size, fd, &status);
  if (r == ipc::UnixSocket::RecvResult::kClosed)
    return Read::kClosed;
  if (r != ipc::UnixSocket::RecvResult::kMessage) {
    ADD_FAILURE() << "receive: " << status.message();
    return Read::kClosed;
  }
  status = ipc::DecodeConsumerRequest(buf.data(), size, fd->valid(), request);
  EXPECT_TRUE(status.ok()) << status.message();
  return status.ok() ? Read::kRequest : Read::kClosed;
}

}  // namespace

FakeService::FakeService() : path_(dir_.File("consumer.sock")) {
  base::Status status;
  listener_ = ipc::UnixSocket::Listen(path_, &status);
  EXPECT_TRUE(listener_) << status.message();
}

FakeService::~FakeService() {
  Join();
}

void FakeService::Serve() {
  Join();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = false;
  }
  thread_ = std::thread([this] { ServeOne(); });
}

void FakeService::Join() {
  if (thread_.joinable())
    thread_.join();
}

void FakeService::ServeOne() {
  std::unique_ptr<ipc::UnixSocket> conn;
  while (!conn && listener_ && listener_->WaitReadable(kSafetyMs)) {
    base::Status status;
    conn = listener_->Accept(&status);
  }
  if (!conn) {
    ADD_FAILURE() << "no client connected";
    return;
  }
  conn->SetNonBlocking(false);
  for (;;) {
    ConsumerRequest request;
    base::ScopedFd fd;
    const Read r = ReadRequest(conn.get(), kSafetyMs, &request, &fd);
    if (r == Read::kTimeout)
      ADD_FAILURE() << "the client neither asked nor closed";
    if (r == Read::kClosed && running_) {
      std::lock_guard<std::mutex> lock(mutex_);
      aborted_ = true;
    }
    if (r != Read::kRequest || !Handle(conn.get(), request, std::move(fd)))
      break;
  }
  out_fd_.reset();
  running_ = false;
}

bool FakeService::Handle(ipc::UnixSocket* conn,
                         const ConsumerRequest& request,
                         base::ScopedFd fd) {
  switch (request.request_case()) {
    case ConsumerRequest::kEnableTracing: {
      ConsumerResponse response = Answer(request, enable_status);
      if (enable_status.ok()) {
        out_fd_ = std::move(fd);
        WriteAll(out_fd_.get(), trace_on_enable);
        response.set_session_id(kSessionId);
        for (const std::string& warning : start_warnings)
          response.add_warnings(warning);
      }
      if (!Respond(conn, response))
        return false;
      if (!enable_status.ok())
        return true;
      running_ = true;
      return SendEvents(conn, events_after_enable) && !hang_up_after_enable;
    }
    case ConsumerRequest::kDisableTracing:
      return Disable(conn, request);
    case ConsumerRequest::kCloneSession: {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        clone_calls_++;
      }
      EXPECT_EQ(request.clone_session().session_id(), kSessionId);
      if (clone_status.ok())
        WriteAll(fd.get(), "snapshot");
      return Respond(conn, Answer(request, clone_status));
    }
    case ConsumerRequest::kQueryServiceState: {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        query_calls_++;
      }
      if (on_query)
        on_query();
      if (query_breaks) {
        const uint8_t garbage[16] = {1, 2, 3};
        (void)conn->Send(garbage, sizeof(garbage));
        return true;  // the client closes
      }
      ConsumerResponse response = Answer(request, query_status);
      if (query_status.ok())
        *response.mutable_service_state() = state;
      return Respond(conn, response);
    }
    case ConsumerRequest::kDetach: {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        detached_key_ = request.detach().key();
      }
      EXPECT_EQ(request.detach().session_id(), kSessionId);
      ConsumerResponse response = Answer(request, detach_status);
      if (detach_status.ok()) {
        response.set_session_id(kSessionId);
        running_ = false;  // no longer the connection's
      }
      return Respond(conn, response);
    }
    case ConsumerRequest::kAttach: {
      const bool probe = request.attach().probe();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        detached_key_ = request.attach().key();
      }
      if (probe && hang_up_on_probe)
        return false;
      ConsumerResponse response = Answer(request, attach_status);
      if (attach_status.ok())
        response.set_session_id(attach_session_id);
      if (!Respond(conn, response))
        return false;
      if (probe || !attach_status.ok())
        return true;
      running_ = true;
      return SendEvents(conn, events_after_attach);
    }
    case ConsumerRequest::kFlush:
    case ConsumerRequest::kGetTraceStats:
      return Respond(conn, Answer(request, base::OkStatus()));
    case ConsumerRequest::REQUEST_NOT_SET:
      break;
  }
  ADD_FAILURE() << "unexpected request";
  return false;
}

bool FakeService::Disable(ipc::UnixSocket* conn,
                          const ConsumerRequest& request) {
  EXPECT_EQ(request.disable_tracing().session_id(), kSessionId);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    disable_calls_++;
    cv_.notify_all();
  }
  if ((disable_blocks || disable_waits_for_release) &&
      !WaitForReleaseOrHangup(conn)) {
    return false;
  }
  if (!SendEvents(conn, events_before_disable))
    return false;
  ConsumerResponse response = Answer(request, disable_status);
  if (disable_status.ok()) {
    WriteAll(out_fd_.get(), trace_on_disable);
    response.set_session_id(kSessionId);
    *response.mutable_summary() = summary;
    running_ = false;
  }
  return Respond(conn, response);
}

bool FakeService::SendEvents(
    ipc::UnixSocket* conn,
    const std::vector<ringtrace::protos::ConsumerResponse>& events) {
  for (const ConsumerResponse& event : events) {
    if (event.tracing_ended() && event.session_id() == kSessionId)
      running_ = false;
    if (!Respond(conn, event))
      return false;
  }
  return true;
}

bool FakeService::WaitForReleaseOrHangup(ipc::UnixSocket* conn) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kSafetyMs);
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (released_ && !disable_blocks)
        return true;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "DisableTracing was neither released nor aborted";
      return false;
    }
    if (!conn->WaitReadable(2))
      continue;
    // The client's calls are serialized: nothing but its hang-up comes
    // while its DisableTracing waits.
    ConsumerRequest request;
    base::ScopedFd fd;
    const Read r = ReadRequest(conn, 0, &request, &fd);
    EXPECT_NE(r, Read::kRequest) << "a request while DisableTracing waits";
    if (r != Read::kTimeout) {
      std::lock_guard<std::mutex> lock(mutex_);
      aborted_ = true;
      return false;
    }
  }
}

void FakeService::Release() {
  std::lock_guard<std::mutex> lock(mutex_);
  released_ = true;
  cv_.notify_all();
}

void FakeService::WaitForDisable() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return disable_calls_ > 0; });
}

int FakeService::disable_calls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return disable_calls_;
}
int FakeService::query_calls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return query_calls_;
}
int FakeService::clone_calls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return clone_calls_;
}
bool FakeService::aborted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return aborted_;
}
std::string FakeService::detached_key() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return detached_key_;
}

}  // namespace cli
}  // namespace ringtrace
