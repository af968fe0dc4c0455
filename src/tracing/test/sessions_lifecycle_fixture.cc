/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/test/sessions_lifecycle_fixture.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "protos/ringtrace/ipc/consumer_port.pb.h"
#include "src/tracing/ipc/consumer_protocol.h"
#include "src/tracing/ipc/unix_socket.h"

namespace ringtrace {
namespace test {
namespace {

using perfetto::protos::TraceConfig;
using Clock = std::chrono::steady_clock;

std::unique_ptr<ipc::UnixSocket> RawConsumer(const std::string& path) {
  base::Status status;
  std::unique_ptr<ipc::UnixSocket> socket =
      ipc::UnixSocket::ConnectWithTimeout(path, kTimeoutMs, &status);
  EXPECT_TRUE(socket) << status.message();
  return socket;
}

// Receives one response within the deadline; false if the connection
// closed (or nothing came).
bool ReceiveResponse(ipc::UnixSocket* socket, protos::ConsumerResponse* out) {
  if (!socket->WaitReadable(kTimeoutMs))
    return false;
  std::vector<uint8_t> buf(ipc::kMaxConsumerMessageSize);
  size_t size = 0;
  base::Status status;
  if (socket->Receive(buf.data(), buf.size(), &size, nullptr, &status) !=
      ipc::UnixSocket::RecvResult::kMessage) {
    return false;
  }
  status = ipc::DecodeConsumerResponse(buf.data(), size, out);
  EXPECT_TRUE(status.ok()) << status.message();
  return status.ok();
}

// Reads (and drops) what the service sent until it closes the connection;
// false if it did not within the deadline.
bool ReadUntilClosed(ipc::UnixSocket* socket) {
  std::vector<uint8_t> buf(ipc::kMaxConsumerMessageSize);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(kTimeoutMs);
  while (Clock::now() < deadline) {
    if (!socket->WaitReadable(100))
      continue;
    size_t size = 0;
    base::Status status;
    const ipc::UnixSocket::RecvResult r =
        socket->Receive(buf.data(), buf.size(), &size, nullptr, &status);
    if (r == ipc::UnixSocket::RecvResult::kClosed ||
        r == ipc::UnixSocket::RecvResult::kError) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<uint64_t> Plus(std::vector<uint64_t> v, uint64_t n) {
  for (uint64_t& x : v)
    x += n;
  return v;
}

uid_t SessionsLifecycleFixture::OtherUid(uint32_t n) {
  if (geteuid() == 0)
    return static_cast<uid_t>(65535 - n);
  static bool said = false;
  if (!said)
    printf("not root: the other user's peers run as this user\n");
  said = true;
  return geteuid();
}

pid_t SessionsLifecycleFixture::ForkAs(uid_t uid,
                                       const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid != 0)
    return pid;
  if (uid != geteuid() &&
      (setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0)) {
    _exit(10);
  }
  _exit(body());
}

pid_t SessionsLifecycleFixture::ForkHostileProducer(
    const std::string& name,
    const std::function<int(ipc::UnixSocket*, producer::HandshakeResult*)>&
        body) {
  return ForkAs(OtherUid(1), [&] {
    base::Status status;
    auto socket = ipc::UnixSocket::Connect(socket_, &status);
    if (!socket)
      return 11;
    ProducerOptions options;
    options.name = name;
    producer::HandshakeResult hello;
    if (!producer::Handshake(socket.get(), options, &hello).ok())
      return 12;
    return body(socket.get(), &hello);
  });
}

bool SessionsLifecycleFixture::ExitedWith0(pid_t pid) {
  int wstatus = 0;
  return waitpid(pid, &wstatus, 0) == pid && WIFEXITED(wstatus) &&
         WEXITSTATUS(wstatus) == 0;
}

std::unique_ptr<base::Subprocess> SessionsLifecycleFixture::StartService(
    const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {bin_ + "/ringtraced", "--producer-socket",
                                   socket_, "--consumer-socket",
                                   consumer_socket_};
  argv.insert(argv.end(), extra.begin(), extra.end());
  std::unique_ptr<base::Subprocess> service(new base::Subprocess(argv));
  const std::string error = StartRingtraced(service.get(), socket_, kTimeoutMs);
  EXPECT_TRUE(error.empty()) << error;
  if (!error.empty())
    return nullptr;
  return service;
}

void SessionsLifecycleFixture::StopService(base::Subprocess* service,
                                           const std::string& expected) {
  service->Signal(SIGTERM);
  ASSERT_TRUE(service->Wait(kTimeoutMs)) << service->output();
  EXPECT_EQ(service->exit_code(), 0) << service->output();
  EXPECT_NE(service->output().find(expected), std::string::npos)
      << service->output();
}

bool SessionsLifecycleFixture::StartApp(SessionApp* app,
                                        uint32_t threads,
                                        const std::vector<std::string>& extra) {
  std::string error;
  const bool ok = app->Start(bin_, socket_, threads, extra, &error);
  EXPECT_TRUE(ok) << error;
  return ok;
}

std::unique_ptr<consumer::ConsumerClient>
SessionsLifecycleFixture::ConnectConsumer() {
  base::Status status;
  std::unique_ptr<consumer::ConsumerClient> c =
      consumer::ConsumerClient::Connect(consumer_socket_, kTimeoutMs, &status);
  EXPECT_TRUE(c) << status.message();
  return c;
}

base::ScopedFd SessionsLifecycleFixture::CreateTraceFile(
    const std::string& path) {
  base::ScopedFd fd(
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  EXPECT_TRUE(fd.valid()) << path;
  return fd;
}

void SessionsLifecycleFixture::ExpectMalformedDatagramCloses() {
  std::unique_ptr<ipc::UnixSocket> raw = RawConsumer(consumer_socket_);
  ASSERT_TRUE(raw);
  const uint8_t garbage[] = {'R', 'T', 'C', 'P', 9, 9, 9, 9, 1, 0, 0, 0, 7};
  ASSERT_TRUE(raw->Send(garbage, sizeof(garbage)).ok());
  EXPECT_TRUE(ReadUntilClosed(raw.get()));
}

void SessionsLifecycleFixture::ExpectInvalidConfigRefused() {
  std::unique_ptr<ipc::UnixSocket> raw = RawConsumer(consumer_socket_);
  ASSERT_TRUE(raw);
  protos::ConsumerRequest request;
  request.set_request_id(1);
  TraceConfig* config = request.mutable_enable_tracing()->mutable_config();
  config->add_buffers()->set_size_kb(0);
  config->add_data_sources()->mutable_config()->set_name("track_event");
  std::vector<uint8_t> datagram;
  ASSERT_TRUE(ipc::EncodeConsumerRequest(request, &datagram).ok());
  base::ScopedFd fd = CreateTraceFile(dir_ + "/refused");
  ASSERT_TRUE(raw->Send(datagram.data(), datagram.size(), fd.get()).ok());
  protos::ConsumerResponse response;
  ASSERT_TRUE(ReceiveResponse(raw.get(), &response));
  EXPECT_EQ(response.request_id(), 1u);
  EXPECT_FALSE(response.ok());
  EXPECT_NE(response.error().find("buffers[0].size_kb: 0"), std::string::npos)
      << response.error();
  // Still served: a valid request on the same connection is answered.
  request.Clear();
  request.set_request_id(2);
  request.mutable_query_service_state();
  ASSERT_TRUE(ipc::EncodeConsumerRequest(request, &datagram).ok());
  ASSERT_TRUE(raw->Send(datagram.data(), datagram.size()).ok());
  ASSERT_TRUE(ReceiveResponse(raw.get(), &response));
  EXPECT_EQ(response.request_id(), 2u);
  EXPECT_TRUE(response.ok());
}

void SessionsLifecycleFixture::ExpectLimitsRefused() {
  std::unique_ptr<consumer::ConsumerClient> c = ConnectConsumer();
  ASSERT_TRUE(c);
  base::ScopedFd fd = CreateTraceFile(dir_ + "/hostile");
  uint64_t id = 0;
  base::Status status = c->EnableTracing(
      AppConfig(65 * 1024, TraceConfig::BufferConfig::DISCARD), fd.get(), &id);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("buffers: "), std::string::npos)
      << status.message();
  // Two more fit beside the good session; the fourth does not.
  for (int i = 0; i < 2; i++) {
    status = c->EnableTracing(AppConfig(64, TraceConfig::BufferConfig::DISCARD),
                              fd.get(), &id);
    EXPECT_TRUE(status.ok()) << status.message();
  }
  status = c->EnableTracing(AppConfig(64, TraceConfig::BufferConfig::DISCARD),
                            fd.get(), &id);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("max sessions reached: 3 of 3"),
            std::string::npos)
      << status.message();
  // |c| leaves: its two sessions are freed unwritten.
}

void SessionsLifecycleFixture::ExpectNonReaderDropped() {
  std::unique_ptr<ipc::UnixSocket> raw = RawConsumer(consumer_socket_);
  ASSERT_TRUE(raw);
  raw->SetNonBlocking(true);
  protos::ConsumerRequest request;
  request.mutable_query_service_state();
  std::vector<uint8_t> datagram;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(kTimeoutMs);
  // Requests until the service hangs up (its answers fill our socket
  // buffer, since we never read them); at most 100000.
  bool closed = false;
  for (uint64_t id = 1; id <= 100000 && !closed && Clock::now() < deadline;) {
    request.set_request_id(id);
    ASSERT_TRUE(ipc::EncodeConsumerRequest(request, &datagram).ok());
    bool would_block = false;
    const base::Status status =
        raw->Send(datagram.data(), datagram.size(), -1, &would_block);
    if (status.ok()) {
      id++;
    } else if (would_block) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } else {
      closed = true;  // EPIPE: the service closed the connection
    }
  }
  EXPECT_TRUE(closed || ReadUntilClosed(raw.get()));
}

}  // namespace test
}  // namespace ringtrace
