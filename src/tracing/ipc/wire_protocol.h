/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The producer <-> service wire protocol (docs/service.md).
//
// Transport: a Unix SOCK_SEQPACKET socket, so every message is one datagram
// with its boundaries kept by the kernel; the ring's memfd travels beside the
// HelloReply as SCM_RIGHTS ancillary data (unix_socket.h).
//
// Every message is at most kMaxMessageSize bytes:
//
//   offset 0  uint32 magic        kMagic ("RTIP")
//   offset 4  uint32 type         MessageType
//   offset 8  uint32 payload_size the bytes after this 12-byte header
//   offset 12 payload             layout per type, below
//
// All integers are little-endian, written and read byte by byte (no struct
// overlays, no alignment assumptions). A message is valid only if it is
// EXACTLY header + payload_size bytes and the payload is exactly the size its
// type defines; anything else is malformed. Both sides treat what they
// receive as hostile: DecodeMessage() never reads outside [data, data+size)
// and reports every defect as a Status.
//
// Messages:
//   kHello         producer -> service, first and only once.
//                  u32 protocol_version, u32 requested_ring_bytes (0: the
//                  service's default), u32 requested_chunk_size (0: default),
//                  u32 name_size, then name_size bytes of name
//                  (1..kMaxProducerNameSize printable ASCII 0x20..0x7e).
//   kHelloReply    service -> producer, once, answer to kHello.
//                  u32 status (HelloStatus), u32 producer_id, u32 chunk_size,
//                  u32 num_chunks, u32 target_buffer. On kOk the datagram
//                  carries exactly one fd: the ring's memfd, sealed against
//                  shrinking and growing. On any other status: no fd, and the
//                  service closes the connection.
//   kDrainRequest  producer -> service, any number of times after the reply.
//                  Empty payload. "Chunks were published / a writer wants
//                  room": the service schedules a drain pass of this
//                  producer's ring. Coalescing is the producer's job; the
//                  service also rate-limits.
//
// Anything else (unknown type, a second Hello, a DrainRequest before the
// reply, a message with an fd attached, a malformed message) is a protocol
// violation: the service drains what the ring holds and disconnects.

#ifndef SRC_TRACING_IPC_WIRE_PROTOCOL_H_
#define SRC_TRACING_IPC_WIRE_PROTOCOL_H_

#include <stddef.h>
#include <stdint.h>

#include <string>

#include "src/base/status.h"

namespace ringtrace {
namespace ipc {

constexpr uint32_t kMagic = 0x50495452;  // bytes "RTIP" little-endian
constexpr uint32_t kProtocolVersion = 1;
constexpr size_t kHeaderSize = 12;
constexpr size_t kMaxMessageSize = 256;
constexpr size_t kMaxProducerNameSize = 64;

enum class MessageType : uint32_t {
  kHello = 1,
  kHelloReply = 2,
  kDrainRequest = 3,
};

enum class HelloStatus : uint32_t {
  kOk = 0,
  kVersionMismatch = 1,   // protocol_version != kProtocolVersion
  kTooManyProducers = 2,  // the service's producer limit is reached
  kBadRequest = 3,        // a requested geometry the service cannot serve
  kServiceError = 4,      // the service could not create the ring
};
const char* HelloStatusToString(HelloStatus status);

struct HelloMsg {
  uint32_t protocol_version = kProtocolVersion;
  uint32_t requested_ring_bytes = 0;
  uint32_t requested_chunk_size = 0;
  std::string name;
};

struct HelloReplyMsg {
  HelloStatus status = HelloStatus::kOk;
  uint32_t producer_id = 0;
  uint32_t chunk_size = 0;
  uint32_t num_chunks = 0;
  uint32_t target_buffer = 0;
};

// One decoded message: |type| says which member is meaningful.
struct Message {
  MessageType type = MessageType::kDrainRequest;
  HelloMsg hello;
  HelloReplyMsg hello_reply;
};

// Encoders. Return the number of bytes written to |buf| (at most
// kMaxMessageSize), or 0 if |cap| is too small or the message is not
// encodable (a name that DecodeMessage would reject).
size_t EncodeHello(const HelloMsg& msg, uint8_t* buf, size_t cap);
size_t EncodeHelloReply(const HelloReplyMsg& msg, uint8_t* buf, size_t cap);
size_t EncodeDrainRequest(uint8_t* buf, size_t cap);

// Parses one whole datagram. On error |out| is unspecified and the Status
// says what was wrong (for the service's log; never echoed to the peer).
base::Status DecodeMessage(const uint8_t* data, size_t size, Message* out);

}  // namespace ipc
}  // namespace ringtrace

#endif  // SRC_TRACING_IPC_WIRE_PROTOCOL_H_
