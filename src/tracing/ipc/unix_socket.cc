/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/ipc/unix_socket.h"
#include "src/base/time.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <utility>

namespace ringtrace {
namespace ipc {
namespace {

void SetStatus(base::Status* status, base::Status s) {
  if (status)
    *status = std::move(s);
}

// Fills |addr| for |path|; false if the path does not fit sun_path (with its
// terminating NUL) or is empty.
bool MakeAddress(const std::string& path, sockaddr_un* addr) {
  memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr->sun_path))
    return false;
  memcpy(addr->sun_path, path.data(), path.size());
  return true;
}

// What connect(2) to |addr| says: 0 if something accepts connections there
// (a live listener), else the errno (ECONNREFUSED: a stale socket file).
int ProbeConnect(const sockaddr_un& addr) {
  base::ScopedFd probe(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!probe.valid())
    return errno;
  int rc;
  do {
    rc = connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr),
                 sizeof(addr));
  } while (rc != 0 && errno == EINTR);
  return rc == 0 ? 0 : errno;
}

const char* FileTypeName(mode_t mode) {
  if (S_ISREG(mode))
    return "a regular file";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISLNK(mode))
    return "a symbolic link";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return "a device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "a file of unknown type";
}

// Clears |path| for bind(2): ok if nothing is there or a stale socket was
// removed; an error naming what is there otherwise. Never removes anything
// but a socket nobody listens on.
base::Status ClearStaleSocket(const std::string& path,
                              const sockaddr_un& addr) {
  struct stat st = {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return base::OkStatus();
    return base::ErrStatus("%s: %s", path.c_str(), strerror(errno));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return base::ErrStatus(
        "%s exists and is %s, not a socket; not replacing it (remove it or "
        "choose another --socket path)",
        path.c_str(), FileTypeName(st.st_mode));
  }
  const int probe = ProbeConnect(addr);
  if (probe == 0) {
    return base::ErrStatus("another ringtraced is listening on %s",
                           path.c_str());
  }
  if (probe != ECONNREFUSED) {
    return base::ErrStatus(
        "%s is a socket that cannot be probed (connect: %s); not replacing "
        "it",
        path.c_str(), strerror(probe));
  }
  // Stale. Unlink it only if it is still the socket just probed.
  struct stat again = {};
  if (lstat(path.c_str(), &again) != 0 || again.st_dev != st.st_dev ||
      again.st_ino != st.st_ino) {
    return base::ErrStatus("%s changed while it was probed; not replacing it",
                           path.c_str());
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return base::ErrStatus("cannot remove the stale socket %s: %s",
                           path.c_str(), strerror(errno));
  }
  return base::OkStatus();
}

// Most fds a received datagram may carry before MSG_CTRUNC; any of them
// beyond the first is closed at once.
constexpr size_t kMaxReceivedFds = 4;

}  // namespace

UnixSocket::UnixSocket(base::ScopedFd fd) : fd_(std::move(fd)) {}

UnixSocket::~UnixSocket() {
  fd_.reset();
  if (unlink_path_.empty())
    return;
  // Only our own socket file: something else may have replaced it since.
  struct stat st = {};
  if (lstat(unlink_path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) &&
      st.st_dev == unlink_dev_ && st.st_ino == unlink_ino_) {
    unlink(unlink_path_.c_str());
  }
}

std::unique_ptr<UnixSocket> UnixSocket::Listen(const std::string& path,
                                               const ListenOptions& options,
                                               base::Status* status) {
  sockaddr_un addr;
  if (!MakeAddress(path, &addr)) {
    SetStatus(status, base::ErrStatus("bad socket path '%s' (empty or longer "
                                      "than %zu bytes)",
                                      path.c_str(), sizeof(addr.sun_path) - 1));
    return nullptr;
  }
  if ((options.mode & ~mode_t{0777}) != 0) {
    SetStatus(status, base::ErrStatus("socket mode %o: only permission bits",
                                      static_cast<unsigned>(options.mode)));
    return nullptr;
  }
  base::ScopedFd fd(
      socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) {
    SetStatus(status, base::ErrStatus("socket: %s", strerror(errno)));
    return nullptr;
  }
  base::Status cleared = ClearStaleSocket(path, addr);
  if (!cleared.ok()) {
    SetStatus(status, std::move(cleared));
    return nullptr;
  }
  // The file bind(2) creates gets 0777 & ~umask: 0600 here, widened below.
  // umask is per process; only the service's start-up binds.
  const mode_t old_umask = umask(0177);
  const int bind_rc =
      bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  const int bind_errno = errno;
  umask(old_umask);
  if (bind_rc != 0) {
    SetStatus(status,
              base::ErrStatus(bind_errno == EADDRINUSE
                                  ? "bind %s: %s (it appeared after the check)"
                                  : "bind %s: %s",
                              path.c_str(), strerror(bind_errno)));
    return nullptr;
  }
  std::unique_ptr<UnixSocket> listener(new UnixSocket(std::move(fd)));
  struct stat st = {};
  if (lstat(path.c_str(), &st) != 0) {
    SetStatus(status, base::ErrStatus("lstat %s after bind: %s", path.c_str(),
                                      strerror(errno)));
    return nullptr;  // nothing recorded: nothing to remove
  }
  listener->unlink_path_ = path;
  listener->unlink_dev_ = st.st_dev;
  listener->unlink_ino_ = st.st_ino;
  // From here on, an error path destroys |listener|, which removes the file.
  if (options.group != static_cast<gid_t>(-1) &&
      chown(path.c_str(), static_cast<uid_t>(-1), options.group) != 0) {
    SetStatus(status, base::ErrStatus("chown %s to group %u: %s", path.c_str(),
                                      static_cast<unsigned>(options.group),
                                      strerror(errno)));
    return nullptr;
  }
  if (chmod(path.c_str(), options.mode) != 0) {
    SetStatus(status, base::ErrStatus("chmod %s %o: %s", path.c_str(),
                                      static_cast<unsigned>(options.mode),
                                      strerror(errno)));
    return nullptr;
  }
  if (listen(listener->fd(), SOMAXCONN) != 0) {
    SetStatus(status, base::ErrStatus("listen: %s", strerror(errno)));
    return nullptr;
  }
  SetStatus(status, base::OkStatus());
  return listener;
}

std::unique_ptr<UnixSocket> UnixSocket::Connect(const std::string& path,
                                                base::Status* status) {
  sockaddr_un addr;
  if (!MakeAddress(path, &addr)) {
    SetStatus(status, base::ErrStatus("bad socket path '%s'", path.c_str()));
    return nullptr;
  }
  base::ScopedFd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    SetStatus(status, base::ErrStatus("socket: %s", strerror(errno)));
    return nullptr;
  }
  int rc;
  do {
    rc = connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr),
                 sizeof(addr));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    SetStatus(status,
              base::ErrStatus("connect %s: %s", path.c_str(), strerror(errno)));
    return nullptr;
  }
  SetStatus(status, base::OkStatus());
  return std::unique_ptr<UnixSocket>(new UnixSocket(std::move(fd)));
}

namespace {

// One non-blocking connect attempt, waiting for an in-progress connect (not
// seen on Linux for AF_UNIX, handled anyway) up to |wait_ms|. Returns 0, or
// the errno that ended it.
int ConnectOnce(int fd, const sockaddr_un& addr, int wait_ms) {
  int rc;
  do {
    rc = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  } while (rc != 0 && errno == EINTR);
  if (rc == 0)
    return 0;
  if (errno != EINPROGRESS)
    return errno;
  pollfd p = {};
  p.fd = fd;
  p.events = POLLOUT;
  if (poll(&p, 1, wait_ms) <= 0)
    return ETIMEDOUT;
  int error = 0;
  socklen_t len = sizeof(error);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0)
    return errno;
  return error;
}

}  // namespace

std::unique_ptr<UnixSocket> UnixSocket::ConnectWithTimeout(
    const std::string& path,
    int timeout_ms,
    base::Status* status) {
  sockaddr_un addr;
  if (!MakeAddress(path, &addr)) {
    SetStatus(status, base::ErrStatus("bad socket path '%s'", path.c_str()));
    return nullptr;
  }
  base::ScopedFd fd(
      socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) {
    SetStatus(status, base::ErrStatus("socket: %s", strerror(errno)));
    return nullptr;
  }
  const uint64_t deadline_ms =
      base::MonotonicMs() +
      static_cast<uint64_t>(timeout_ms < 0 ? 0 : timeout_ms);
  // Sleep between attempts on a full backlog: short at first (a listener
  // that accepts frees a slot soon), then at most 10 ms.
  int sleep_ms = 1;
  for (;;) {
    const uint64_t now = base::MonotonicMs();
    const int left =
        now >= deadline_ms ? 0 : static_cast<int>(deadline_ms - now);
    const int error = ConnectOnce(fd.get(), addr, left);
    if (error == 0)
      break;
    if (error != EAGAIN || left == 0) {
      SetStatus(status, base::ErrStatus(
                            "connect %s: %s", path.c_str(),
                            error == EAGAIN || error == ETIMEDOUT
                                ? "timed out (the listener's backlog is full)"
                                : strerror(error)));
      return nullptr;
    }
    poll(nullptr, 0, sleep_ms < left ? sleep_ms : left);
    sleep_ms = sleep_ms * 2 > 10 ? 10 : sleep_ms * 2;
  }
  std::unique_ptr<UnixSocket> socket(new UnixSocket(std::move(fd)));
  socket->SetNonBlocking(false);
  SetStatus(status, base::OkStatus());
  return socket;
}

bool UnixSocket::Pair(std::unique_ptr<UnixSocket>* a,
                      std::unique_ptr<UnixSocket>* b) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
    return false;
  a->reset(new UnixSocket(base::ScopedFd(fds[0])));
  b->reset(new UnixSocket(base::ScopedFd(fds[1])));
  return true;
}

std::unique_ptr<UnixSocket> UnixSocket::Accept(base::Status* status) {
  for (;;) {
    const int fd =
        accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      SetStatus(status, base::OkStatus());
      return std::unique_ptr<UnixSocket>(new UnixSocket(base::ScopedFd(fd)));
    }
    if (errno == EINTR)
      continue;
    // A connection that was reset before we got to it is not our error.
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED) {
      SetStatus(status, base::OkStatus());
      return nullptr;
    }
    SetStatus(status, base::ErrStatus("accept: %s", strerror(errno)));
    return nullptr;
  }
}

base::Status UnixSocket::Send(const uint8_t* data,
                              size_t size,
                              int fd,
                              bool* would_block) {
  if (would_block)
    *would_block = false;
  if (size == 0 || size > 65536)
    return base::ErrStatus("datagram of %zu bytes", size);
  iovec iov;
  iov.iov_base = const_cast<uint8_t*>(data);
  iov.iov_len = size;
  msghdr msg;
  memset(&msg, 0, sizeof(msg));
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  if (fd >= 0) {
    memset(control, 0, sizeof(control));
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
  }
  for (;;) {
    const ssize_t n = sendmsg(fd_.get(), &msg, MSG_NOSIGNAL);
    if (n >= 0) {
      // SOCK_SEQPACKET sends a datagram whole or not at all.
      if (static_cast<size_t>(n) != size)
        return base::ErrStatus("short send: %zd of %zu", n, size);
      return base::OkStatus();
    }
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (would_block)
        *would_block = true;
      return base::ErrStatus("send would block");
    }
    return base::ErrStatus("send: %s", strerror(errno));
  }
}

UnixSocket::RecvResult UnixSocket::Receive(uint8_t* buf,
                                           size_t cap,
                                           size_t* size,
                                           base::ScopedFd* fd,
                                           base::Status* status) {
  *size = 0;
  if (fd)
    fd->reset();
  SetStatus(status, base::OkStatus());
  iovec iov;
  iov.iov_base = buf;
  iov.iov_len = cap;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxReceivedFds)];
  msghdr msg;
  ssize_t n;
  for (;;) {
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    n = recvmsg(fd_.get(), &msg, MSG_CMSG_CLOEXEC);
    if (n >= 0 || errno != EINTR)
      break;
  }
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      return RecvResult::kWouldBlock;
    if (errno == ECONNRESET)
      return RecvResult::kClosed;
    SetStatus(status, base::ErrStatus("recv: %s", strerror(errno)));
    return RecvResult::kError;
  }

  // Take ownership of every fd that came, whatever happens next: each one is
  // either handed to the caller (the first, if wanted) or closed here.
  base::ScopedFd first;
  size_t num_fds = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
      continue;
    const size_t bytes = c->cmsg_len - CMSG_LEN(0);
    const size_t count = bytes / sizeof(int);
    for (size_t i = 0; i < count; i++) {
      int received;
      memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (num_fds++ == 0)
        first.reset(received);
      else
        close(received);
    }
  }
  if (n == 0)
    return RecvResult::kClosed;
  if (msg.msg_flags & MSG_TRUNC) {
    SetStatus(status, base::ErrStatus("datagram longer than %zu bytes", cap));
    return RecvResult::kTooLong;
  }
  if (msg.msg_flags & MSG_CTRUNC) {
    SetStatus(status,
              base::ErrStatus("more than %zu fds attached", kMaxReceivedFds));
    return RecvResult::kTooManyFds;
  }
  if (num_fds > 1) {
    SetStatus(status, base::ErrStatus("%zu fds attached, at most one expected",
                                      num_fds));
    return RecvResult::kTooManyFds;
  }
  *size = static_cast<size_t>(n);
  if (fd)
    *fd = std::move(first);
  return RecvResult::kMessage;
}

bool UnixSocket::WaitReadable(int timeout_ms) {
  pollfd p;
  p.fd = fd_.get();
  p.events = POLLIN;
  const uint64_t start_ns = base::MonotonicNs();
  int remaining_ms = timeout_ms;
  for (;;) {
    p.revents = 0;
    const int rc = poll(&p, 1, remaining_ms);
    if (rc > 0)
      return true;
    if (rc == 0)
      return false;
    if (errno != EINTR)
      return true;  // let the caller's Receive() report the error
    if (timeout_ms < 0)
      continue;  // wait forever
    const int64_t elapsed_ms =
        static_cast<int64_t>((base::MonotonicNs() - start_ns) / base::kNsPerMs);
    if (elapsed_ms >= timeout_ms)
      return false;
    remaining_ms = static_cast<int>(timeout_ms - elapsed_ms);
  }
}

bool UnixSocket::GetPeerCredentials(base::ClientIdentity* creds) const {
  ucred cred;
  socklen_t len = sizeof(cred);
  if (getsockopt(fd_.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
      len != sizeof(cred)) {
    return false;
  }
  creds->pid = static_cast<int32_t>(cred.pid);
  creds->uid = static_cast<int32_t>(cred.uid);
  return true;
}

void UnixSocket::SetNonBlocking(bool non_blocking) {
  const int flags = fcntl(fd_.get(), F_GETFL);
  if (flags < 0)
    return;
  const int wanted =
      non_blocking ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  if (wanted != flags)
    fcntl(fd_.get(), F_SETFL, wanted);
}

}  // namespace ipc
}  // namespace ringtrace
