/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/ipc/unix_socket.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "src/base/test/temp_dir.h"
#include "src/tracing/ipc/test/raw_send.h"

namespace ringtrace {
namespace ipc {
namespace {

int CountOpenFds() {
  int n = 0;
  for (int fd = 0; fd < 1024; fd++)
    n += fcntl(fd, F_GETFD) >= 0 ? 1 : 0;
  return n;
}

bool SameFile(int a, int b) {
  struct stat sa, sb;
  return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

UnixSocket::RecvResult Recv(UnixSocket* s,
                            std::string* data,
                            base::ScopedFd* fd = nullptr,
                            base::Status* status = nullptr) {
  uint8_t buf[64];
  size_t n = 0;
  base::Status st;
  const UnixSocket::RecvResult r =
      s->Receive(buf, sizeof(buf), &n, fd, status ? status : &st);
  data->assign(reinterpret_cast<const char*>(buf), n);
  return r;
}

base::Status SendStr(UnixSocket* s, const std::string& str, int fd = -1) {
  return s->Send(reinterpret_cast<const uint8_t*>(str.data()), str.size(), fd);
}

TEST(UnixSocketTest, DatagramBoundariesAreKept) {
  std::unique_ptr<UnixSocket> a, b;
  ASSERT_TRUE(UnixSocket::Pair(&a, &b));
  ASSERT_TRUE(SendStr(a.get(), "one").ok());
  ASSERT_TRUE(SendStr(a.get(), "second").ok());
  std::string got;
  EXPECT_EQ(Recv(b.get(), &got), UnixSocket::RecvResult::kMessage);
  EXPECT_EQ(got, "one");
  EXPECT_EQ(Recv(b.get(), &got), UnixSocket::RecvResult::kMessage);
  EXPECT_EQ(got, "second");
  b->SetNonBlocking(true);
  EXPECT_EQ(Recv(b.get(), &got), UnixSocket::RecvResult::kWouldBlock);
  a.reset();
  EXPECT_EQ(Recv(b.get(), &got), UnixSocket::RecvResult::kClosed);
}

TEST(UnixSocketTest, PassesOneFdWithCloexec) {
  std::unique_ptr<UnixSocket> a, b;
  ASSERT_TRUE(UnixSocket::Pair(&a, &b));
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  ASSERT_TRUE(SendStr(a.get(), "fd", pipe_fds[0]).ok());
  std::string got;
  base::ScopedFd received;
  ASSERT_EQ(Recv(b.get(), &got, &received), UnixSocket::RecvResult::kMessage);
  EXPECT_EQ(got, "fd");
  ASSERT_TRUE(received.valid());
  EXPECT_NE(received.get(), pipe_fds[0]);
  EXPECT_TRUE(SameFile(received.get(), pipe_fds[0]));
  EXPECT_NE(fcntl(received.get(), F_GETFD) & FD_CLOEXEC, 0);

  // A message without an fd resets the caller's base::ScopedFd.
  ASSERT_TRUE(SendStr(a.get(), "none").ok());
  ASSERT_EQ(Recv(b.get(), &got, &received), UnixSocket::RecvResult::kMessage);
  EXPECT_FALSE(received.valid());
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

// A hostile peer attaches fds nobody asked for: they must not pile up in
// our fd table.
TEST(UnixSocketTest, UnwantedFdsAreClosed) {
  std::unique_ptr<UnixSocket> a, b;
  ASSERT_TRUE(UnixSocket::Pair(&a, &b));
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const int fds_before = CountOpenFds();

  // One fd, but the receiver passes no base::ScopedFd.
  ASSERT_TRUE(SendStr(a.get(), "x", pipe_fds[0]).ok());
  std::string got;
  EXPECT_EQ(Recv(b.get(), &got, nullptr), UnixSocket::RecvResult::kMessage);
  EXPECT_EQ(CountOpenFds(), fds_before);

  // Three fds in one datagram (raw sendmsg): an error, all closed.
  ASSERT_TRUE(test::SendRawWithFds(a->fd(), "y", 1,
                                   {pipe_fds[0], pipe_fds[1], pipe_fds[0]}));
  base::ScopedFd received;
  base::Status status;
  EXPECT_EQ(Recv(b.get(), &got, &received, &status),
            UnixSocket::RecvResult::kTooManyFds);
  EXPECT_NE(status.message().find("3 fds"), std::string::npos)
      << status.message();
  EXPECT_FALSE(received.valid());
  EXPECT_EQ(CountOpenFds(), fds_before);

  // Still usable afterwards.
  ASSERT_TRUE(SendStr(a.get(), "after").ok());
  EXPECT_EQ(Recv(b.get(), &got), UnixSocket::RecvResult::kMessage);
  EXPECT_EQ(got, "after");
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

TEST(UnixSocketTest, OversizedDatagramIsAnErrorNotATruncation) {
  std::unique_ptr<UnixSocket> a, b;
  ASSERT_TRUE(UnixSocket::Pair(&a, &b));
  ASSERT_TRUE(SendStr(a.get(), std::string(65, 'z')).ok());
  ASSERT_TRUE(SendStr(a.get(), "next").ok());
  std::string got;
  base::Status status;
  EXPECT_EQ(Recv(b.get(), &got, nullptr, &status),
            UnixSocket::RecvResult::kTooLong);
  EXPECT_NE(status.message().find("longer than 64"), std::string::npos)
      << status.message();
  EXPECT_EQ(Recv(b.get(), &got), UnixSocket::RecvResult::kMessage);
  EXPECT_EQ(got, "next");
}

// The consumer protocol's largest datagram: 64 KiB with one fd, whole, and
// refused (fd closed) by a receiver with one byte less room.
TEST(UnixSocketTest, SixtyFourKiBDatagramWithAnFd) {
  std::unique_ptr<UnixSocket> a, b;
  ASSERT_TRUE(UnixSocket::Pair(&a, &b));
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const int fds_before = CountOpenFds();
  std::vector<uint8_t> data(65536);
  for (size_t i = 0; i < data.size(); i++)
    data[i] = static_cast<uint8_t>(i * 7);
  std::vector<uint8_t> buf(65536);
  size_t n = 0;
  base::ScopedFd received;
  base::Status status;

  ASSERT_TRUE(a->Send(data.data(), data.size(), pipe_fds[1]).ok());
  ASSERT_EQ(b->Receive(buf.data(), buf.size(), &n, &received, &status),
            UnixSocket::RecvResult::kMessage)
      << status.message();
  EXPECT_EQ(n, 65536u);
  EXPECT_EQ(buf, data);
  EXPECT_TRUE(SameFile(received.get(), pipe_fds[1]));
  received.reset();

  ASSERT_TRUE(a->Send(data.data(), data.size(), pipe_fds[1]).ok());
  EXPECT_EQ(b->Receive(buf.data(), buf.size() - 1, &n, &received, &status),
            UnixSocket::RecvResult::kTooLong);
  EXPECT_EQ(status.message(), "datagram longer than 65535 bytes");
  EXPECT_FALSE(received.valid());
  EXPECT_EQ(CountOpenFds(), fds_before);
  EXPECT_FALSE(a->Send(data.data(), data.size() + 1).ok());
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

TEST(UnixSocketTest, SendToAGonePeerFailsWithoutSigpipe) {
  std::unique_ptr<UnixSocket> a, b;
  ASSERT_TRUE(UnixSocket::Pair(&a, &b));
  b.reset();
  bool would_block = true;
  const base::Status s =
      a->Send(reinterpret_cast<const uint8_t*>("x"), 1, -1, &would_block);
  EXPECT_FALSE(s.ok());  // and the process is still alive: no SIGPIPE
  EXPECT_FALSE(would_block);
  EXPECT_FALSE(a->Send(nullptr, 0).ok());  // empty datagrams are refused
}

TEST(UnixSocketTest, FullNonBlockingSocketSaysWouldBlock) {
  std::unique_ptr<UnixSocket> a, b;
  ASSERT_TRUE(UnixSocket::Pair(&a, &b));
  a->SetNonBlocking(true);
  const uint8_t payload[256] = {};
  bool would_block = false;
  int sent = 0;
  for (; sent < 100000; sent++) {
    if (!a->Send(payload, sizeof(payload), -1, &would_block).ok())
      break;
  }
  EXPECT_TRUE(would_block);
  EXPECT_GT(sent, 0);
  // Reading one makes room again.
  uint8_t buf[256];
  size_t n;
  ASSERT_EQ(b->Receive(buf, sizeof(buf), &n, nullptr, nullptr),
            UnixSocket::RecvResult::kMessage);
  EXPECT_TRUE(a->WaitReadable(0) == false);  // nothing came back to |a|
  EXPECT_TRUE(a->Send(payload, sizeof(payload)).ok());
}

TEST(UnixSocketTest, ListenAcceptConnectAndPeerCredentials) {
  base::TempDir dir("ringtrace_ipc");
  base::Status status;
  auto listener = UnixSocket::Listen(dir.File("sock"), &status);
  ASSERT_NE(listener, nullptr) << status.message();

  EXPECT_EQ(listener->Accept(&status), nullptr);  // nothing pending
  EXPECT_TRUE(status.ok());

  auto client = UnixSocket::Connect(dir.File("sock"), &status);
  ASSERT_NE(client, nullptr) << status.message();
  ASSERT_TRUE(listener->WaitReadable(5000));
  auto conn = listener->Accept(&status);
  ASSERT_NE(conn, nullptr) << status.message();
  EXPECT_NE(fcntl(conn->fd(), F_GETFL) & O_NONBLOCK, 0);
  EXPECT_NE(fcntl(conn->fd(), F_GETFD) & FD_CLOEXEC, 0);

  base::ClientIdentity creds;
  ASSERT_TRUE(conn->GetPeerCredentials(&creds));
  EXPECT_EQ(creds.pid, getpid());
  EXPECT_EQ(static_cast<uid_t>(creds.uid), getuid());

  ASSERT_TRUE(SendStr(client.get(), "hello").ok());
  ASSERT_TRUE(conn->WaitReadable(5000));
  std::string got;
  EXPECT_EQ(Recv(conn.get(), &got), UnixSocket::RecvResult::kMessage);
  EXPECT_EQ(got, "hello");
  EXPECT_FALSE(conn->WaitReadable(0));
}

TEST(UnixSocketTest, LiveListenerIsNotStolenStaleFileIsReplaced) {
  base::TempDir dir("ringtrace_ipc");
  base::Status status;
  auto first = UnixSocket::Listen(dir.File("sock"), &status);
  ASSERT_NE(first, nullptr) << status.message();
  EXPECT_EQ(UnixSocket::Listen(dir.File("sock"), &status), nullptr);
  EXPECT_NE(status.message().find("another ringtraced is listening on " +
                                  dir.File("sock")),
            std::string::npos)
      << status.message();

  // Destroying the listener removes its socket file.
  first.reset();
  struct stat st;
  EXPECT_NE(stat(dir.File("sock").c_str(), &st), 0);

  // A stale file: bound, then closed without unlinking (a crashed service).
  {
    base::ScopedFd raw(socket(AF_UNIX, SOCK_SEQPACKET, 0));
    sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    strncpy(addr.sun_path, dir.File("sock").c_str(), sizeof(addr.sun_path) - 1);
    ASSERT_EQ(bind(raw.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
              0);
  }
  ASSERT_EQ(stat(dir.File("sock").c_str(), &st), 0);
  auto second = UnixSocket::Listen(dir.File("sock"), &status);
  ASSERT_NE(second, nullptr) << status.message();
  auto client = UnixSocket::Connect(dir.File("sock"), &status);
  EXPECT_NE(client, nullptr) << status.message();
}

std::string ReadFile(const std::string& path) {
  std::string out;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return "<missing>";
  char buf[256];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0)
    out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

void WriteFile(const std::string& path, const std::string& data) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, data.data(), data.size()),
            static_cast<ssize_t>(data.size()));
  close(fd);
}

// Only a stale socket may be replaced: a regular file, a directory, a
// symlink or a FIFO at the path is refused with its name and kind, and left
// exactly as it was.
TEST(UnixSocketTest, ListenNeverReplacesWhatIsNotAStaleSocket) {
  base::TempDir dir("ringtrace_ipc");
  const std::string path = dir.File("sock");
  const std::string target = path + ".target";
  base::Status status;

  WriteFile(path, "precious trace");
  EXPECT_EQ(UnixSocket::Listen(path, &status), nullptr);
  EXPECT_NE(status.message().find(path + " exists and is a regular file"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(ReadFile(path), "precious trace");
  ASSERT_EQ(unlink(path.c_str()), 0);

  ASSERT_EQ(mkdir(path.c_str(), 0700), 0);
  EXPECT_EQ(UnixSocket::Listen(path, &status), nullptr);
  EXPECT_NE(status.message().find("is a directory"), std::string::npos)
      << status.message();
  struct stat st;
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  ASSERT_EQ(rmdir(path.c_str()), 0);

  WriteFile(target, "linked");
  ASSERT_EQ(symlink(target.c_str(), path.c_str()), 0);
  EXPECT_EQ(UnixSocket::Listen(path, &status), nullptr);
  EXPECT_NE(status.message().find("is a symbolic link"), std::string::npos)
      << status.message();
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(ReadFile(target), "linked");
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(unlink(target.c_str()), 0);

  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  EXPECT_EQ(UnixSocket::Listen(path, &status), nullptr);
  EXPECT_NE(status.message().find("is a FIFO"), std::string::npos)
      << status.message();
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  ASSERT_EQ(unlink(path.c_str()), 0);
}

// The listener removes its socket file on close only if the path still
// names it.
TEST(UnixSocketTest, ListenerRemovesOnlyItsOwnSocketFile) {
  base::TempDir dir("ringtrace_ipc");
  base::Status status;
  auto listener = UnixSocket::Listen(dir.File("sock"), &status);
  ASSERT_NE(listener, nullptr) << status.message();
  ASSERT_EQ(unlink(dir.File("sock").c_str()), 0);
  WriteFile(dir.File("sock"), "someone else's");
  listener.reset();
  EXPECT_EQ(ReadFile(dir.File("sock")), "someone else's");
}

TEST(UnixSocketTest, ListenAppliesModeAndGroup) {
  base::TempDir dir("ringtrace_ipc");
  base::Status status;
  ListenOptions options;
  options.mode = 0666;
  options.group = getegid();  // a group we are in: chown may set it
  auto listener = UnixSocket::Listen(dir.File("sock"), options, &status);
  ASSERT_NE(listener, nullptr) << status.message();
  struct stat st;
  ASSERT_EQ(lstat(dir.File("sock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0666u);
  EXPECT_EQ(st.st_gid, getegid());
  listener.reset();

  // The default: owner only, whatever the umask.
  const mode_t old_umask = umask(0);
  listener = UnixSocket::Listen(dir.File("sock"), &status);
  umask(old_umask);
  ASSERT_NE(listener, nullptr) << status.message();
  ASSERT_EQ(lstat(dir.File("sock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);

  options.mode = 01777;  // not only permission bits
  listener.reset();
  EXPECT_EQ(UnixSocket::Listen(dir.File("sock"), options, &status), nullptr);
  EXPECT_NE(status.message().find("socket mode"), std::string::npos);
}

TEST(UnixSocketTest, BadPathsAndMissingServiceAreErrors) {
  base::Status status;
  EXPECT_EQ(UnixSocket::Listen("", &status), nullptr);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(UnixSocket::Listen(std::string(200, 'p'), &status), nullptr);
  EXPECT_NE(status.message().find("bad socket path"), std::string::npos);
  base::TempDir dir("ringtrace_ipc");
  EXPECT_EQ(UnixSocket::Connect(dir.File("sock"), &status), nullptr);
  EXPECT_NE(status.message().find("connect"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace ipc
}  // namespace ringtrace
