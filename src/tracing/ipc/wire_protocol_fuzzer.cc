/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Fuzzes DecodeMessage with arbitrary datagrams. Besides "no crash, no
// out-of-bounds read" (sanitizers), it checks that whatever decodes
// re-encodes to exactly the same bytes: the layout has a single valid
// encoding per message, so a decoder that accepted anything else would be
// accepting a malformed message.

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ringtrace/logging.h"
#include "src/tracing/ipc/wire_protocol.h"

namespace ringtrace {
namespace ipc {
namespace {

void FuzzOne(const uint8_t* data, size_t size) {
  Message msg;
  if (!DecodeMessage(data, size, &msg).ok())
    return;
  static uint8_t buf[kMaxMessageSize];
  size_t n = 0;
  switch (msg.type) {
    case MessageType::kHello:
      n = EncodeHello(msg.hello, buf, sizeof(buf));
      break;
    case MessageType::kHelloReply:
      n = EncodeHelloReply(msg.hello_reply, buf, sizeof(buf));
      break;
    case MessageType::kDrainRequest:
      n = msg.drain_request.has_loss_report
              ? EncodeLossReport(msg.drain_request, buf, sizeof(buf))
              : EncodeDrainRequest(buf, sizeof(buf));
      break;
    case MessageType::kRegisterDataSource:
      n = EncodeRegisterDataSource(msg.register_data_source, buf, sizeof(buf));
      break;
    case MessageType::kStartDataSource:
      n = EncodeStartDataSource(msg.start_data_source, buf, sizeof(buf));
      break;
    case MessageType::kStopDataSource:
      n = EncodeStopDataSource(msg.id, buf, sizeof(buf));
      break;
    case MessageType::kDataSourceStopped:
      n = EncodeDataSourceStopped(msg.id, buf, sizeof(buf));
      break;
    case MessageType::kFlush:
      n = EncodeFlush(msg.id, buf, sizeof(buf));
      break;
    case MessageType::kFlushAck:
      n = EncodeFlushAck(msg.id, buf, sizeof(buf));
      break;
    case MessageType::kDataSourceCategories:
      n = EncodeDataSourceCategories(msg.data_source_categories, buf,
                                     sizeof(buf));
      break;
  }
  RT_CHECK(n == size);
  RT_CHECK(memcmp(buf, data, size) == 0);
}

}  // namespace
}  // namespace ipc
}  // namespace ringtrace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ringtrace::ipc::FuzzOne(data, size);
  return 0;
}
