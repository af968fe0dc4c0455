/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/consumer/consumer_client.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "src/base/scoped_fd.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/ipc/consumer_protocol.h"
#include "src/tracing/ipc/test/raw_send.h"
#include "src/tracing/ipc/unix_socket.h"

namespace ringtrace {
namespace consumer {
namespace {

using perfetto::protos::TraceConfig;
using protos::ConsumerRequest;
using protos::ConsumerResponse;

// Far beyond any wait of these tests: it only keeps a broken test from
// hanging forever.
constexpr int kSafetyMs = 20000;

class Notification {
 public:
  void Notify() {
    std::lock_guard<std::mutex> lock(mu_);
    notified_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return notified_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool notified_ = false;
};

// The service side, played by a script on its own thread: it accepts one
// connection on a socket in a private directory, runs the script, then
// keeps the connection (unless the script closed it) until the test ends.
class FakeService {
 public:
  using Script = std::function<void(std::unique_ptr<ipc::UnixSocket>*)>;

  explicit FakeService(Script script) : path_(dir_.File("consumer.sock")) {
    base::Status s;
    listener_ = ipc::UnixSocket::Listen(path_, &s);
    EXPECT_TRUE(listener_) << s.message();
    thread_ = std::thread([this, script] {
      std::unique_ptr<ipc::UnixSocket> conn;
      while (!conn && listener_->WaitReadable(kSafetyMs)) {
        base::Status st;
        conn = listener_->Accept(&st);
      }
      if (!conn) {
        ADD_FAILURE() << "no client connected";
        return;
      }
      conn->SetNonBlocking(false);
      script(&conn);
      done_.Wait();
    });
  }
  ~FakeService() {
    done_.Notify();
    thread_.join();
  }

  const std::string& path() const { return path_; }

  std::unique_ptr<ConsumerClient> ConnectClient() {
    base::Status s;
    std::unique_ptr<ConsumerClient> client =
        ConsumerClient::Connect(path_, kSafetyMs, &s);
    EXPECT_TRUE(client) << s.message();
    return client;
  }

 private:
  base::TempDir dir_;
  std::string path_;
  std::unique_ptr<ipc::UnixSocket> listener_;
  Notification done_;
  std::thread thread_;
};

// Reads one request as the service does (DecodeConsumerRequest checks it).
bool ReadRequest(ipc::UnixSocket* conn,
                 ConsumerRequest* request,
                 base::ScopedFd* fd = nullptr) {
  std::vector<uint8_t> buf(ipc::kMaxConsumerMessageSize);
  if (!conn->WaitReadable(kSafetyMs)) {
    ADD_FAILURE() << "no request came";
    return false;
  }
  size_t size = 0;
  base::ScopedFd received;
  base::Status s;
  if (conn->Receive(buf.data(), buf.size(), &size, &received, &s) !=
      ipc::UnixSocket::RecvResult::kMessage) {
    ADD_FAILURE() << "receive: " << s.message();
    return false;
  }
  s = ipc::DecodeConsumerRequest(buf.data(), size, received.valid(), request);
  EXPECT_TRUE(s.ok()) << s.message();
  if (fd)
    *fd = std::move(received);
  return s.ok();
}

void Respond(ipc::UnixSocket* conn, const ConsumerResponse& response) {
  std::vector<uint8_t> datagram;
  ASSERT_TRUE(ipc::EncodeConsumerResponse(response, &datagram).ok());
  ASSERT_TRUE(conn->Send(datagram.data(), datagram.size()).ok());
}

ConsumerResponse Ok(const ConsumerRequest& request) {
  ConsumerResponse response;
  response.set_request_id(request.request_id());
  response.set_ok(true);
  return response;
}

ConsumerResponse Ended(uint64_t session_id) {
  ConsumerResponse event;
  event.set_ok(true);
  event.set_tracing_ended(true);
  event.set_session_id(session_id);
  event.mutable_summary()->set_session_id(session_id);
  return event;
}

TraceConfig ValidConfig() {
  TraceConfig config;
  config.add_buffers()->set_size_kb(256);
  config.add_data_sources()->mutable_config()->set_name("track_event");
  return config;
}

std::string ReadFile(const std::string& path) {
  std::string out;
  base::ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  char buf[256];
  ssize_t n;
  while ((n = read(fd.get(), buf, sizeof(buf))) > 0)
    out.append(buf, static_cast<size_t>(n));
  return out;
}

TEST(ConsumerClientTest, TrustsOnlyAServiceOfItsUserOrRoot) {
  EXPECT_TRUE(ConsumerClient::CheckServiceUid(1000, 1000).ok());
  EXPECT_TRUE(ConsumerClient::CheckServiceUid(0, 1000).ok());
  EXPECT_TRUE(ConsumerClient::CheckServiceUid(0, 0).ok());
  const base::Status other = ConsumerClient::CheckServiceUid(1001, 1000);
  EXPECT_FALSE(other.ok());
  EXPECT_EQ(other.message(),
            "served by uid 1001, neither you (uid 1000) nor root: not trusted "
            "with trace files");
  EXPECT_FALSE(ConsumerClient::CheckServiceUid(1000, 0).ok());
}

TEST(ConsumerClientTest, EveryCallRoundTrips) {
  FakeService service([](std::unique_ptr<ipc::UnixSocket>* c) {
    ipc::UnixSocket* conn = c->get();
    ConsumerRequest req;
    base::ScopedFd fd;
    ASSERT_TRUE(ReadRequest(conn, &req, &fd));
    ASSERT_TRUE(req.has_enable_tracing());
    EXPECT_EQ(req.enable_tracing().config().SerializeAsString(),
              ValidConfig().SerializeAsString());
    ASSERT_EQ(write(fd.get(), "trace", 5), 5);
    ConsumerResponse resp = Ok(req);
    resp.set_session_id(42);
    Respond(conn, resp);

    ASSERT_TRUE(ReadRequest(conn, &req));
    ASSERT_TRUE(req.has_flush());
    EXPECT_EQ(req.flush().session_id(), 42u);
    EXPECT_EQ(req.flush().timeout_ms(), 1234u);
    Respond(conn, Ok(req));

    ASSERT_TRUE(ReadRequest(conn, &req));
    ASSERT_TRUE(req.has_get_trace_stats());
    EXPECT_EQ(req.get_trace_stats().session_id(), 42u);
    resp = Ok(req);
    resp.set_trace_stats(std::string("\x08\x01\x1b", 3));
    Respond(conn, resp);

    ASSERT_TRUE(ReadRequest(conn, &req, &fd));
    ASSERT_TRUE(req.has_clone_session());
    EXPECT_EQ(req.clone_session().session_id(), 42u);
    ASSERT_EQ(write(fd.get(), "clone", 5), 5);
    Respond(conn, Ok(req));

    ASSERT_TRUE(ReadRequest(conn, &req));
    ASSERT_TRUE(req.has_query_service_state());
    resp = Ok(req);
    resp.mutable_service_state()->add_producers()->set_name("app");
    resp.mutable_service_state()->set_max_sessions(8);
    Respond(conn, resp);

    ASSERT_TRUE(ReadRequest(conn, &req));
    ASSERT_TRUE(req.has_disable_tracing());
    EXPECT_EQ(req.disable_tracing().session_id(), 42u);
    resp = Ok(req);
    resp.mutable_summary()->set_session_id(42);
    resp.mutable_summary()->set_packets_written(1000);
    resp.mutable_summary()->set_packets_lost(3);
    Respond(conn, resp);
  });
  base::TempDir files;
  std::unique_ptr<ConsumerClient> client = service.ConnectClient();
  ASSERT_TRUE(client);
  EXPECT_GE(client->fd(), 0);

  base::ScopedFd out(
      open(files.File("trace").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
  uint64_t session_id = 0;
  base::Status s = client->EnableTracing(ValidConfig(), out.get(), &session_id);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(session_id, 42u);
  EXPECT_EQ(ReadFile(files.File("trace")), "trace");

  s = client->Flush(42, 1234);
  EXPECT_TRUE(s.ok()) << s.message();

  std::string stats;
  s = client->GetTraceStats(42, &stats);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(stats, std::string("\x08\x01\x1b", 3));

  base::ScopedFd clone(
      open(files.File("clone").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
  s = client->CloneSession(42, clone.get());
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(ReadFile(files.File("clone")), "clone");

  protos::ServiceState state;
  s = client->QueryServiceState(&state);
  EXPECT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(state.producers_size(), 1);
  EXPECT_EQ(state.producers(0).name(), "app");
  EXPECT_EQ(state.max_sessions(), 8u);

  protos::SessionSummary summary;
  s = client->DisableTracing(42, kSafetyMs, &summary);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(summary.packets_written(), 1000u);
  EXPECT_EQ(summary.packets_lost(), 3u);
  EXPECT_TRUE(client->broken().ok());
}

// A refusal carries the service's message and leaves the connection usable.
TEST(ConsumerClientTest, RefusalIsTheServicesMessage) {
  FakeService service([](std::unique_ptr<ipc::UnixSocket>* c) {
    ConsumerRequest req;
    ASSERT_TRUE(ReadRequest(c->get(), &req));
    ConsumerResponse resp;
    resp.set_request_id(req.request_id());
    resp.set_ok(false);
    resp.set_error("--max-sessions reached: 8 are running");
    Respond(c->get(), resp);
    ASSERT_TRUE(ReadRequest(c->get(), &req));
    Respond(c->get(), Ok(req));
  });
  std::unique_ptr<ConsumerClient> client = service.ConnectClient();
  ASSERT_TRUE(client);
  base::TempDir files;
  base::ScopedFd out(
      open(files.File("t").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
  uint64_t session_id = 7;
  EXPECT_EQ(
      client->EnableTracing(ValidConfig(), out.get(), &session_id).message(),
      "--max-sessions reached: 8 are running");
  EXPECT_EQ(session_id, 0u);
  EXPECT_TRUE(client->broken().ok());
  protos::ServiceState state;
  EXPECT_TRUE(client->QueryServiceState(&state).ok());
}

// IsDetached: a probe; found is true, the service's refusal is false, a
// call that got no answer (a timeout) is an error, never a "no".
TEST(ConsumerClientTest, IsDetachedTellsARefusalFromNoAnswer) {
  Notification timed_out;
  FakeService service([&timed_out](std::unique_ptr<ipc::UnixSocket>* c) {
    ConsumerRequest req;
    ASSERT_TRUE(ReadRequest(c->get(), &req));
    EXPECT_TRUE(req.attach().probe());
    EXPECT_EQ(req.attach().key(), "here");
    ConsumerResponse found = Ok(req);
    found.set_session_id(4);
    Respond(c->get(), found);
    ASSERT_TRUE(ReadRequest(c->get(), &req));
    EXPECT_TRUE(req.attach().probe());
    ConsumerResponse refused;
    refused.set_request_id(req.request_id());
    refused.set_ok(false);
    refused.set_error("no detached session of this user by the key gone");
    Respond(c->get(), refused);
    ASSERT_TRUE(ReadRequest(c->get(), &req));  // never answered in time
    timed_out.Wait();
  });
  std::unique_ptr<ConsumerClient> client = service.ConnectClient();
  ASSERT_TRUE(client);
  bool detached = false;
  ASSERT_TRUE(client->IsDetached("here", &detached).ok());
  EXPECT_TRUE(detached);
  base::Status s = client->IsDetached("gone", &detached);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(detached);
  EXPECT_FALSE(client->IsDetached("bad key!", &detached).ok());
  client->set_timeout_ms(10);
  detached = true;
  s = client->IsDetached("slow", &detached);
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(detached);
  EXPECT_NE(s.message().find("no answer"), std::string::npos) << s.message();
  timed_out.Notify();
}

// Defects the client can see itself are reported without a round trip: the
// service's first request is the one after them.
TEST(ConsumerClientTest, LocalChecksComeFirst) {
  FakeService service([](std::unique_ptr<ipc::UnixSocket>* c) {
    ConsumerRequest req;
    ASSERT_TRUE(ReadRequest(c->get(), &req));
    EXPECT_TRUE(req.has_query_service_state());
    EXPECT_EQ(req.request_id(), 1u);
    Respond(c->get(), Ok(req));
  });
  std::unique_ptr<ConsumerClient> client = service.ConnectClient();
  ASSERT_TRUE(client);
  base::TempDir files;
  base::ScopedFd rw(
      open(files.File("t").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600));
  base::ScopedFd ro(open(files.File("t").c_str(), O_RDONLY | O_CLOEXEC));
  TraceConfig bad = ValidConfig();
  bad.mutable_buffers(0)->set_size_kb(0);
  uint64_t session_id = 0;
  EXPECT_EQ(client->EnableTracing(bad, rw.get(), &session_id).message(),
            "buffers[0].size_kb: 0 is outside 1..4194240");
  EXPECT_EQ(
      client->EnableTracing(ValidConfig(), ro.get(), &session_id).message(),
      "trace file: not open for writing");
  EXPECT_EQ(client->CloneSession(1, ro.get()).message(),
            "trace file: not open for writing");
  EXPECT_EQ(client->Flush(1, ipc::kMaxTimeoutMs + 1).message(),
            "flush timeout 600001 ms is outside 0..600000");
  protos::ServiceState state;
  EXPECT_TRUE(client->QueryServiceState(&state).ok());
}

// tracing_ended events interleaved with responses are queued, in order.
TEST(ConsumerClientTest, EventsAreQueuedBesideResponses) {
  Notification take_more;
  FakeService service([&take_more](std::unique_ptr<ipc::UnixSocket>* c) {
    ConsumerRequest req;
    ASSERT_TRUE(ReadRequest(c->get(), &req));
    Respond(c->get(), Ended(5));
    Respond(c->get(), Ended(6));
    ConsumerResponse resp = Ok(req);
    resp.mutable_summary()->set_packets_written(9);
    Respond(c->get(), resp);
    take_more.Wait();
    Respond(c->get(), Ended(7));
  });
  std::unique_ptr<ConsumerClient> client = service.ConnectClient();
  ASSERT_TRUE(client);
  protos::SessionSummary summary;
  ASSERT_TRUE(client->DisableTracing(3, kSafetyMs, &summary).ok());
  EXPECT_EQ(summary.packets_written(), 9u);

  ConsumerResponse event;
  ASSERT_TRUE(client->TakeEvent(&event));
  EXPECT_EQ(event.session_id(), 5u);
  EXPECT_TRUE(event.tracing_ended());
  bool got = false;
  ASSERT_TRUE(client->WaitForEvent(kSafetyMs, &got).ok());
  EXPECT_TRUE(got);  // already queued
  ASSERT_TRUE(client->TakeEvent(&event));
  EXPECT_EQ(event.session_id(), 6u);
  EXPECT_FALSE(client->TakeEvent(&event));

  // Nothing pending: a zero wait returns at once.
  ASSERT_TRUE(client->WaitForEvent(0, &got).ok());
  EXPECT_FALSE(got);
  take_more.Notify();
  ASSERT_TRUE(client->WaitForEvent(kSafetyMs, &got).ok());
  EXPECT_TRUE(got);
  ASSERT_TRUE(client->TakeEvent(&event));
  EXPECT_EQ(event.session_id(), 7u);
}

// A call the service does not answer times out; its answer, if it comes
// later, is recognised and dropped, and the next call works.
TEST(ConsumerClientTest, UnansweredCallTimesOutAndItsLateAnswerIsDropped) {
  Notification timed_out;
  FakeService service([&timed_out](std::unique_ptr<ipc::UnixSocket>* c) {
    ConsumerRequest first;
    ASSERT_TRUE(ReadRequest(c->get(), &first));
    timed_out.Wait();
    ConsumerResponse late = Ok(first);
    late.set_session_id(1);
    Respond(c->get(), late);
    ConsumerRequest second;
    ASSERT_TRUE(ReadRequest(c->get(), &second));
    EXPECT_EQ(second.request_id(), first.request_id() + 1);
    Respond(c->get(), Ok(second));
  });
  std::unique_ptr<ConsumerClient> client = service.ConnectClient();
  ASSERT_TRUE(client);
  client->set_timeout_ms(10);
  protos::ServiceState state;
  EXPECT_EQ(client->QueryServiceState(&state).message(),
            "consumer socket: no answer to QueryServiceState within 10 ms");
  EXPECT_TRUE(client->broken().ok());
  timed_out.Notify();
  client->set_timeout_ms(kSafetyMs);
  const base::Status s = client->QueryServiceState(&state);
  EXPECT_TRUE(s.ok()) << s.message();
}

// A service that reads nothing: sends are bounded too, and nothing is lost
// or broken by a send that did not happen.
TEST(ConsumerClientTest, ServiceThatDoesNotReadBoundsTheSend) {
  FakeService service([](std::unique_ptr<ipc::UnixSocket>*) {});
  std::unique_ptr<ConsumerClient> client = service.ConnectClient();
  ASSERT_TRUE(client);
  client->set_timeout_ms(1);
  protos::ServiceState state;
  std::string last;
  int calls = 0;
  for (; calls < 10000; calls++) {
    last = client->QueryServiceState(&state).message();
    if (last != "consumer socket: no answer to QueryServiceState within 1 ms")
      break;
  }
  EXPECT_EQ(last,
            "consumer socket: timed out sending (the service is not reading)");
  EXPECT_GT(calls, 0);  // some requests went out before the queue was full
  EXPECT_TRUE(client->broken().ok());
}

// Each hostile answer breaks the connection with a message naming it; later
// calls fail at once with the same message.
struct HostileCase {
  const char* name;
  std::function<void(ipc::UnixSocket*, const ConsumerRequest&)> answer;
  std::string error;
};

void RunHostile(const HostileCase& c) {
  SCOPED_TRACE(c.name);
  FakeService service([&c](std::unique_ptr<ipc::UnixSocket>* conn) {
    ConsumerRequest req;
    ASSERT_TRUE(ReadRequest(conn->get(), &req));
    c.answer(conn->get(), req);
  });
  std::unique_ptr<ConsumerClient> client = service.ConnectClient();
  ASSERT_TRUE(client);
  base::TempDir files;
  base::ScopedFd out(
      open(files.File("t").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
  uint64_t session_id = 0;
  EXPECT_EQ(
      client->EnableTracing(ValidConfig(), out.get(), &session_id).message(),
      c.error);
  EXPECT_EQ(client->broken().message(), c.error);
  EXPECT_EQ(client->fd(), -1);
  protos::ServiceState state;
  EXPECT_EQ(client->QueryServiceState(&state).message(), c.error);
  bool got = true;
  EXPECT_EQ(client->WaitForEvent(0, &got).message(), c.error);
  EXPECT_FALSE(got);
}

TEST(ConsumerClientTest, HostileServices) {
  const std::string violation = "consumer socket: protocol violation: ";
  const HostileCase cases[] = {
      {"garbage",
       [](ipc::UnixSocket* conn, const ConsumerRequest&) {
         const std::string g = "hello, this is not a response";
         ASSERT_TRUE(
             conn->Send(reinterpret_cast<const uint8_t*>(g.data()), g.size())
                 .ok());
       },
       violation + "bad magic 0x6c6c6568 (not a ringtrace consumer protocol "
                   "message)"},
      {"truncated protobuf",
       [](ipc::UnixSocket* conn, const ConsumerRequest& req) {
         std::vector<uint8_t> d;
         ASSERT_TRUE(ipc::EncodeConsumerResponse(Ok(req), &d).ok());
         d.push_back(0x1a);  // field 3 (error), length missing
         d[8] = static_cast<uint8_t>(d.size() - 12);
         ASSERT_TRUE(conn->Send(d.data(), d.size()).ok());
       },
       violation + "ConsumerResponse: malformed protobuf payload"},
      {"wrong request id",
       [](ipc::UnixSocket* conn, const ConsumerRequest& req) {
         ConsumerResponse resp = Ok(req);
         resp.set_request_id(req.request_id() + 6);
         resp.set_session_id(1);
         Respond(conn, resp);
       },
       violation + "a response to request 7, which is not waiting for one"},
      {"no session id",
       [](ipc::UnixSocket* conn, const ConsumerRequest& req) {
         Respond(conn, Ok(req));
       },
       violation + "EnableTracing answered without a session_id"},
      {"escape sequence",
       [](ipc::UnixSocket* conn, const ConsumerRequest& req) {
         ConsumerResponse resp = Ok(req);
         resp.set_ok(false);
         resp.set_error("\x1b[2J");
         Respond(conn, resp);
       },
       violation + "error: control character U+001B at offset 0"},
      {"too long",
       [](ipc::UnixSocket* conn, const ConsumerRequest&) {
         const std::string big(ipc::kMaxConsumerMessageSize + 1, 'x');
         ASSERT_TRUE(
             ipc::test::SendRawWithFds(conn->fd(), big.data(), big.size(), {}));
       },
       violation + "datagram longer than 65536 bytes"},
  };
  for (const HostileCase& c : cases)
    RunHostile(c);
  // Hang-up: the script closes the connection after reading the request.
  FakeService service([](std::unique_ptr<ipc::UnixSocket>* conn) {
    ConsumerRequest req;
    ASSERT_TRUE(ReadRequest(conn->get(), &req));
    conn->reset();
  });
  std::unique_ptr<ConsumerClient> client = service.ConnectClient();
  ASSERT_TRUE(client);
  protos::ServiceState state;
  EXPECT_EQ(client->QueryServiceState(&state).message(),
            "consumer socket: the service closed the connection");
  EXPECT_EQ(client->QueryServiceState(&state).message(),
            "consumer socket: the service closed the connection");
}

// An fd attached to a response is refused and closed, never leaked.
TEST(ConsumerClientTest, FdFromTheServiceIsClosed) {
  int pipe_fds[2];
  ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK), 0);
  base::ScopedFd read_end(pipe_fds[0]);
  Notification sent;
  FakeService service(
      [&pipe_fds, &sent](std::unique_ptr<ipc::UnixSocket>* conn) {
        ConsumerRequest req;
        ASSERT_TRUE(ReadRequest(conn->get(), &req));
        std::vector<uint8_t> d;
        ASSERT_TRUE(ipc::EncodeConsumerResponse(Ok(req), &d).ok());
        ASSERT_TRUE((*conn)->Send(d.data(), d.size(), pipe_fds[1]).ok());
        close(pipe_fds[1]);  // the client's copy is the last write end
        sent.Notify();
      });
  std::unique_ptr<ConsumerClient> client = service.ConnectClient();
  ASSERT_TRUE(client);
  protos::ServiceState state;
  EXPECT_EQ(client->QueryServiceState(&state).message(),
            "consumer socket: protocol violation: a response with an fd");
  sent.Wait();
  char c;
  EXPECT_EQ(read(read_end.get(), &c, 1), 0);  // EOF: every write end closed
}

// A flood of events is a violation once kMaxQueuedEvents are waiting.
TEST(ConsumerClientTest, EventFloodIsBounded) {
  FakeService service([](std::unique_ptr<ipc::UnixSocket>* conn) {
    ConsumerRequest req;
    ASSERT_TRUE(ReadRequest(conn->get(), &req));
    for (size_t i = 0; i <= ConsumerClient::kMaxQueuedEvents; i++) {
      std::vector<uint8_t> d;
      ASSERT_TRUE(ipc::EncodeConsumerResponse(Ended(i + 1), &d).ok());
      if (!(*conn)->Send(d.data(), d.size()).ok())
        return;  // the client hung up, as it should
    }
  });
  std::unique_ptr<ConsumerClient> client = service.ConnectClient();
  ASSERT_TRUE(client);
  protos::ServiceState state;
  EXPECT_EQ(client->QueryServiceState(&state).message(),
            "consumer socket: protocol violation: more than 1024 events "
            "queued");
  size_t taken = 0;
  ConsumerResponse event;
  while (client->TakeEvent(&event))
    EXPECT_EQ(event.session_id(), ++taken);
  EXPECT_EQ(taken, ConsumerClient::kMaxQueuedEvents);
}

TEST(ConsumerClientTest, ConnectToNothingIsAnError) {
  base::TempDir dir;
  base::Status s;
  EXPECT_FALSE(ConsumerClient::Connect(dir.File("none.sock"), 100, &s));
  EXPECT_EQ(s.message(), "consumer socket: connect " + dir.File("none.sock") +
                             ": No such file or directory (is ringtraced "
                             "running?)");
}

}  // namespace
}  // namespace consumer
}  // namespace ringtrace
