/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/producer/socket_drain_transport.h"

#include <gtest/gtest.h>

#include <errno.h>

#include <memory>

#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/ipc/wire_protocol.h"

namespace ringtrace {
namespace producer {
namespace {

using ipc::UnixSocket;
using SendResult = DrainRequestTransport::SendResult;

TEST(ProducerSocketDrainTransportTest, SendsWellFormedDrainRequests) {
  std::unique_ptr<UnixSocket> producer_end, service_end;
  ASSERT_TRUE(UnixSocket::Pair(&producer_end, &service_end));
  SocketDrainTransport transport(producer_end->fd());
  EXPECT_EQ(transport.SendDrainRequest(), SendResult::kSent);
  EXPECT_EQ(transport.SendDrainRequest(), SendResult::kSent);
  for (int i = 0; i < 2; ++i) {
    uint8_t buf[ipc::kMaxMessageSize];
    size_t size = 0;
    base::ScopedFd fd;
    base::Status status;
    ASSERT_EQ(service_end->Receive(buf, sizeof(buf), &size, &fd, &status),
              UnixSocket::RecvResult::kMessage);
    EXPECT_FALSE(fd.valid());
    ipc::Message msg;
    ASSERT_TRUE(ipc::DecodeMessage(buf, size, &msg).ok());
    EXPECT_EQ(msg.type, ipc::MessageType::kDrainRequest);
  }
}

// A service that does not read: the blocking socket fills up and the
// transport reports kWouldBlock instead of blocking the app thread. Once the
// service reads, sending works again.
TEST(ProducerSocketDrainTransportTest, FullSocketWouldBlockNeverBlocks) {
  std::unique_ptr<UnixSocket> producer_end, service_end;
  ASSERT_TRUE(UnixSocket::Pair(&producer_end, &service_end));
  SocketDrainTransport transport(producer_end->fd());
  // The socket buffer holds a few hundred small datagrams; the bound only
  // keeps a broken kernel from looping forever.
  uint32_t sent = 0;
  SendResult r = SendResult::kSent;
  while (sent < 1000000 &&
         (r = transport.SendDrainRequest()) == SendResult::kSent)
    ++sent;
  EXPECT_EQ(r, SendResult::kWouldBlock);
  EXPECT_GT(sent, 0u);
  // The send runs inside the app's code: its EAGAIN must not reach errno.
  errno = EDOM;
  EXPECT_EQ(transport.SendDrainRequest(), SendResult::kWouldBlock);
  EXPECT_EQ(errno, EDOM);

  uint8_t buf[ipc::kMaxMessageSize];
  size_t size = 0;
  base::Status status;
  ASSERT_EQ(service_end->Receive(buf, sizeof(buf), &size, nullptr, &status),
            UnixSocket::RecvResult::kMessage);
  EXPECT_EQ(transport.SendDrainRequest(), SendResult::kSent);
}

TEST(ProducerSocketDrainTransportTest, PeerGoneIsDisconnected) {
  std::unique_ptr<UnixSocket> producer_end, service_end;
  ASSERT_TRUE(UnixSocket::Pair(&producer_end, &service_end));
  SocketDrainTransport transport(producer_end->fd());
  service_end.reset();
  // MSG_NOSIGNAL: EPIPE, not SIGPIPE (the test would die); and not in
  // errno either.
  errno = EDOM;
  EXPECT_EQ(transport.SendDrainRequest(), SendResult::kDisconnected);
  EXPECT_EQ(errno, EDOM);
  EXPECT_EQ(transport.SendDrainRequest(), SendResult::kDisconnected);
}

}  // namespace
}  // namespace producer
}  // namespace ringtrace
