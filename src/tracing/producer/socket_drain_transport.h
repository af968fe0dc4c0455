/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// SocketDrainTransport: sends DrainRequests on the producer's connected
// SOCK_SEQPACKET socket, from any app thread, without ever blocking.
//
// It calls send(2) on the socket's fd directly with MSG_DONTWAIT |
// MSG_NOSIGNAL rather than going through ipc::UnixSocket::Send():
//   - UnixSocket is used by one thread at a time, while DrainNotifier sends
//     from whichever app thread claimed the request. send(2) on one fd from
//     several threads is safe, and a SOCK_SEQPACKET datagram goes out whole
//     or not at all, so concurrent sends cannot interleave bytes;
//   - MSG_DONTWAIT makes this one call non-blocking while the socket stays
//     blocking for the Hello round trip and connected().
// A plain DrainRequest is encoded once, at construction. With a
// WriterLossRegistry, a request carries the loss counters of up to
// ipc::kMaxLossEntriesPerMessage writers whose counters changed since they
// were last sent (writer_loss_registry.h); when nothing changed, which the
// registry tells with two loads, the plain request goes out.
//
// Results: sent; kWouldBlock for EAGAIN/EWOULDBLOCK and ENOBUFS (the peer is
// not reading or the kernel is short of buffers: the request is dropped);
// kDisconnected for any other error (EPIPE, ECONNRESET, ...): the service is
// gone. EINTR is retried a bounded number of times. errno is preserved:
// the call runs inside the app's code.
//
// Lifetime: the fd is not owned and must stay open (never closed and reused
// for something else) while any thread may still send: the Producer closes
// its socket only after every writer is gone.

#ifndef SRC_TRACING_PRODUCER_SOCKET_DRAIN_TRANSPORT_H_
#define SRC_TRACING_PRODUCER_SOCKET_DRAIN_TRANSPORT_H_

#include <stddef.h>
#include <stdint.h>

#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/producer/drain_notifier.h"
#include "src/tracing/producer/writer_loss_registry.h"

namespace ringtrace {
namespace producer {

class SocketDrainTransport : public DrainRequestTransport {
 public:
  // |losses| (not owned, may be null) must outlive the transport.
  explicit SocketDrainTransport(int fd, WriterLossRegistry* losses = nullptr);
  ~SocketDrainTransport() override;

  SendResult SendDrainRequest() override;

  // Sends |size| bytes with the same rules (never blocks).
  SendResult SendMessage(const uint8_t* data, size_t size);

 private:
  const int fd_;
  WriterLossRegistry* const losses_;
  uint8_t message_[ipc::kMaxProducerMessageSize];
  size_t message_size_ = 0;
};

}  // namespace producer
}  // namespace ringtrace

#endif  // SRC_TRACING_PRODUCER_SOCKET_DRAIN_TRANSPORT_H_
