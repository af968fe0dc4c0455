/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/producer/socket_drain_transport.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "ringtrace/logging.h"
#include "src/base/scoped_errno.h"

namespace ringtrace {
namespace producer {

namespace {
// EINTR retries per request; a signal storm costs a dropped request, never
// an unbounded loop on an app thread.
constexpr int kMaxEintrRetries = 4;
}  // namespace

SocketDrainTransport::SocketDrainTransport(int fd, WriterLossRegistry* losses)
    : fd_(fd), losses_(losses) {
  message_size_ = ipc::EncodeDrainRequest(message_, sizeof(message_));
  RT_CHECK(message_size_ > 0);
}

SocketDrainTransport::~SocketDrainTransport() = default;

DrainRequestTransport::SendResult SocketDrainTransport::SendDrainRequest() {
  if (losses_) {
    ipc::DrainRequestMsg report;
    WriterLossRegistry::Batch batch;
    if (losses_->CollectChanged(&report, &batch) > 0) {
      uint8_t buf[ipc::kMaxProducerMessageSize];  // an app thread's stack
      const size_t size = ipc::EncodeLossReport(report, buf, sizeof(buf));
      RT_CHECK(size > 0);  // our own entries: valid ids, at most the maximum
      const SendResult result = SendMessage(buf, size);
      if (result == SendResult::kSent)
        losses_->MarkReported(batch);
      return result;
    }
  }
  return SendMessage(message_, message_size_);
}

DrainRequestTransport::SendResult SocketDrainTransport::SendMessage(
    const uint8_t* data,
    size_t size) {
  // This runs inside the app's own code (a trace point): whatever send(2)
  // does to errno must not leak into it.
  const base::ScopedPreserveErrno preserve_errno;
  for (int attempt = 0; attempt <= kMaxEintrRetries; ++attempt) {
    const ssize_t n = send(fd_, data, size, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(size))
      return SendResult::kSent;
    if (n >= 0)
      return SendResult::kDisconnected;  // SEQPACKET: cannot be short
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
      return SendResult::kWouldBlock;
    return SendResult::kDisconnected;
  }
  return SendResult::kWouldBlock;
}

}  // namespace producer
}  // namespace ringtrace
