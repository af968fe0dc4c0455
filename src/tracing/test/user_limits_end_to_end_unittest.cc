/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Per-user limits with the real daemon (user_limits.h, docs/service.md,
// "Users share the service"): peers of other users (uids switched to from
// root in forked children) take their share of producers and ring memory
// and hold it; they are refused past it with the limit named, and this
// user's app then records a whole session as if they were not there.

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "src/base/scoped_fd.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/producer/hello_client.h"
#include "src/tracing/test/sessions_lifecycle_fixture.h"

namespace ringtrace {
namespace test {
namespace {

using perfetto::protos::TraceConfig;
constexpr auto kDiscard = TraceConfig::BufferConfig::DISCARD;

class UserLimitsEndToEndTest : public SessionsLifecycleFixture {
 protected:
  // What a hog did: per Hello, the ring bytes it was served (0: refused)
  // and the refusal.
  struct HogResult {
    std::vector<uint64_t> ring_bytes;
    std::string last_refusal;
  };

  // Forks a peer as |uid| that says Hello |attempts| times, each asking for
  // |ring_bytes|, holds every connection admitted and writes one line per
  // attempt to a pipe ("ok BYTES" or "refused WHY"), then waits for the
  // pipe release[] to close (it closes its own copy of the write end).
  // Returns its pid; *report: the read end.
  pid_t ForkHog(uid_t uid,
                int attempts,
                uint32_t ring_bytes,
                const int release[2],
                base::ScopedFd* report) {
    int fds[2];
    if (pipe(fds) != 0)
      return -1;
    const std::string socket_path = socket_;
    const pid_t pid = ForkAs(uid, [&] {
      close(fds[0]);
      close(release[1]);
      std::vector<std::unique_ptr<ipc::UnixSocket>> held;
      std::vector<producer::HandshakeResult> rings;
      for (int i = 0; i < attempts; ++i) {
        base::Status status;
        auto socket = ipc::UnixSocket::Connect(socket_path, &status);
        if (!socket)
          return 11;
        ProducerOptions options;
        options.name = "hog";
        options.requested_ring_bytes = ring_bytes;
        producer::HandshakeResult hello;
        status = producer::Handshake(socket.get(), options, &hello);
        std::string line;
        if (status.ok()) {
          line = "ok " + std::to_string(uint64_t{hello.reply.chunk_size} *
                                        hello.reply.num_chunks);
          held.push_back(std::move(socket));
          rings.push_back(std::move(hello));
        } else {
          line = "refused " + status.message();
        }
        line += "\n";
        if (write(fds[1], line.data(), line.size()) !=
            static_cast<ssize_t>(line.size()))
          return 13;
      }
      close(fds[1]);
      char c = 0;
      while (read(release[0], &c, 1) > 0) {
      }
      return 0;
    });
    close(fds[1]);
    report->reset(fds[0]);
    return pid;
  }

  static HogResult ReadReport(int fd) {
    std::string text;
    char buf[4096];
    for (;;) {
      const ssize_t n = read(fd, buf, sizeof(buf));
      if (n <= 0)
        break;
      text.append(buf, static_cast<size_t>(n));
    }
    HogResult r;
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t end = text.find('\n', pos);
      const std::string line = text.substr(pos, end - pos);
      pos = end == std::string::npos ? text.size() : end + 1;
      if (line.compare(0, 3, "ok ") == 0) {
        r.ring_bytes.push_back(std::stoull(line.substr(3)));
      } else {
        r.ring_bytes.push_back(0);
        r.last_refusal = line;
      }
    }
    return r;
  }

  // This user's app records one whole session beside the hogs.
  void ExpectAWholeSessionOfThisUser(const std::string& file) {
    SessionApp app;
    ASSERT_TRUE(StartApp(&app, 1, {"--pause-us", "1000"}));
    std::unique_ptr<consumer::ConsumerClient> consumer = ConnectConsumer();
    ASSERT_TRUE(consumer);
    const std::string path = dir_ + "/" + file;
    base::ScopedFd fd = CreateTraceFile(path);
    uint64_t session = 0;
    ASSERT_TRUE(
        consumer->EnableTracing(AppConfig(8192, kDiscard), fd.get(), &session)
            .ok());
    InstanceBounds bounds;
    ASSERT_TRUE(app.WaitStart(1, kTimeoutMs, &bounds));
    ASSERT_TRUE(app.WaitProgress(Plus(bounds.first, 200), kTimeoutMs));
    protos::SessionSummary summary;
    ASSERT_TRUE(consumer->DisableTracing(session, kTimeoutMs, &summary).ok());
    EXPECT_EQ(summary.packets_lost(), 0u);
    ASSERT_TRUE(app.WaitStop(kTimeoutMs, &bounds));
    const DecodedTrace trace = DecodeTrace(path, app.pid());
    EXPECT_TRUE(HoldsInstance(trace, bounds, /*lossless=*/true));
    EXPECT_TRUE(NoLossInStats(trace));
  }
};

// Two other users: the first asks for 6 producers of 1 MiB (4 admitted, the
// producer limit), the second for 3 of 16 MiB (served 8 and 4 MiB to fit
// its 12 MiB budget, then refused). Both hold what they got; this user's
// app then connects and records a whole session.
TEST_F(UserLimitsEndToEndTest, OtherUsersHogsTakeOnlyTheirShare) {
  if (geteuid() != 0)
    printf("not root: the hogs are this user (the app is then refused)\n");
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  std::unique_ptr<base::Subprocess> service =
      StartService({"--max-producers-per-uid", "4", "--max-ring-mb-per-uid",
                    "12", "--privileged-limit-factor", "0"});
  ASSERT_TRUE(service);
  int release[2];
  ASSERT_EQ(pipe(release), 0);
  base::ScopedFd report1, report2;
  const pid_t hog1 = ForkHog(OtherUid(1), 6, 1u << 20, release, &report1);
  ASSERT_GE(hog1, 0);
  const HogResult r1 = ReadReport(report1.get());
  const pid_t hog2 = ForkHog(OtherUid(2), 3, 16u << 20, release, &report2);
  ASSERT_GE(hog2, 0);
  const HogResult r2 = ReadReport(report2.get());
  close(release[0]);

  EXPECT_EQ(r1.ring_bytes, (std::vector<uint64_t>{1u << 20, 1u << 20, 1u << 20,
                                                  1u << 20, 0, 0}));
  EXPECT_NE(r1.last_refusal.find("this user's share"), std::string::npos)
      << r1.last_refusal;
  EXPECT_EQ(r2.ring_bytes, (std::vector<uint64_t>{8u << 20, 4u << 20, 0}));
  if (geteuid() == 0)
    ExpectAWholeSessionOfThisUser("mine");

  close(release[1]);
  EXPECT_TRUE(ExitedWith0(hog1));
  EXPECT_TRUE(ExitedWith0(hog2));
  service->Signal(SIGTERM);
  ASSERT_TRUE(service->Wait(kTimeoutMs));
  // Its summary counts the refusals and the clamped ring.
  EXPECT_NE(service->output().find("3 over a per-user limit"),
            std::string::npos)
      << service->output();
  EXPECT_NE(service->output().find("2 rings served smaller"),
            std::string::npos);
  EXPECT_NE(service->output().find("per-user limit 4; ringtraced "
                                   "--max-producers-per-uid"),
            std::string::npos);
}

// Sessions: one per uid here; this user's second is refused, naming the
// flag, and the first goes on to a whole trace.
TEST_F(UserLimitsEndToEndTest, ASecondSessionOverTheUidsLimitIsRefused) {
  std::unique_ptr<base::Subprocess> service =
      StartService({"--max-sessions-per-uid", "1"});
  ASSERT_TRUE(service);
  std::unique_ptr<consumer::ConsumerClient> consumer = ConnectConsumer();
  ASSERT_TRUE(consumer);
  base::ScopedFd fd1 = CreateTraceFile(dir_ + "/first");
  uint64_t first = 0;
  ASSERT_TRUE(
      consumer->EnableTracing(AppConfig(256, kDiscard), fd1.get(), &first)
          .ok());
  base::ScopedFd fd2 = CreateTraceFile(dir_ + "/second");
  uint64_t second = 0;
  const base::Status refused =
      consumer->EnableTracing(AppConfig(256, kDiscard), fd2.get(), &second);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("--max-sessions-per-uid"), std::string::npos)
      << refused.message();
  protos::SessionSummary summary;
  ASSERT_TRUE(consumer->DisableTracing(first, kTimeoutMs, &summary).ok());
  StopService(service.get(), "1 started, 1 written");
}

}  // namespace
}  // namespace test
}  // namespace ringtrace
