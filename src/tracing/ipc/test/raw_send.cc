/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/ipc/test/raw_send.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

namespace ringtrace {
namespace ipc {
namespace test {

bool SendRawWithFds(int socket_fd,
                    const void* data,
                    size_t size,
                    const std::vector<int>& fds) {
  iovec iov;
  iov.iov_base = const_cast<void*>(data);
  iov.iov_len = size;
  msghdr msg;
  memset(&msg, 0, sizeof(msg));
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  // cmsghdr-aligned storage for the control message.
  std::vector<cmsghdr> control(
      (CMSG_SPACE(sizeof(int) * fds.size()) + sizeof(cmsghdr) - 1) /
      sizeof(cmsghdr));
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());
  }
  return sendmsg(socket_fd, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(size);
}

}  // namespace test
}  // namespace ipc
}  // namespace ringtrace
