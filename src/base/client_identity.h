/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ClientIdentity: the uid and pid of the process at the other end of a Unix
// socket, as the kernel reports them (SO_PEERCRED, ipc::UnixSocket::
// GetPeerCredentials), never as the peer claims them. The one definition of
// that pair: the service reads it for every producer and consumer it admits
// and stamps it on the producer's data (TraceBufferV2 keeps it per sequence,
// the exporter writes it as trusted_uid / trusted_pid), and the consumer
// client reads the service's to check who it talks to.
//
// Both fields are the int32 of the trace format (TracePacket.trusted_uid and
// trusted_pid); a uid_t above 2^31 - 1 keeps its bits. A default-constructed
// identity is {uid 0, pid 0}: only for buffers written without a socket (tests,
// tools); every peer of a socket gets the kernel's values.
//
// A plain value type: no invariants, no threads.

#ifndef SRC_BASE_CLIENT_IDENTITY_H_
#define SRC_BASE_CLIENT_IDENTITY_H_

#include <stdint.h>

namespace ringtrace {
namespace base {

struct ClientIdentity {
  int32_t uid = 0;
  int32_t pid = 0;
};

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_CLIENT_IDENTITY_H_
