/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The producer's half of the Hello round trip (docs/service.md), on a
// connected socket: send Hello, wait (bounded) for the HelloReply, validate
// it and map the ring it carries.
//
// The service's reply is input like any other: every defect (a datagram that
// is not a well-formed HelloReply, a refusal, an invalid geometry, a target
// buffer that does not fit a BufferID, no fd or more than one, a file that
// is too small or not sealed against shrinking) fails with a Status that
// says what was wrong, and every fd that came with the reply is closed on
// every failure path.
//
// Thread model: blocks the calling thread; the socket is used by this thread
// only during the call.

#ifndef SRC_TRACING_PRODUCER_HELLO_CLIENT_H_
#define SRC_TRACING_PRODUCER_HELLO_CLIENT_H_

#include <stdint.h>

#include <memory>

#include "ringtrace/producer.h"
#include "ringtrace/status.h"
#include "src/tracing/core/shm_ring/shm_region.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/ipc/wire_protocol.h"

namespace ringtrace {
namespace producer {

struct HandshakeResult {
  ipc::HelloReplyMsg reply;  // validated: status kOk, geometry valid
  std::unique_ptr<shm_ring::SharedRingRegion> region;  // the mapped ring
};

// Uses options.name, requested_ring_bytes, requested_chunk_size and
// connect_timeout_ms (the wait for the reply). On success |*result| holds
// the reply and the mapping.
base::Status Handshake(ipc::UnixSocket* socket,
                       const ProducerOptions& options,
                       HandshakeResult* result);
// The same, waiting at most |timeout_ms| for the reply (Producer::Connect
// passes what is left of connect_timeout_ms after connecting).
base::Status Handshake(ipc::UnixSocket* socket,
                       const ProducerOptions& options,
                       uint32_t timeout_ms,
                       HandshakeResult* result);

}  // namespace producer
}  // namespace ringtrace

#endif  // SRC_TRACING_PRODUCER_HELLO_CLIENT_H_
