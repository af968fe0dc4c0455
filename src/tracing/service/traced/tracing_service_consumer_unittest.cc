/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TracingService's consumer socket with a raw consumer (framing from
// src/tracing/ipc/consumer_protocol.h): sessions started and stopped over
// the socket, and consumers that misbehave.

#include "src/tracing/service/traced/tracing_service.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"
#include "protos/ringtrace/ipc/consumer_port.pb.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/ipc/consumer_protocol.h"
#include "src/tracing/service/traced/test/test_client.h"

namespace ringtrace {
namespace traced {
namespace {

using base::TempDir;
using perfetto::protos::TraceConfig;
using protos::ConsumerRequest;
using protos::ConsumerResponse;
using test::CollectTestPackets;
using test::kTestTimeoutMs;
using test::ReadTraceFile;
using test::Seqs;
using test::TestClient;
using test::WriteTestPackets;

// A consumer speaking the protocol by hand.
class RawConsumer {
 public:
  bool Connect(const std::string& path) {
    base::Status status;
    socket_ = ipc::UnixSocket::Connect(path, &status);
    return socket_ != nullptr;
  }
  void Close() { socket_.reset(); }
  bool Send(ConsumerRequest request, int fd = -1) {
    if (request.request_id() == 0)
      request.set_request_id(next_request_id_++);
    std::vector<uint8_t> bytes;
    if (!ipc::EncodeConsumerRequest(request, &bytes).ok())
      return false;
    return socket_->Send(bytes.data(), bytes.size(), fd).ok();
  }
  // The next datagram, decoded; false on timeout, EOF or a bad response.
  bool Receive(ConsumerResponse* response, int timeout_ms = kTestTimeoutMs) {
    if (!socket_->WaitReadable(timeout_ms))
      return false;
    std::vector<uint8_t> buf(ipc::kMaxConsumerMessageSize);
    size_t size = 0;
    base::Status status;
    if (socket_->Receive(buf.data(), buf.size(), &size, nullptr, &status) !=
        ipc::UnixSocket::RecvResult::kMessage) {
      return false;
    }
    return ipc::DecodeConsumerResponse(buf.data(), size, response).ok();
  }
  // Sends |request| and receives the answer.
  ConsumerResponse Call(const ConsumerRequest& request, int fd = -1) {
    ConsumerResponse response;
    EXPECT_TRUE(Send(request, fd));
    EXPECT_TRUE(Receive(&response));
    return response;
  }
  // Whether the service closed the connection.
  bool WaitForClose() {
    ConsumerResponse response;
    while (socket_->WaitReadable(kTestTimeoutMs)) {
      uint8_t buf[ipc::kMaxConsumerMessageSize];
      size_t size = 0;
      base::Status status;
      const auto r =
          socket_->Receive(buf, sizeof(buf), &size, nullptr, &status);
      if (r == ipc::UnixSocket::RecvResult::kClosed ||
          r == ipc::UnixSocket::RecvResult::kError)
        return true;
    }
    return false;
  }
  ipc::UnixSocket* socket() { return socket_.get(); }
  void Disconnect() { socket_.reset(); }

 private:
  std::unique_ptr<ipc::UnixSocket> socket_;
  uint64_t next_request_id_ = 1;
};

TraceConfig SimpleConfig(uint32_t size_kb = 256) {
  TraceConfig config;
  config.add_buffers()->set_size_kb(size_kb);
  config.add_data_sources()->mutable_config()->set_name("track_event");
  return config;
}

ConsumerRequest Enable(const TraceConfig& config) {
  ConsumerRequest r;
  *r.mutable_enable_tracing()->mutable_config() = config;
  return r;
}

ConsumerRequest Disable(uint64_t session_id) {
  ConsumerRequest r;
  r.mutable_disable_tracing()->set_session_id(session_id);
  return r;
}

class TracingServiceConsumerTest : public ::testing::Test {
 protected:
  TracingService::Options DaemonOptions() {
    TracingService::Options o;
    o.socket_path = dir_.File("producer.sock");
    o.consumer_socket_path = dir_.File("consumer.sock");
    o.core.drain_tick_ns = 3'600'000'000'000;
    return o;
  }
  void StartService(const TracingService::Options& options) {
    service_.reset(new TracingService(options));
    const base::Status status = service_->Start();
    ASSERT_TRUE(status.ok()) << status.message();
  }
  void TearDown() override {
    if (service_)
      (void)service_->Stop(nullptr);
  }
  int OpenOut(const std::string& name) {
    fds_.emplace_back(open(dir_.File(name).c_str(),
                           O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    return fds_.back().get();
  }
  bool WaitFor(const std::function<bool(const ServiceStats&)>& pred) {
    return service_->WaitForStats(pred, kTestTimeoutMs);
  }

  TempDir dir_;
  std::unique_ptr<TracingService> service_;
  std::vector<base::ScopedFd> fds_;
};

TEST_F(TracingServiceConsumerTest, EnableQueryStatsDisableWritesTheTrace) {
  StartService(DaemonOptions());
  RawConsumer consumer;
  ASSERT_TRUE(consumer.Connect(dir_.File("consumer.sock")));
  TraceConfig config = SimpleConfig();
  config.set_unique_session_name("mine");
  ConsumerResponse r = consumer.Call(Enable(config), OpenOut("trace"));
  ASSERT_TRUE(r.ok()) << r.error();
  const uint64_t session = r.session_id();
  ASSERT_NE(session, 0u);

  ConsumerRequest query;
  query.mutable_query_service_state();
  r = consumer.Call(query);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r.service_state().sessions_size(), 1);
  EXPECT_EQ(r.service_state().sessions(0).id(), session);
  EXPECT_EQ(r.service_state().sessions(0).unique_name(), "mine");
  ASSERT_EQ(r.service_state().sessions(0).buffers_size(), 1);
  EXPECT_EQ(r.service_state().sessions(0).buffers(0).size_bytes(), 256u << 10);
  EXPECT_EQ(r.service_state().max_sessions(), 32u);

  ConsumerRequest stats;
  stats.mutable_get_trace_stats()->set_session_id(session);
  r = consumer.Call(stats);
  ASSERT_TRUE(r.ok()) << r.error();
  perfetto::protos::TraceStats trace_stats;
  ASSERT_TRUE(trace_stats.ParseFromString(r.trace_stats()));
  EXPECT_EQ(trace_stats.buffer_stats_size(), 1);

  // Someone else's (or no) session.
  stats.mutable_get_trace_stats()->set_session_id(session + 1);
  r = consumer.Call(stats);
  EXPECT_FALSE(r.ok());

  r = consumer.Call(Disable(session));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(r.tracing_ended());
  EXPECT_EQ(r.summary().session_id(), session);
  EXPECT_GT(r.summary().bytes_written(), 0u);
  perfetto::protos::Trace trace;
  ASSERT_TRUE(ReadTraceFile(dir_.File("trace"), &trace));
  ASSERT_GE(trace.packet_size(), 4);
  EXPECT_TRUE(trace.packet(0).has_trace_config());
  EXPECT_EQ(trace.packet(0).trace_config().unique_session_name(), "mine");
  EXPECT_TRUE(trace.packet(trace.packet_size() - 2).has_trace_stats());
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.sessions.sessions_written == 1 && s.sessions_active == 0;
  }));
}

TEST_F(TracingServiceConsumerTest, DurationEndsTheSessionWithAnEvent) {
  StartService(DaemonOptions());
  RawConsumer consumer;
  ASSERT_TRUE(consumer.Connect(dir_.File("consumer.sock")));
  TraceConfig config = SimpleConfig();
  config.set_duration_ms(100);
  ConsumerResponse r = consumer.Call(Enable(config), OpenOut("trace"));
  ASSERT_TRUE(r.ok()) << r.error();
  ConsumerResponse ended;
  ASSERT_TRUE(consumer.Receive(&ended));
  EXPECT_TRUE(ended.tracing_ended());
  EXPECT_EQ(ended.request_id(), 0u);
  EXPECT_TRUE(ended.ok());
  EXPECT_EQ(ended.session_id(), r.session_id());
  perfetto::protos::Trace trace;
  EXPECT_TRUE(ReadTraceFile(dir_.File("trace"), &trace));
  // The session is gone: disabling it now is an error.
  r = consumer.Call(Disable(r.session_id()));
  EXPECT_FALSE(r.ok());
}

TEST_F(TracingServiceConsumerTest, RefusalsNameTheirReason) {
  TracingService::Options options = DaemonOptions();
  options.core.max_sessions = 1;
  options.core.max_total_buffer_bytes = 4 << 20;
  StartService(options);
  RawConsumer consumer;
  ASSERT_TRUE(consumer.Connect(dir_.File("consumer.sock")));

  // Not a regular file: a pipe, /dev/null.
  int pipe_fds[2];
  ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
  base::ScopedFd pipe_read(pipe_fds[0]), pipe_write(pipe_fds[1]);
  ConsumerResponse r = consumer.Call(Enable(SimpleConfig()), pipe_write.get());
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("not a regular file"), std::string::npos)
      << r.error();
  base::ScopedFd dev_null(open("/dev/null", O_WRONLY | O_CLOEXEC));
  r = consumer.Call(Enable(SimpleConfig()), dev_null.get());
  EXPECT_FALSE(r.ok());
  // A file opened read-only.
  OpenOut("ro");
  base::ScopedFd ro(open(dir_.File("ro").c_str(), O_RDONLY | O_CLOEXEC));
  r = consumer.Call(Enable(SimpleConfig()), ro.get());
  EXPECT_FALSE(r.ok());

  // Huge buffers: beyond the service's total.
  r = consumer.Call(Enable(SimpleConfig(4194240)), OpenOut("huge"));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("max-buffer-mb"), std::string::npos) << r.error();
  // An invalid config: the field is named.
  TraceConfig bad = SimpleConfig();
  bad.mutable_buffers(0)->set_size_kb(0);
  r = consumer.Call(Enable(bad), OpenOut("bad"));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("buffers[0].size_kb"), std::string::npos)
      << r.error();

  // Too many sessions.
  r = consumer.Call(Enable(SimpleConfig()), OpenOut("one"));
  ASSERT_TRUE(r.ok()) << r.error();
  r = consumer.Call(Enable(SimpleConfig()), OpenOut("two"));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error().find("max sessions"), std::string::npos) << r.error();
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.consumer_request_errors == 6 &&
           s.connections.consumer_violations == 0 && s.sessions_active == 1;
  }));
}

TEST_F(TracingServiceConsumerTest, MalformedDatagramClosesOnlyThatConsumer) {
  StartService(DaemonOptions());
  RawConsumer good, bad;
  ASSERT_TRUE(good.Connect(dir_.File("consumer.sock")));
  ASSERT_TRUE(bad.Connect(dir_.File("consumer.sock")));
  ConsumerResponse r = good.Call(Enable(SimpleConfig()), OpenOut("good"));
  ASSERT_TRUE(r.ok()) << r.error();
  const char garbage[] = "definitely not a consumer request";
  ASSERT_TRUE(
      bad.socket()
          ->Send(reinterpret_cast<const uint8_t*>(garbage), sizeof(garbage))
          .ok());
  EXPECT_TRUE(bad.WaitForClose());
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.consumer_violations == 1;
  }));
  // The other consumer's session goes on.
  r = good.Call(Disable(r.session_id()));
  EXPECT_TRUE(r.ok()) << r.error();
}

TEST_F(TracingServiceConsumerTest, HangUpFreesTheSessionsWithoutWriting) {
  StartService(DaemonOptions());
  RawConsumer consumer;
  ASSERT_TRUE(consumer.Connect(dir_.File("consumer.sock")));
  ConsumerResponse r = consumer.Call(Enable(SimpleConfig()), OpenOut("t1"));
  ASSERT_TRUE(r.ok()) << r.error();
  r = consumer.Call(Enable(SimpleConfig()), OpenOut("t2"));
  ASSERT_TRUE(r.ok()) << r.error();
  consumer.Disconnect();
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.sessions.sessions_aborted == 2 && s.sessions_active == 0;
  }));
  struct stat st = {};
  ASSERT_EQ(stat(dir_.File("t1").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
}

TEST_F(TracingServiceConsumerTest, AConsumerThatNeverReadsIsDropped) {
  StartService(DaemonOptions());
  RawConsumer lazy, other;
  ASSERT_TRUE(lazy.Connect(dir_.File("consumer.sock")));
  ASSERT_TRUE(other.Connect(dir_.File("consumer.sock")));
  ConsumerResponse r = lazy.Call(Enable(SimpleConfig()), OpenOut("t"));
  ASSERT_TRUE(r.ok()) << r.error();
  ConsumerRequest query;
  query.mutable_query_service_state();
  query.set_request_id(1);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(ipc::EncodeConsumerRequest(query, &bytes).ok());
  // Requests, never reading an answer, until the service gives up on it.
  bool dropped = false;
  for (int i = 0; i < 200000 && !dropped; ++i) {
    const ssize_t n = send(lazy.socket()->fd(), bytes.data(), bytes.size(),
                           MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != ENOBUFS)
      break;  // the service closed it
    if (n < 0)
      dropped = service_->WaitForStats(
          [](const ServiceStats& s) {
            return s.connections.consumers_dropped_not_reading == 1;
          },
          10);
  }
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.consumers_dropped_not_reading == 1 &&
           s.sessions.sessions_aborted == 1;
  }));
  // The service still answers the others.
  query.set_request_id(0);
  r = other.Call(query);
  EXPECT_TRUE(r.ok()) << r.error();
}

TEST_F(TracingServiceConsumerTest, ServiceStopWritesLiveSessionsAndTellsThem) {
  StartService(DaemonOptions());
  RawConsumer consumer;
  ASSERT_TRUE(consumer.Connect(dir_.File("consumer.sock")));
  ConsumerResponse r = consumer.Call(Enable(SimpleConfig()), OpenOut("t"));
  ASSERT_TRUE(r.ok()) << r.error();
  ServiceSummary summary;
  ASSERT_TRUE(service_->Stop(&summary).ok());
  service_.reset();
  EXPECT_EQ(summary.stats.sessions.sessions_written, 1u);
  ConsumerResponse ended;
  ASSERT_TRUE(consumer.Receive(&ended));
  EXPECT_TRUE(ended.tracing_ended());
  perfetto::protos::Trace trace;
  EXPECT_TRUE(ReadTraceFile(dir_.File("t"), &trace));
  EXPECT_GE(trace.packet_size(), 4);
}

// In a child that becomes uid/gid |id|: connects to |path| and waits for the
// service to answer a request (exit 0) or close the connection (exit 3).
// Only syscalls: the parent has threads.
int ConnectAs(const std::string& path, uid_t id) {
  ConsumerRequest query;
  query.set_request_id(1);
  query.mutable_query_service_state();
  std::vector<uint8_t> bytes;
  if (!ipc::EncodeConsumerRequest(query, &bytes).ok())
    return -1;
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path))
    return -1;
  memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(id) != 0 || setuid(id) != 0)
      _exit(10);
    const int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr*>(&addr),
                          sizeof(addr)) != 0) {
      _exit(11);
    }
    // A refused peer may find the connection closed before it sends.
    (void)send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, kTestTimeoutMs) != 1)
      _exit(12);
    uint8_t buf[256];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    _exit(n > 0 ? 0 : 3);
  }
  int wstatus = 0;
  if (pid < 0 || waitpid(pid, &wstatus, 0) != pid || !WIFEXITED(wstatus))
    return -1;
  return WEXITSTATUS(wstatus);
}

// A child running as another user: it sends requests and waits for each
// answer, written to a pipe; its connection (and sessions) live until
// Finish().
class ConsumerAsUser {
 public:
  // Forks a child that becomes uid/gid |id|, connects to |path| and sends
  // |requests| in turn, the first with |fd| attached if it is >= 0. Only
  // syscalls in the child: the parent has threads.
  bool Start(const std::string& path,
             uid_t id,
             const std::vector<ConsumerRequest>& requests,
             int fd) {
    std::vector<std::vector<uint8_t>> encoded(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      if (!ipc::EncodeConsumerRequest(requests[i], &encoded[i]).ok())
        return false;
    }
    sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr.sun_path))
      return false;
    memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    std::vector<uint8_t> buf(ipc::kMaxConsumerMessageSize);
    int answers[2], go[2];
    if (pipe2(answers, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0)
      return false;
    pid_ = fork();
    if (pid_ == 0) {
      close(answers[0]);
      close(go[1]);
      if (setgroups(0, nullptr) != 0 || setgid(id) != 0 || setuid(id) != 0)
        _exit(10);
      const int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
      if (s < 0 || connect(s, reinterpret_cast<const sockaddr*>(&addr),
                           sizeof(addr)) != 0) {
        _exit(11);
      }
      for (size_t i = 0; i < encoded.size(); ++i) {
        iovec iov = {encoded[i].data(), encoded[i].size()};
        msghdr msg = {};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        if (i == 0 && fd >= 0) {
          msg.msg_control = control;
          msg.msg_controllen = sizeof(control);
          cmsghdr* c = CMSG_FIRSTHDR(&msg);
          c->cmsg_level = SOL_SOCKET;
          c->cmsg_type = SCM_RIGHTS;
          c->cmsg_len = CMSG_LEN(sizeof(int));
          memcpy(CMSG_DATA(c), &fd, sizeof(int));
        }
        if (sendmsg(s, &msg, MSG_NOSIGNAL) < 0)
          _exit(12);
        pollfd p = {s, POLLIN, 0};
        if (poll(&p, 1, kTestTimeoutMs) != 1)
          _exit(13);
        const ssize_t n = recv(s, buf.data(), buf.size(), 0);
        if (n <= 0)
          _exit(14);
        const uint32_t size = static_cast<uint32_t>(n);
        if (write(answers[1], &size, sizeof(size)) != sizeof(size) ||
            write(answers[1], buf.data(), size) != n) {
          _exit(15);
        }
      }
      char c = 0;
      (void)read(go[0], &c, 1);  // EOF: the parent is done
      _exit(0);
    }
    close(answers[1]);
    close(go[0]);
    answers_.reset(answers[0]);
    go_.reset(go[1]);
    return pid_ > 0;
  }
  // The child's next answer, decoded; false if it failed or ended.
  bool NextAnswer(ConsumerResponse* response) {
    uint32_t size = 0;
    if (!ReadAll(&size, sizeof(size)) || size > ipc::kMaxConsumerMessageSize)
      return false;
    std::vector<uint8_t> bytes(size);
    return ReadAll(bytes.data(), size) &&
           ipc::DecodeConsumerResponse(bytes.data(), size, response).ok();
  }
  // Lets the child exit (its connection closes); its exit code.
  int Finish() {
    go_.reset();
    int wstatus = 0;
    if (pid_ <= 0 || waitpid(pid_, &wstatus, 0) != pid_ || !WIFEXITED(wstatus))
      return -1;
    return WEXITSTATUS(wstatus);
  }

 private:
  bool ReadAll(void* data, size_t size) {
    uint8_t* p = static_cast<uint8_t*>(data);
    while (size > 0) {
      pollfd pfd = {answers_.get(), POLLIN, 0};
      if (poll(&pfd, 1, kTestTimeoutMs) != 1)
        return false;
      const ssize_t n = read(answers_.get(), p, size);
      if (n <= 0)
        return false;
      p += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  pid_t pid_ = -1;
  base::ScopedFd answers_;
  base::ScopedFd go_;
};

TEST(ConsumerMayAccessSessionTest, SameUidOrRootOnly) {
  EXPECT_TRUE(ConsumerMayAccessSession(1000, 1000));
  EXPECT_TRUE(ConsumerMayAccessSession(0, 1000));
  EXPECT_TRUE(ConsumerMayAccessSession(0, 0));
  EXPECT_FALSE(ConsumerMayAccessSession(1000, 1001));
  EXPECT_FALSE(ConsumerMayAccessSession(1001, 1000));
  EXPECT_FALSE(ConsumerMayAccessSession(1000, 0));  // root's are root's
}

// A consumer of another uid (admitted through --consumer-group) sees only
// its own sessions and cannot name root's; root sees and stops both.
TEST_F(TracingServiceConsumerTest, OtherUsersSessionsAreHiddenFromEachOther) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to act as another user";
  constexpr uid_t kNobody = 65534;
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  TracingService::Options options = DaemonOptions();
  options.consumer_socket_options.mode = 0666;
  options.consumer_group = kNobody;
  StartService(options);
  RawConsumer root;
  ASSERT_TRUE(root.Connect(dir_.File("consumer.sock")));
  TraceConfig mine = SimpleConfig();
  mine.set_unique_session_name("root_session");
  ConsumerResponse r = root.Call(Enable(mine), OpenOut("root"));
  ASSERT_TRUE(r.ok()) << r.error();
  const uint64_t root_session = r.session_id();

  // nobody: starts a session, queries, then names root's session.
  std::vector<ConsumerRequest> requests;
  TraceConfig theirs = SimpleConfig();
  theirs.set_unique_session_name("nobody_session");
  requests.push_back(Enable(theirs));
  requests.emplace_back();
  requests.back().mutable_query_service_state();
  requests.push_back(Disable(root_session));
  requests.emplace_back();
  requests.back().mutable_flush()->set_session_id(root_session);
  requests.emplace_back();
  requests.back().mutable_get_trace_stats()->set_session_id(root_session);
  for (size_t i = 0; i < requests.size(); ++i)
    requests[i].set_request_id(i + 1);
  ConsumerAsUser nobody;
  ASSERT_TRUE(nobody.Start(dir_.File("consumer.sock"), kNobody, requests,
                           OpenOut("nobody")));
  ConsumerResponse started, state;
  ASSERT_TRUE(nobody.NextAnswer(&started));
  ASSERT_TRUE(started.ok()) << started.error();
  ASSERT_TRUE(nobody.NextAnswer(&state));
  ASSERT_TRUE(state.ok()) << state.error();
  ASSERT_EQ(state.service_state().sessions_size(), 1);
  EXPECT_EQ(state.service_state().sessions(0).id(), started.session_id());
  EXPECT_EQ(state.service_state().sessions(0).unique_name(), "nobody_session");
  EXPECT_EQ(state.service_state().sessions(0).consumer_uid(), kNobody);
  const std::string refusal = "session_id: no session " +
                              std::to_string(root_session) + " of this user";
  for (int i = 0; i < 3; ++i) {  // disable, flush, stats
    ConsumerResponse refused;
    ASSERT_TRUE(nobody.NextAnswer(&refused)) << i;
    EXPECT_FALSE(refused.ok()) << i;
    EXPECT_EQ(refused.error(), refusal) << i;
  }

  // Root sees both and may stop nobody's.
  ConsumerRequest query;
  query.mutable_query_service_state();
  r = root.Call(query);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.service_state().sessions_size(), 2);
  r = root.Call(Disable(started.session_id()));
  EXPECT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.summary().session_id(), started.session_id());
  EXPECT_EQ(nobody.Finish(), 0);
  r = root.Call(Disable(root_session));
  EXPECT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.sessions.sessions_written == 2 && s.sessions.sessions_aborted == 0;
  }));
}

// A uid holds at most its share of consumer connections; the one past it
// is closed, and one of them closing makes room again.
TEST_F(TracingServiceConsumerTest, ConsumerConnectionsPerUidAreBounded) {
  TracingService::Options options = DaemonOptions();
  options.core.user_limits.max_consumers = 2;
  StartService(options);
  RawConsumer a, b, c;
  ASSERT_TRUE(a.Connect(dir_.File("consumer.sock")));
  ASSERT_TRUE(b.Connect(dir_.File("consumer.sock")));
  ASSERT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.consumers_accepted == 2;
  }));
  ASSERT_TRUE(c.Connect(dir_.File("consumer.sock")));
  EXPECT_TRUE(c.WaitForClose());
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.consumers_refused == 1;
  }));
  ConsumerResponse r = a.Call(Enable(SimpleConfig()), OpenOut("kept"));
  ASSERT_TRUE(r.ok()) << r.error();
  b.Close();
  RawConsumer d;
  ASSERT_TRUE(d.Connect(dir_.File("consumer.sock")));
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.consumers_accepted == 3;
  }));
  r = a.Call(Disable(r.session_id()));
  EXPECT_TRUE(r.ok()) << r.error();
}

TEST_F(TracingServiceConsumerTest, OtherUsersAreRefusedUnlessInTheGroup) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to act as another user";
  constexpr uid_t kNobody = 65534;
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  TracingService::Options options = DaemonOptions();
  options.consumer_socket_options.mode = 0666;  // the kernel lets it connect
  StartService(options);
  EXPECT_EQ(ConnectAs(dir_.File("consumer.sock"), kNobody), 3);
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.consumers_refused == 1 &&
           s.connections.consumers_accepted == 0;
  }));
  ASSERT_TRUE(service_->Stop(nullptr).ok());

  options.consumer_group = kNobody;  // its primary group
  StartService(options);
  EXPECT_EQ(ConnectAs(dir_.File("consumer.sock"), kNobody), 0);
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.consumers_accepted == 1;
  }));
}

// A producer that registered |name| (after its Hello).
bool RegisterDataSource(TestClient* producer, const std::string& name) {
  ipc::RegisterDataSourceMsg msg;
  msg.name = name;
  uint8_t buf[ipc::kMaxProducerMessageSize];
  const size_t size = ipc::EncodeRegisterDataSource(msg, buf, sizeof(buf));
  return size > 0 && producer->SendRaw(buf, size);
}

bool SendId(TestClient* producer, ipc::MessageType type, uint32_t id) {
  uint8_t buf[ipc::kMaxProducerMessageSize];
  const size_t size = type == ipc::MessageType::kDataSourceStopped
                          ? ipc::EncodeDataSourceStopped(id, buf, sizeof(buf))
                          : ipc::EncodeFlushAck(id, buf, sizeof(buf));
  return size > 0 && producer->SendRaw(buf, size);
}

// Each of |apps| receives a command of |type| (kFlush or kStopDataSource)
// and answers it; false at the first that does not.
bool AnswerEach(std::initializer_list<TestClient*> apps,
                ipc::MessageType type) {
  for (TestClient* app : apps) {
    ipc::Message m;
    if (!app->ReceiveMessage(&m) || m.type != type)
      return false;
    const ipc::MessageType answer = type == ipc::MessageType::kFlush
                                        ? ipc::MessageType::kFlushAck
                                        : ipc::MessageType::kDataSourceStopped;
    if (!SendId(app, answer, m.id))
      return false;
  }
  return true;
}

// |producer| declares |count| categories of |data_source| named
// "<prefix><i>", in messages of at most ipc::kMaxCategoriesPerMessage; each
// has a description of |description_size| bytes and the tag "slow" when i
// is odd.
bool DeclareCategories(TestClient* producer,
                       const std::string& data_source,
                       const std::string& prefix,
                       size_t count,
                       size_t description_size = 0) {
  std::vector<uint8_t> buf(ipc::kMaxDataSourceCategoriesSize);
  for (size_t first = 0; first < count;
       first += ipc::kMaxCategoriesPerMessage) {
    ipc::DataSourceCategoriesMsg msg;
    msg.data_source = data_source;
    for (size_t i = first;
         i < count && i < first + ipc::kMaxCategoriesPerMessage; i++) {
      ipc::CategoryDescriptor c;
      c.name = prefix + std::to_string(i);
      c.description = std::string(description_size, 'd');
      if (i % 2)
        c.tags = {"slow"};
      msg.categories.push_back(c);
    }
    const size_t size =
        ipc::EncodeDataSourceCategories(msg, buf.data(), buf.size());
    if (size == 0 || !producer->SendRaw(buf.data(), size))
      return false;
  }
  return true;
}

ConsumerRequest Query() {
  ConsumerRequest query;
  query.mutable_query_service_state();
  return query;
}

// Producers publish their categories; QueryServiceState lists them per
// producer and data source, and forgets a producer that left.
TEST_F(TracingServiceConsumerTest, QueryListsTheDeclaredCategories) {
  StartService(DaemonOptions());
  TestClient app, other;
  ASSERT_TRUE(app.Connect(dir_.File("producer.sock")));
  ASSERT_TRUE(app.Hello("app"));
  ASSERT_TRUE(RegisterDataSource(&app, "track_event"));
  ASSERT_TRUE(RegisterDataSource(&app, "plain"));  // declares nothing
  ASSERT_TRUE(DeclareCategories(&app, "track_event", "cat", 3, 5));
  ASSERT_TRUE(other.Connect(dir_.File("producer.sock")));
  ASSERT_TRUE(other.Hello("other"));
  ASSERT_TRUE(RegisterDataSource(&other, "track_event"));
  RawConsumer consumer;
  ASSERT_TRUE(consumer.Connect(dir_.File("consumer.sock")));
  // The producers' messages are taken in the service's rounds: poll.
  ConsumerResponse r;
  for (int i = 0; i < 1000; i++) {
    r = consumer.Call(Query());
    if (r.service_state().producers_size() == 2 &&
        r.service_state().producers(0).categories_size() == 1 &&
        r.service_state().producers(0).categories(0).categories_size() == 3) {
      break;
    }
    usleep(10 * 1000);
  }
  ASSERT_TRUE(r.ok()) << r.error();
  const protos::ServiceState& state = r.service_state();
  ASSERT_EQ(state.producers_size(), 2);
  const auto& p = state.producers(0);
  EXPECT_EQ(p.name(), "app");
  ASSERT_EQ(p.categories_size(), 1);
  EXPECT_EQ(p.categories(0).data_source(), "track_event");
  ASSERT_EQ(p.categories(0).categories_size(), 3);
  EXPECT_EQ(p.categories(0).categories(0).name(), "cat0");
  EXPECT_EQ(p.categories(0).categories(0).description(), "ddddd");
  EXPECT_EQ(p.categories(0).categories(0).tags_size(), 0);
  EXPECT_EQ(p.categories(0).categories(1).name(), "cat1");
  ASSERT_EQ(p.categories(0).categories(1).tags_size(), 1);
  EXPECT_EQ(p.categories(0).categories(1).tags(0), "slow");
  EXPECT_EQ(state.producers(1).categories_size(), 0);
  EXPECT_FALSE(state.has_categories_omitted());

  app.Disconnect();
  ASSERT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.producers.producers_connected == 1;
  }));
  r = consumer.Call(Query());
  ASSERT_EQ(r.service_state().producers_size(), 1);
  EXPECT_EQ(r.service_state().producers(0).name(), "other");
  EXPECT_EQ(r.service_state().producers(0).categories_size(), 0);
}

// Two producers declaring all they may, with the longest descriptions:
// far more than one answer holds. The answer still comes, with the lists
// cut (in producer order) and the rest counted.
TEST_F(TracingServiceConsumerTest, QueryCutsTheCategoriesToFitOneMessage) {
  StartService(DaemonOptions());
  TestClient a, b;
  for (TestClient* c : {&a, &b}) {
    ASSERT_TRUE(c->Connect(dir_.File("producer.sock")));
    ASSERT_TRUE(c->Hello("big"));
    ASSERT_TRUE(RegisterDataSource(c, "track_event"));
    ASSERT_TRUE(DeclareCategories(c, "track_event", "category.",
                                  ipc::kMaxDeclaredCategoriesPerProducer,
                                  ipc::kMaxCategoryDescriptionSize));
  }
  RawConsumer consumer;
  ASSERT_TRUE(consumer.Connect(dir_.File("consumer.sock")));
  const uint32_t total = 2 * ipc::kMaxDeclaredCategoriesPerProducer;
  ConsumerResponse r;
  uint32_t listed = 0;
  for (int i = 0; i < 1000; i++) {
    r = consumer.Call(Query());
    ASSERT_TRUE(r.ok()) << r.error();
    listed = 0;
    for (const auto& p : r.service_state().producers()) {
      for (const auto& list : p.categories())
        listed += static_cast<uint32_t>(list.categories_size());
    }
    if (r.service_state().producers_size() == 2 &&
        listed + r.service_state().categories_omitted() == total) {
      break;
    }
    usleep(10 * 1000);
  }
  EXPECT_EQ(listed + r.service_state().categories_omitted(), total);
  EXPECT_GT(r.service_state().categories_omitted(), 0u);
  // Most of a message is used: about 64 KiB of 266-byte entries.
  EXPECT_GT(listed, 200u);
  // The cut is a prefix: the first producer's first categories.
  ASSERT_GE(r.service_state().producers(0).categories_size(), 1);
  EXPECT_EQ(r.service_state().producers(0).categories(0).categories(0).name(),
            "category.0");
  EXPECT_EQ(r.service_state().producers(1).categories_size(), 0);
  EXPECT_LE(r.ByteSizeLong(), ipc::kMaxConsumerPayloadSize);
}

// What a producer declares is checked: a data source it never registered,
// a name declared twice, more than the limit: each a violation.
TEST_F(TracingServiceConsumerTest, HostileCategoryDeclarationsAreViolations) {
  StartService(DaemonOptions());
  TestClient unregistered, twice, too_many, fine;
  ASSERT_TRUE(unregistered.Connect(dir_.File("producer.sock")));
  ASSERT_TRUE(unregistered.Hello("unregistered"));
  ASSERT_TRUE(RegisterDataSource(&unregistered, "track_event"));
  ASSERT_TRUE(DeclareCategories(&unregistered, "other", "c", 1));
  EXPECT_TRUE(unregistered.WaitForClose());

  ASSERT_TRUE(twice.Connect(dir_.File("producer.sock")));
  ASSERT_TRUE(twice.Hello("twice"));
  ASSERT_TRUE(RegisterDataSource(&twice, "track_event"));
  ASSERT_TRUE(DeclareCategories(&twice, "track_event", "c", 2));
  ASSERT_TRUE(DeclareCategories(&twice, "track_event", "c", 1));  // "c0"
  EXPECT_TRUE(twice.WaitForClose());

  ASSERT_TRUE(too_many.Connect(dir_.File("producer.sock")));
  ASSERT_TRUE(too_many.Hello("too_many"));
  ASSERT_TRUE(RegisterDataSource(&too_many, "a"));
  ASSERT_TRUE(RegisterDataSource(&too_many, "b"));
  ASSERT_TRUE(DeclareCategories(&too_many, "a", "c", 500));
  // 500 + 13 > 512 (the limit is the producer's, across data sources).
  ASSERT_TRUE(DeclareCategories(&too_many, "b", "c", 13));
  EXPECT_TRUE(too_many.WaitForClose());

  // The same names under two data sources are fine.
  ASSERT_TRUE(fine.Connect(dir_.File("producer.sock")));
  ASSERT_TRUE(fine.Hello("fine"));
  ASSERT_TRUE(RegisterDataSource(&fine, "a"));
  ASSERT_TRUE(RegisterDataSource(&fine, "b"));
  ASSERT_TRUE(DeclareCategories(&fine, "a", "c", 12));
  ASSERT_TRUE(DeclareCategories(&fine, "b", "c", 12));
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.violations_data_source == 3 &&
           s.producers.producers_connected == 1;
  }));
}

TEST_F(TracingServiceConsumerTest, TwoSessionsWithProducersOverTheSockets) {
  StartService(DaemonOptions());
  TestClient app1, app2;
  ASSERT_TRUE(app1.Connect(dir_.File("producer.sock")));
  ASSERT_TRUE(app1.Hello("app1"));
  ASSERT_TRUE(app2.Connect(dir_.File("producer.sock")));
  ASSERT_TRUE(app2.Hello("app2"));
  ASSERT_TRUE(RegisterDataSource(&app1, "track_event"));
  ASSERT_TRUE(RegisterDataSource(&app2, "track_event"));

  RawConsumer consumer;
  ASSERT_TRUE(consumer.Connect(dir_.File("consumer.sock")));
  // Session A: app1 only, with categories; session B: both.
  TraceConfig config_a = SimpleConfig();
  config_a.mutable_data_sources(0)->add_producer_name_filter("app1");
  config_a.mutable_data_sources(0)
      ->mutable_config()
      ->mutable_track_event_config()
      ->add_enabled_categories("gfx");
  config_a.mutable_incremental_state_config()->set_clear_period_ms(500);
  // A field of the data source's own (numbered 100 or more) that the
  // service does not know reaches the producer in the config bytes.
  config_a.mutable_data_sources(0)
      ->mutable_config()
      ->mutable_unknown_fields()
      ->AddLengthDelimited(4242, "own config");
  ConsumerResponse ra = consumer.Call(Enable(config_a), OpenOut("a"));
  ASSERT_TRUE(ra.ok()) << ra.error();
  ipc::Message start_a;
  ASSERT_TRUE(app1.ReceiveMessage(&start_a));
  ASSERT_EQ(start_a.type, ipc::MessageType::kStartDataSource);
  EXPECT_EQ(start_a.start_data_source.name, "track_event");
  EXPECT_EQ(start_a.start_data_source.clear_period_ms, 500u);
  EXPECT_EQ(start_a.start_data_source.enabled_categories,
            std::vector<std::string>{"gfx"});
  perfetto::protos::DataSourceConfig received;
  ASSERT_TRUE(received.ParseFromString(start_a.start_data_source.config));
  EXPECT_EQ(received.name(), "track_event");
  EXPECT_EQ(received.track_event_config().enabled_categories(0), "gfx");
  ASSERT_EQ(received.unknown_fields().field_count(), 1);
  EXPECT_EQ(received.unknown_fields().field(0).number(), 4242);
  EXPECT_EQ(received.unknown_fields().field(0).length_delimited(),
            "own config");

  ConsumerResponse rb = consumer.Call(Enable(SimpleConfig()), OpenOut("b"));
  ASSERT_TRUE(rb.ok()) << rb.error();
  ipc::Message start_b1, start_b2;
  ASSERT_TRUE(app1.ReceiveMessage(&start_b1));
  ASSERT_TRUE(app2.ReceiveMessage(&start_b2));
  ASSERT_EQ(start_b1.type, ipc::MessageType::kStartDataSource);
  ASSERT_EQ(start_b2.type, ipc::MessageType::kStartDataSource);
  EXPECT_EQ(start_b1.start_data_source.target_buffer,
            start_b2.start_data_source.target_buffer);
  EXPECT_NE(start_b1.start_data_source.target_buffer,
            start_a.start_data_source.target_buffer);

  auto wa = app1.NewWriter(start_a.start_data_source.target_buffer);
  auto wb1 = app1.NewWriter(start_b1.start_data_source.target_buffer);
  auto wb2 = app2.NewWriter(start_b2.start_data_source.target_buffer);
  WriteTestPackets(wa.get(), "a", 0, 200);
  WriteTestPackets(wb1.get(), "b1", 0, 150);
  WriteTestPackets(wb2.get(), "b2", 0, 100);
  wa->Flush();
  wb1->Flush();
  wb2->Flush();

  // A stops: its instance is told, acks, then the trace is written.
  ASSERT_TRUE(consumer.Send(Disable(ra.session_id())));
  ipc::Message stop_a;
  ASSERT_TRUE(app1.ReceiveMessage(&stop_a));
  ASSERT_EQ(stop_a.type, ipc::MessageType::kStopDataSource);
  EXPECT_EQ(stop_a.id, start_a.start_data_source.instance_id);
  ASSERT_TRUE(SendId(&app1, ipc::MessageType::kDataSourceStopped, stop_a.id));
  ConsumerResponse done_a;
  ASSERT_TRUE(consumer.Receive(&done_a));
  ASSERT_TRUE(done_a.ok()) << done_a.error();
  EXPECT_EQ(done_a.summary().packets_written(), 200u);
  perfetto::protos::Trace trace_a;
  ASSERT_TRUE(ReadTraceFile(dir_.File("a"), &trace_a));
  auto tagged_a = CollectTestPackets(trace_a);
  ASSERT_EQ(tagged_a.size(), 1u);
  EXPECT_EQ(tagged_a["a"].seqs, Seqs(0, 200));

  // B goes on; a flush round trip, then B stops.
  WriteTestPackets(wb2.get(), "b2", 100, 100);
  wb2->Flush();
  ConsumerRequest flush;
  flush.mutable_flush()->set_session_id(rb.session_id());
  ASSERT_TRUE(consumer.Send(flush));
  ASSERT_TRUE(AnswerEach({&app1, &app2}, ipc::MessageType::kFlush));
  ConsumerResponse flushed;
  ASSERT_TRUE(consumer.Receive(&flushed));
  EXPECT_TRUE(flushed.ok()) << flushed.error();

  ASSERT_TRUE(consumer.Send(Disable(rb.session_id())));
  ASSERT_TRUE(AnswerEach({&app1, &app2}, ipc::MessageType::kStopDataSource));
  ConsumerResponse done_b;
  ASSERT_TRUE(consumer.Receive(&done_b));
  ASSERT_TRUE(done_b.ok()) << done_b.error();
  perfetto::protos::Trace trace_b;
  ASSERT_TRUE(ReadTraceFile(dir_.File("b"), &trace_b));
  auto tagged_b = CollectTestPackets(trace_b);
  ASSERT_EQ(tagged_b.size(), 2u);
  EXPECT_EQ(tagged_b["b1"].seqs, Seqs(0, 150));
  EXPECT_EQ(tagged_b["b2"].seqs, Seqs(0, 200));
}

TEST_F(TracingServiceConsumerTest, HostileProducerAnswersAreViolations) {
  StartService(DaemonOptions());
  TestClient app, twice;
  ASSERT_TRUE(app.Connect(dir_.File("producer.sock")));
  ASSERT_TRUE(app.Hello("app"));
  // An ack for an instance that was never started.
  ASSERT_TRUE(SendId(&app, ipc::MessageType::kDataSourceStopped, 77));
  EXPECT_TRUE(app.WaitForClose());
  // A data source registered twice.
  ASSERT_TRUE(twice.Connect(dir_.File("producer.sock")));
  ASSERT_TRUE(twice.Hello("twice"));
  ASSERT_TRUE(RegisterDataSource(&twice, "track_event"));
  ASSERT_TRUE(RegisterDataSource(&twice, "track_event"));
  EXPECT_TRUE(twice.WaitForClose());
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.violations_data_source == 2 &&
           s.producers.producers_connected == 0;
  }));
}

TEST_F(TracingServiceConsumerTest, SilentProducerTimesOutTheStop) {
  StartService(DaemonOptions());
  TestClient app;
  ASSERT_TRUE(app.Connect(dir_.File("producer.sock")));
  ASSERT_TRUE(app.Hello("app"));
  ASSERT_TRUE(RegisterDataSource(&app, "track_event"));
  RawConsumer consumer;
  ASSERT_TRUE(consumer.Connect(dir_.File("consumer.sock")));
  TraceConfig config = SimpleConfig();
  config.set_data_source_stop_timeout_ms(200);
  ConsumerResponse r = consumer.Call(Enable(config), OpenOut("t"));
  ASSERT_TRUE(r.ok()) << r.error();
  ipc::Message start;
  ASSERT_TRUE(app.ReceiveMessage(&start));
  auto w = app.NewWriter(start.start_data_source.target_buffer);
  WriteTestPackets(w.get(), "x", 0, 30);       // never flushed: scraped at stop
  r = consumer.Call(Disable(r.session_id()));  // the producer never acks
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.summary().packets_written(), 30u);
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.sessions.data_source_stop_timeouts == 1;
  }));
  perfetto::protos::Trace trace;
  ASSERT_TRUE(ReadTraceFile(dir_.File("t"), &trace));
  EXPECT_EQ(CollectTestPackets(trace)["x"].seqs, Seqs(0, 30));
}

// Connects |app| as producer "app" with a track_event data source and
// |owner| and |other| as two consumers of this user; |owner| starts a
// session with |config| writing |out_fd|. Returns its id (0 if anything
// failed), the app's StartDataSource in |*start|.
uint64_t StartWithTwoConsumers(const TempDir& dir,
                               const TraceConfig& config,
                               int out_fd,
                               TestClient* app,
                               RawConsumer* owner,
                               RawConsumer* other,
                               ipc::Message* start) {
  if (!app->Connect(dir.File("producer.sock")) || !app->Hello("app") ||
      !RegisterDataSource(app, "track_event") ||
      !owner->Connect(dir.File("consumer.sock")) ||
      !other->Connect(dir.File("consumer.sock"))) {
    return 0;
  }
  const ConsumerResponse r = owner->Call(Enable(config), out_fd);
  EXPECT_TRUE(r.ok()) << r.error();
  if (!r.ok() || !app->ReceiveMessage(start) ||
      start->type != ipc::MessageType::kStartDataSource) {
    return 0;
  }
  return r.session_id();
}

// Another connection of the session's user reads its stats, flushes and
// stops it (as `ringtrace --stop` does from another process): the answers
// go to that connection, the trace into the owner's file, and the owner
// gets tracing_ended with the same summary.
TEST_F(TracingServiceConsumerTest, AnotherConnectionOfTheUserFlushesAndStops) {
  StartService(DaemonOptions());
  TestClient app;
  RawConsumer owner, other;
  ipc::Message start;
  const uint64_t id = StartWithTwoConsumers(dir_, SimpleConfig(), OpenOut("t"),
                                            &app, &owner, &other, &start);
  ASSERT_NE(id, 0u);
  auto w = app.NewWriter(start.start_data_source.target_buffer);
  WriteTestPackets(w.get(), "x", 0, 40);
  w->Flush();

  ConsumerRequest stats;
  stats.mutable_get_trace_stats()->set_session_id(id);
  ConsumerResponse r = other.Call(stats);
  ASSERT_TRUE(r.ok()) << r.error();
  ConsumerRequest flush;
  flush.mutable_flush()->set_session_id(id);
  ASSERT_TRUE(other.Send(flush));
  ASSERT_TRUE(AnswerEach({&app}, ipc::MessageType::kFlush));
  ConsumerResponse flushed;
  ASSERT_TRUE(other.Receive(&flushed));
  EXPECT_TRUE(flushed.ok()) << flushed.error();
  EXPECT_EQ(flushed.session_id(), id);

  ASSERT_TRUE(other.Send(Disable(id)));
  ASSERT_TRUE(AnswerEach({&app}, ipc::MessageType::kStopDataSource));
  ConsumerResponse stopped;
  ASSERT_TRUE(other.Receive(&stopped));
  ASSERT_TRUE(stopped.ok()) << stopped.error();
  EXPECT_FALSE(stopped.tracing_ended());
  EXPECT_EQ(stopped.summary().packets_written(), 40u);
  ConsumerResponse ended;
  ASSERT_TRUE(owner.Receive(&ended));
  EXPECT_TRUE(ended.tracing_ended());
  EXPECT_EQ(ended.request_id(), 0u);
  EXPECT_EQ(ended.session_id(), id);
  EXPECT_EQ(ended.summary().packets_written(), 40u);
  perfetto::protos::Trace trace;
  ASSERT_TRUE(ReadTraceFile(dir_.File("t"), &trace));
  EXPECT_EQ(CollectTestPackets(trace)["x"].seqs, Seqs(0, 40));
  EXPECT_TRUE(trace.packet(trace.packet_size() - 2).has_trace_stats());
  // Nothing else went to the owner: its next answer is its own query's.
  ConsumerRequest query;
  query.mutable_query_service_state();
  r = owner.Call(query);
  ASSERT_TRUE(r.has_service_state());
  EXPECT_EQ(r.service_state().sessions_size(), 0);
}

// A stop asked for by another connection waits for the producers; if the
// owner hangs up meanwhile, the session is freed unwritten and the waiting
// request gets the reason.
TEST_F(TracingServiceConsumerTest,
       OwnerHangUpAnswersAStopFromAnotherConnection) {
  StartService(DaemonOptions());
  TestClient app;
  RawConsumer owner, other;
  ipc::Message m;
  TraceConfig config = SimpleConfig();
  config.set_data_source_stop_timeout_ms(600000);
  const uint64_t id = StartWithTwoConsumers(dir_, config, OpenOut("t"), &app,
                                            &owner, &other, &m);
  ASSERT_NE(id, 0u);
  ASSERT_TRUE(other.Send(Disable(id)));
  ASSERT_TRUE(app.ReceiveMessage(&m));  // never acked
  ASSERT_EQ(m.type, ipc::MessageType::kStopDataSource);
  owner.Disconnect();
  ConsumerResponse refused;
  ASSERT_TRUE(other.Receive(&refused));
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), "session " + std::to_string(id) +
                                 " was freed unwritten: the consumer that "
                                 "started it left");
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.sessions.sessions_aborted == 1 && s.sessions_active == 0;
  }));
}

ConsumerRequest DetachReq(uint64_t session_id, const std::string& key) {
  ConsumerRequest r;
  r.mutable_detach()->set_session_id(session_id);
  r.mutable_detach()->set_key(key);
  return r;
}

ConsumerRequest AttachReq(const std::string& key, bool probe = false) {
  ConsumerRequest r;
  r.mutable_attach()->set_key(key);
  if (probe)
    r.mutable_attach()->set_probe(true);
  return r;
}

// A detached session outlives the connection that started it; a new
// connection of the user attaches by key, owns it and stops it; the trace
// is in the file given at the start.
TEST_F(TracingServiceConsumerTest, DetachedSessionOutlivesItsConnection) {
  StartService(DaemonOptions());
  RawConsumer first;
  ASSERT_TRUE(first.Connect(dir_.File("consumer.sock")));
  ConsumerResponse r = first.Call(Enable(SimpleConfig()), OpenOut("trace"));
  ASSERT_TRUE(r.ok()) << r.error();
  const uint64_t session = r.session_id();
  r = first.Call(DetachReq(session, "nightly.run-1"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.session_id(), session);
  first.Close();
  ASSERT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.consumer_disconnects == 1;
  }));

  RawConsumer second;
  ASSERT_TRUE(second.Connect(dir_.File("consumer.sock")));
  r = second.Call(AttachReq("nightly.run-1", /*probe=*/true));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.session_id(), session);
  r = second.Call(AttachReq("nightly.run-1"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.session_id(), session);
  // Attached: the key is free, the session is this connection's.
  r = second.Call(AttachReq("nightly.run-1", /*probe=*/true));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error(),
            "no detached session of this user by the key nightly.run-1");
  r = second.Call(Disable(session));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(r.tracing_ended()) << "the answer to the owner's stop";
  EXPECT_EQ(r.summary().session_id(), session);
  perfetto::protos::Trace trace;
  ASSERT_TRUE(ReadTraceFile(dir_.File("trace"), &trace));
  EXPECT_TRUE(trace.packet(0).has_trace_config());
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.sessions.sessions_written == 1 && s.sessions.sessions_aborted == 0;
  }));
}

// A detached session that ends (its duration) is written; the attach
// learns it with the tracing_ended event its owner would have had.
TEST_F(TracingServiceConsumerTest, DetachedSessionThatEndedIsToldAtAttach) {
  StartService(DaemonOptions());
  RawConsumer first;
  ASSERT_TRUE(first.Connect(dir_.File("consumer.sock")));
  TraceConfig config = SimpleConfig();
  config.set_duration_ms(100);
  ConsumerResponse r = first.Call(Enable(config), OpenOut("trace"));
  ASSERT_TRUE(r.ok()) << r.error();
  const uint64_t session = r.session_id();
  ASSERT_TRUE(first.Call(DetachReq(session, "k")).ok());
  first.Close();
  ASSERT_TRUE(WaitFor(
      [](const ServiceStats& s) { return s.sessions.sessions_written == 1; }));
  RawConsumer second;
  ASSERT_TRUE(second.Connect(dir_.File("consumer.sock")));
  r = second.Call(AttachReq("k"));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.session_id(), session);
  ConsumerResponse ended;
  ASSERT_TRUE(second.Receive(&ended));
  EXPECT_TRUE(ended.tracing_ended());
  EXPECT_TRUE(ended.ok());
  EXPECT_EQ(ended.session_id(), session);
  EXPECT_EQ(ended.summary().session_id(), session);
  EXPECT_GT(ended.summary().bytes_written(), 0u);
  perfetto::protos::Trace trace;
  EXPECT_TRUE(ReadTraceFile(dir_.File("trace"), &trace));
  EXPECT_FALSE(second.Call(AttachReq("k")).ok()) << "told once";
}

TEST_F(TracingServiceConsumerTest, DetachRefusalsNameTheirReason) {
  StartService(DaemonOptions());
  RawConsumer owner, other;
  ASSERT_TRUE(owner.Connect(dir_.File("consumer.sock")));
  ASSERT_TRUE(other.Connect(dir_.File("consumer.sock")));
  ConsumerResponse r = owner.Call(Enable(SimpleConfig()), OpenOut("a"));
  ASSERT_TRUE(r.ok()) << r.error();
  const uint64_t a = r.session_id();
  r = owner.Call(Enable(SimpleConfig()), OpenOut("b"));
  ASSERT_TRUE(r.ok()) << r.error();
  const uint64_t b = r.session_id();

  r = other.Call(DetachReq(a, "k"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "session " + std::to_string(a) +
                           ": only the connection that owns it may detach it");
  r = owner.Call(DetachReq(a + 100, "k"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "session_id: no session " + std::to_string(a + 100) +
                           " of this user");
  r = owner.Call(DetachReq(a, "has space"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "detach.key: a byte outside [A-Za-z0-9._-]");
  r = owner.Call(DetachReq(a, std::string(65, 'k')));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "detach.key: 65 bytes, expected 1..64");
  ASSERT_TRUE(owner.Call(DetachReq(a, "k")).ok());
  r = owner.Call(DetachReq(b, "k"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error(),
            "key k: this user has a detached session by that key already");
  r = other.Call(AttachReq("nope"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "no detached session of this user by the key nope");
  // The owner's close frees b (still its own), not the detached a.
  owner.Close();
  ASSERT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.sessions.sessions_aborted == 1 && s.sessions_active == 1;
  }));
  ASSERT_TRUE(other.Call(AttachReq("k")).ok());
  ASSERT_TRUE(other.Call(Disable(a)).ok());
}

// Keys are per user: another uid neither finds nor attaches root's.
TEST_F(TracingServiceConsumerTest, AnotherUserCannotAttach) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to act as another user";
  constexpr uid_t kNobody = 65534;
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  TracingService::Options options = DaemonOptions();
  options.consumer_socket_options.mode = 0666;
  options.consumer_group = kNobody;
  StartService(options);
  RawConsumer root;
  ASSERT_TRUE(root.Connect(dir_.File("consumer.sock")));
  ConsumerResponse r = root.Call(Enable(SimpleConfig()), OpenOut("root"));
  ASSERT_TRUE(r.ok()) << r.error();
  const uint64_t session = r.session_id();
  ASSERT_TRUE(root.Call(DetachReq(session, "shared")).ok());

  std::vector<ConsumerRequest> requests;
  requests.push_back(AttachReq("shared", /*probe=*/true));
  requests.push_back(AttachReq("shared"));
  requests.push_back(Disable(session));
  for (size_t i = 0; i < requests.size(); ++i)
    requests[i].set_request_id(i + 1);
  ConsumerAsUser nobody;
  ASSERT_TRUE(nobody.Start(dir_.File("consumer.sock"), kNobody, requests, -1));
  for (int i = 0; i < 2; ++i) {
    ConsumerResponse refused;
    ASSERT_TRUE(nobody.NextAnswer(&refused)) << i;
    EXPECT_FALSE(refused.ok()) << i;
    EXPECT_EQ(refused.error(),
              "no detached session of this user by the key shared")
        << i;
  }
  ConsumerResponse refused;
  ASSERT_TRUE(nobody.NextAnswer(&refused));
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(nobody.Finish(), 0);
  // Root's key still names it.
  r = root.Call(AttachReq("shared"));
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_TRUE(root.Call(Disable(session)).ok());
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
