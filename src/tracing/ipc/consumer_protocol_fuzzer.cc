/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Fuzzes DecodeConsumerRequest (with and without an fd) and
// DecodeConsumerResponse with arbitrary datagrams. Besides "no crash, no
// out-of-bounds read, no unbounded work" (sanitizers, libFuzzer's limits),
// it checks that validation is a property of the message, not of its bytes:
// whatever decodes re-encodes into a datagram that decodes again to the same
// message.

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "protos/ringtrace/ipc/consumer_port.pb.h"
#include "ringtrace/logging.h"
#include "src/tracing/ipc/consumer_protocol.h"

namespace ringtrace {
namespace ipc {
namespace {

void FuzzRequest(const uint8_t* data, size_t size, bool has_fd) {
  protos::ConsumerRequest req;
  if (!DecodeConsumerRequest(data, size, has_fd, &req).ok())
    return;
  RT_CHECK(ConsumerRequestNeedsFd(req) == has_fd);
  std::vector<uint8_t> again;
  RT_CHECK(EncodeConsumerRequest(req, &again).ok());
  protos::ConsumerRequest req2;
  RT_CHECK(
      DecodeConsumerRequest(again.data(), again.size(), has_fd, &req2).ok());
  RT_CHECK(req2.SerializeAsString() == req.SerializeAsString());
}

void FuzzResponse(const uint8_t* data, size_t size) {
  protos::ConsumerResponse resp;
  if (!DecodeConsumerResponse(data, size, &resp).ok())
    return;
  std::vector<uint8_t> again;
  RT_CHECK(EncodeConsumerResponse(resp, &again).ok());
  protos::ConsumerResponse resp2;
  RT_CHECK(DecodeConsumerResponse(again.data(), again.size(), &resp2).ok());
  RT_CHECK(resp2.SerializeAsString() == resp.SerializeAsString());
}

}  // namespace
}  // namespace ipc
}  // namespace ringtrace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ringtrace::ipc::FuzzRequest(data, size, false);
  ringtrace::ipc::FuzzRequest(data, size, true);
  ringtrace::ipc::FuzzResponse(data, size);
  return 0;
}
