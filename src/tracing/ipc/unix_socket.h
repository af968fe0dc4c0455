/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// UnixSocket: a SOCK_SEQPACKET Unix socket (one datagram = one message) with
// file-descriptor passing and peer credentials. The transport of
// wire_protocol.h; nothing here knows the message layout.
//
// Hostile peers: Receive() reads into a caller buffer of fixed capacity and
// reports a datagram longer than it (MSG_TRUNC) as an error instead of
// silently cutting it; a datagram carrying more than one fd is refused the
// same way, and every fd a refused (or unwanted) datagram brought is closed
// at once (a peer cannot make us leak descriptors); every fd we receive has
// FD_CLOEXEC (MSG_CMSG_CLOEXEC). Sends use
// MSG_NOSIGNAL: a peer that went away is an error, never a SIGPIPE.
//
// Thread model: one UnixSocket is used by one thread at a time; distinct
// sockets are independent.

#ifndef SRC_TRACING_IPC_UNIX_SOCKET_H_
#define SRC_TRACING_IPC_UNIX_SOCKET_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <memory>
#include <string>

#include "ringtrace/status.h"
#include "src/base/client_identity.h"
#include "src/base/scoped_fd.h"

namespace ringtrace {
namespace ipc {

// How Listen() publishes its socket file.
struct ListenOptions {
  // Permission bits of the socket file (connect(2) needs write permission):
  // the access control of the service. The file is created with 0600 (a
  // umask around bind(2)) and only then widened to |mode|, so it is never
  // more open than asked, not even for an instant.
  mode_t mode = 0600;
  // Group of the socket file; (gid_t)-1 keeps the creator's group.
  gid_t group = static_cast<gid_t>(-1);
};

class UnixSocket {
 public:
  // A listening socket bound at |path| (a filesystem path; its directory
  // must exist), non-blocking. What may already be at |path|:
  //   - nothing: the socket is created there;
  //   - a stale socket (lstat says socket, connect(2) gets ECONNREFUSED:
  //     a service that died without removing it): replaced;
  //   - a live socket: an error, "another ringtraced is listening on PATH";
  //   - anything else (regular file, directory, symlink, FIFO, a socket we
  //     cannot probe): an error naming it. Nothing but a stale socket is
  //     ever removed.
  // The listener removes its socket file when destroyed, only if the file
  // at |path| is still the one it created (same inode).
  static std::unique_ptr<UnixSocket> Listen(const std::string& path,
                                            const ListenOptions& options,
                                            base::Status* status);
  static std::unique_ptr<UnixSocket> Listen(const std::string& path,
                                            base::Status* status) {
    return Listen(path, ListenOptions(), status);
  }
  // A blocking connection to the listener at |path|.
  static std::unique_ptr<UnixSocket> Connect(const std::string& path,
                                             base::Status* status);
  // Like Connect(), but gives up after |timeout_ms| (>= 0). connect(2) on a
  // Unix socket blocks while the listener's backlog is full; here the
  // connect is non-blocking and retried (EAGAIN: the backlog is full) with
  // short sleeps until it succeeds or the time is up. The socket returned
  // is blocking.
  static std::unique_ptr<UnixSocket> ConnectWithTimeout(const std::string& path,
                                                        int timeout_ms,
                                                        base::Status* status);
  // Two connected sockets (socketpair), for tests.
  static bool Pair(std::unique_ptr<UnixSocket>* a,
                   std::unique_ptr<UnixSocket>* b);

  ~UnixSocket();
  UnixSocket(const UnixSocket&) = delete;
  UnixSocket& operator=(const UnixSocket&) = delete;

  // Listening socket only. Returns the next pending connection
  // (non-blocking, FD_CLOEXEC), or null with |status| ok if none is pending,
  // or null with an error.
  std::unique_ptr<UnixSocket> Accept(base::Status* status);

  // Sends one datagram of |size| bytes (1..65536), with |fd| attached if
  // fd >= 0 (the fd stays ours). A non-blocking socket whose peer is not
  // reading fails with a "would block" error rather than waiting; then
  // |*would_block| (if not null) is set to true, else to false.
  base::Status Send(const uint8_t* data,
                    size_t size,
                    int fd = -1,
                    bool* would_block = nullptr);

  enum class RecvResult {
    kMessage,     // one datagram in |buf|, its size in |*size|
    kWouldBlock,  // non-blocking socket, nothing pending
    kClosed,      // the peer closed (or reset) the connection; a
                  // zero-length datagram reads the same and is taken as
                  // closed too (SOCK_SEQPACKET cannot tell them apart)
    // The peer sent a datagram we refuse (|status| says what; every fd it
    // carried is closed; the next datagram can still be received):
    kTooLong,     // longer than |cap|
    kTooManyFds,  // more than one fd attached
    kError,       // recv(2) failed; |status| says why
  };
  // Receives one datagram. |fd| (may be null: then any fd is closed)
  // receives the first attached fd, or is reset to -1 if none came.
  RecvResult Receive(uint8_t* buf,
                     size_t cap,
                     size_t* size,
                     base::ScopedFd* fd,
                     base::Status* status);

  // Blocks up to |timeout_ms| for the socket to become readable. Returns
  // true if it is (or the peer hung up), false on timeout. A negative
  // |timeout_ms| waits forever.
  bool WaitReadable(int timeout_ms);

  // Credentials of the connected peer, from the kernel (SO_PEERCRED), so a
  // producer cannot forge them. False (|creds| untouched) if they cannot be
  // read.
  bool GetPeerCredentials(base::ClientIdentity* creds) const;

  void SetNonBlocking(bool non_blocking);
  int fd() const { return fd_.get(); }

 private:
  explicit UnixSocket(base::ScopedFd fd);

  base::ScopedFd fd_;
  // Listener: its socket file and that file's identity, removed on close if
  // the path still names it.
  std::string unlink_path_;
  dev_t unlink_dev_ = 0;
  ino_t unlink_ino_ = 0;
};

}  // namespace ipc
}  // namespace ringtrace

#endif  // SRC_TRACING_IPC_UNIX_SOCKET_H_
