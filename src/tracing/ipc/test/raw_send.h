/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Sends a datagram with any number of fds attached, bypassing
// UnixSocket::Send() (which attaches at most one): how the tests play a
// hostile peer that attaches more fds than the protocol allows.

#ifndef SRC_TRACING_IPC_TEST_RAW_SEND_H_
#define SRC_TRACING_IPC_TEST_RAW_SEND_H_

#include <stddef.h>

#include <vector>

namespace ringtrace {
namespace ipc {
namespace test {

// sendmsg(2) of |size| bytes with |fds| as one SCM_RIGHTS message (none if
// empty), MSG_NOSIGNAL. True if the whole datagram went out.
bool SendRawWithFds(int socket_fd,
                    const void* data,
                    size_t size,
                    const std::vector<int>& fds);

}  // namespace test
}  // namespace ipc
}  // namespace ringtrace

#endif  // SRC_TRACING_IPC_TEST_RAW_SEND_H_
