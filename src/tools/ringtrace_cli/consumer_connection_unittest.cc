/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/consumer_connection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>

#include <thread>
#include <vector>

#include "src/tracing/ipc/consumer_protocol.h"
#include "src/tracing/ipc/unix_socket.h"

namespace ringtrace {
namespace cli {
namespace {

using ringtrace::protos::ConsumerRequest;
using ringtrace::protos::ConsumerResponse;

// A ClientConnection over one end of a socket pair; the test plays the
// service on the other end.
class ClientConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::unique_ptr<ipc::UnixSocket> client_end;
    ASSERT_TRUE(ipc::UnixSocket::Pair(&client_end, &service_));
    connection_.reset(new ClientConnection(
        consumer::ConsumerClient::FromSocket(std::move(client_end))));
  }

  // Receives one request on the service end (blocking).
  ConsumerRequest ReceiveRequest() {
    std::vector<uint8_t> buf(ipc::kMaxConsumerMessageSize);
    size_t size = 0;
    base::ScopedFd fd;
    base::Status status;
    EXPECT_TRUE(service_->WaitReadable(60000));
    EXPECT_EQ(service_->Receive(buf.data(), buf.size(), &size, &fd, &status),
              ipc::UnixSocket::RecvResult::kMessage)
        << status.message();
    ConsumerRequest request;
    EXPECT_TRUE(
        ipc::DecodeConsumerRequest(buf.data(), size, fd.valid(), &request)
            .ok());
    return request;
  }

  void Send(const ConsumerResponse& response) {
    std::vector<uint8_t> datagram;
    ASSERT_TRUE(ipc::EncodeConsumerResponse(response, &datagram).ok());
    ASSERT_TRUE(service_->Send(datagram.data(), datagram.size()).ok());
  }

  bool EventFdReadable() {
    pollfd fd = {connection_->event_fd(), POLLIN, 0};
    return poll(&fd, 1, 60000) == 1;
  }

  std::unique_ptr<ipc::UnixSocket> service_;
  std::unique_ptr<ClientConnection> connection_;
};

ConsumerResponse TracingEnded(uint64_t session_id) {
  ConsumerResponse event;
  event.set_request_id(0);
  event.set_ok(true);
  event.set_tracing_ended(true);
  event.set_session_id(session_id);
  return event;
}

TEST_F(ClientConnectionTest, TakeEventReadsWhatIsPending) {
  ConsumerResponse event;
  base::Status status;
  EXPECT_FALSE(connection_->TakeEvent(&event, &status));
  EXPECT_TRUE(status.ok());

  Send(TracingEnded(5));
  Send(TracingEnded(6));
  ASSERT_TRUE(EventFdReadable());
  ASSERT_TRUE(connection_->TakeEvent(&event, &status));
  EXPECT_EQ(event.session_id(), 5u);
  ASSERT_TRUE(connection_->TakeEvent(&event, &status));
  EXPECT_EQ(event.session_id(), 6u);
  EXPECT_FALSE(connection_->TakeEvent(&event, &status));
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST_F(ClientConnectionTest, HangupIsAnError) {
  service_.reset();
  ASSERT_TRUE(EventFdReadable());
  ConsumerResponse event;
  base::Status status;
  EXPECT_FALSE(connection_->TakeEvent(&event, &status));
  EXPECT_FALSE(status.ok());
}

TEST_F(ClientConnectionTest, ABrokenConnectionIsReportedAfterTheClientClosed) {
  // Garbage breaks the connection inside a call; the client closes its own
  // socket, yet TakeEvent still reports why.
  const uint8_t garbage[16] = {1, 2, 3};
  std::thread answer([&] {
    ReceiveRequest();
    ASSERT_TRUE(service_->Send(garbage, sizeof(garbage)).ok());
  });
  ringtrace::protos::ServiceState state;
  EXPECT_FALSE(connection_->QueryServiceState(&state).ok());
  answer.join();
  ConsumerResponse event;
  base::Status status;
  EXPECT_FALSE(connection_->TakeEvent(&event, &status));
  EXPECT_FALSE(status.ok());
  EXPECT_GE(connection_->event_fd(), 0);
}

TEST_F(ClientConnectionTest, AbortUnblocksDisableTracing) {
  base::Status status;
  std::thread stopper([&] {
    // A service that never answers: only Abort() ends this call.
    status = connection_->DisableTracing(3, 600000, nullptr);
  });
  const ConsumerRequest request = ReceiveRequest();
  EXPECT_EQ(request.disable_tracing().session_id(), 3u);
  connection_->Abort();
  stopper.join();
  EXPECT_FALSE(status.ok());
  // The service sees the consumer hang up.
  std::vector<uint8_t> buf(64);
  size_t size = 0;
  base::Status recv_status;
  EXPECT_TRUE(service_->WaitReadable(60000));
  EXPECT_EQ(
      service_->Receive(buf.data(), buf.size(), &size, nullptr, &recv_status),
      ipc::UnixSocket::RecvResult::kClosed);
}

TEST_F(ClientConnectionTest, DisableTracingPassesTheSummary) {
  std::thread answer([&] {
    const ConsumerRequest request = ReceiveRequest();
    ConsumerResponse response;
    response.set_request_id(request.request_id());
    response.set_ok(true);
    response.set_session_id(9);
    response.mutable_summary()->set_packets_written(42);
    Send(response);
  });
  ringtrace::protos::SessionSummary summary;
  base::Status status = connection_->DisableTracing(9, 60000, &summary);
  answer.join();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(summary.packets_written(), 42u);
}

}  // namespace
}  // namespace cli
}  // namespace ringtrace
