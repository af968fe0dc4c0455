/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/producer/hello_client.h"
#include "src/tracing/core/shm_ring/writer_loss_area.h"

#include <limits.h>

#include <utility>

namespace ringtrace {
namespace producer {

base::Status Handshake(ipc::UnixSocket* socket,
                       const ProducerOptions& options,
                       HandshakeResult* result) {
  return Handshake(socket, options, options.connect_timeout_ms, result);
}

base::Status Handshake(ipc::UnixSocket* socket,
                       const ProducerOptions& options,
                       uint32_t timeout_ms,
                       HandshakeResult* result) {
  ipc::HelloMsg hello;
  hello.requested_ring_bytes = options.requested_ring_bytes;
  hello.requested_chunk_size = options.requested_chunk_size;
  hello.name = options.name;
  // Hello and HelloReply are small; a longer datagram is refused whole
  // (the calling app thread's stack may be small).
  uint8_t buf[ipc::kMaxProducerMessageSize];
  const size_t hello_size = ipc::EncodeHello(hello, buf, sizeof(buf));
  if (hello_size == 0) {
    return base::ErrStatus(
        "invalid producer name '%s' (1..%zu printable ASCII characters)",
        options.name.c_str(), ipc::kMaxProducerNameSize);
  }
  base::Status status = socket->Send(buf, hello_size);
  if (!status.ok())
    return base::ErrStatus("sending Hello: %s", status.message().c_str());

  const int wait_ms =
      timeout_ms > INT_MAX ? INT_MAX : static_cast<int>(timeout_ms);
  if (!socket->WaitReadable(wait_ms)) {
    return base::ErrStatus(
        "the service did not answer the Hello within %u ms "
        "(ProducerOptions::connect_timeout_ms)",
        options.connect_timeout_ms);
  }
  size_t size = 0;
  base::ScopedFd fd;  // closed on every return below unless handed to MapFd
  switch (socket->Receive(buf, sizeof(buf), &size, &fd, &status)) {
    case ipc::UnixSocket::RecvResult::kMessage:
      break;
    case ipc::UnixSocket::RecvResult::kWouldBlock:
      // The socket is blocking; only a spurious wake-up can get here.
      return base::ErrStatus("no HelloReply after the socket became readable");
    case ipc::UnixSocket::RecvResult::kClosed:
      return base::ErrStatus(
          "the service closed the connection without "
          "answering the Hello");
    case ipc::UnixSocket::RecvResult::kTooLong:
    case ipc::UnixSocket::RecvResult::kTooManyFds:
    case ipc::UnixSocket::RecvResult::kError:
      return base::ErrStatus("receiving HelloReply: %s",
                             status.message().c_str());
  }

  ipc::Message msg;
  status = ipc::DecodeMessage(buf, size, &msg);
  if (!status.ok())
    return base::ErrStatus("malformed HelloReply: %s",
                           status.message().c_str());
  if (msg.type != ipc::MessageType::kHelloReply) {
    return base::ErrStatus("expected a HelloReply, got message type %u",
                           static_cast<uint32_t>(msg.type));
  }
  const ipc::HelloReplyMsg& reply = msg.hello_reply;
  if (reply.status != ipc::HelloStatus::kOk) {
    return base::ErrStatus("the service refused the producer: %s",
                           ipc::HelloStatusToString(reply.status));
  }
  const shm_ring::GeometryError ge =
      shm_ring::ValidateGeometry(reply.chunk_size, reply.num_chunks);
  if (ge != shm_ring::GeometryError::kOk) {
    return base::ErrStatus(
        "HelloReply has an invalid ring geometry (chunk_size %u, num_chunks "
        "%u): %s",
        reply.chunk_size, reply.num_chunks,
        shm_ring::GeometryErrorToString(ge));
  }
  const uint64_t ring_bytes = static_cast<uint64_t>(reply.chunk_size) *
                              static_cast<uint64_t>(reply.num_chunks);
  if (ring_bytes > options.max_ring_bytes) {
    return base::ErrStatus(
        "HelloReply ring of %llu bytes exceeds the producer's limit of %llu "
        "(ProducerOptions::max_ring_bytes)",
        static_cast<unsigned long long>(ring_bytes),
        static_cast<unsigned long long>(options.max_ring_bytes));
  }
  // The wire's 32-bit field carries a 16-bit ProducerID (ringtrace/ids.h):
  // reject a wider value rather than truncate it into another producer's.
  if (reply.producer_id > kMaxProducerID) {
    return base::ErrStatus("HelloReply producer id %u is not a ProducerID",
                           reply.producer_id);
  }
  if (reply.target_buffer > 0xffff) {
    return base::ErrStatus("HelloReply target buffer %u is not a BufferID",
                           reply.target_buffer);
  }
  if (!fd.valid())
    return base::ErrStatus("HelloReply carries no ring fd");
  // Exactly one fd: Receive() fails on a datagram with more (kTooManyFds
  // above).

  const shm_ring::RingGeometry geometry(reply.chunk_size, reply.num_chunks);
  // MapFd takes the fd, and closes it if it fails. The file also holds the
  // writer loss area after the ring (writer_loss_area.h).
  auto region = shm_ring::SharedRingRegion::MapFd(
      fd.release(), geometry, shm_ring::kWriterLossAreaSize, &status);
  if (!region)
    return base::ErrStatus("cannot map the ring: %s", status.message().c_str());
  result->reply = reply;
  result->region = std::move(region);
  return base::OkStatus();
}

}  // namespace producer
}  // namespace ringtrace
