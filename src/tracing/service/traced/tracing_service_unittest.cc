/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TracingService over real sockets, in process: raw protocol clients
// (test/test_client.h) that behave or misbehave, and the trace file parsed
// with libprotobuf.

#include "src/tracing/service/traced/tracing_service.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"
#include "src/base/test/other_user.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/ipc/test/raw_send.h"
#include "src/tracing/service/traced/test/test_client.h"

namespace ringtrace {
namespace traced {
namespace {

using base::TempDir;
using test::CollectTestPackets;
using test::kTestTimeoutMs;
using test::ReadTraceFile;
using test::Seqs;
using test::TaggedPackets;
using test::TestClient;
using test::WriteTestPackets;

using Pred = std::function<bool(const ServiceStats&)>;

// Open file descriptors of this process (the service runs in it too).
size_t CountOpenFds() {
  size_t n = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir)
    return 0;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.')
      ++n;
  }
  closedir(dir);
  return n - 1;  // the directory stream's own fd
}

class TracingServiceTest : public ::testing::Test {
 protected:
  TracingService::Options DefaultOptions() {
    TracingService::Options o;
    o.socket_path = dir_.File("traced.sock");
    o.out_path = dir_.File("trace.pftrace");
    o.out_config = DefaultOutConfig(2048);
    o.core.ring_limits.default_ring_bytes = 64 << 10;
    // No tick: data reaches the buffer through DrainRequests and the final
    // drains, which is what the tests exercise.
    o.core.drain_tick_ns = 3'600'000'000'000;
    return o;
  }

  void StartService(const TracingService::Options& options) {
    options_ = options;
    service_.reset(new TracingService(options));
    const base::Status status = service_->Start();
    ASSERT_TRUE(status.ok()) << status.message();
  }

  // Stops the service and parses its trace.
  void StopService() {
    const base::Status status = service_->Stop(&summary_);
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_TRUE(ReadTraceFile(options_.out_path, &trace_));
    tagged_ = CollectTestPackets(trace_);
  }

  bool WaitFor(const Pred& pred) {
    return service_->WaitForStats(pred, kTestTimeoutMs);
  }

  void ConnectAndHello(TestClient* client, const std::string& name) {
    ASSERT_TRUE(client->Connect(options_.socket_path));
    ASSERT_TRUE(client->Hello(name));
    ASSERT_EQ(client->reply().status, ipc::HelloStatus::kOk);
  }

  // The isolation contract for a misbehaving peer: a well-behaved producer
  // "good" writes packets 0..9, |misbehave| runs (it makes its own
  // connections misbehave), |counted| must become true, "good" writes
  // packets 10..19, a fresh producer is still admitted, and after Stop()
  // every "good" packet is in the file with this process's identity. No
  // descriptor leaks on either side: each producer accounts for four (its
  // socket and the service's, its ring memfd and the service's).
  void ExpectIsolated(const std::function<void()>& misbehave,
                      const Pred& counted) {
    const size_t fds_before = CountOpenFds();
    TestClient good;
    ConnectAndHello(&good, "good");
    std::unique_ptr<shm_ring::TraceWriterV2> writer = good.NewWriter();
    WriteTestPackets(writer.get(), "good", 0, 10);
    writer->Flush();
    ASSERT_TRUE(good.SendDrainRequest());

    misbehave();
    ASSERT_TRUE(WaitFor(counted));

    WriteTestPackets(writer.get(), "good", 10, 10);
    writer->Flush();
    ASSERT_TRUE(good.SendDrainRequest());
    TestClient fresh;
    ConnectAndHello(&fresh, "fresh");
    ASSERT_TRUE(WaitFor([](const ServiceStats& s) {
      return s.producers.producers_connected == 2;
    }));
    EXPECT_EQ(CountOpenFds(), fds_before + 2 * 4);
    writer.reset();
    StopService();
    ASSERT_EQ(tagged_.count("good"), 1u);
    const TaggedPackets& g = tagged_.at("good");
    EXPECT_EQ(g.seqs, Seqs(0, 20));
    EXPECT_EQ(g.trusted_pids, (std::set<int32_t>{getpid()}));
    EXPECT_EQ(g.trusted_uids,
              (std::set<int32_t>{static_cast<int32_t>(getuid())}));
    EXPECT_EQ(summary_.export_summary.export_stats.invalid_packets, 0u);
  }

  TempDir dir_;  // outlives the service (its socket file is in there)
  TracingService::Options options_;
  std::unique_ptr<TracingService> service_;
  ServiceSummary summary_;
  perfetto::protos::Trace trace_;
  std::map<std::string, TaggedPackets> tagged_;
};

TEST_F(TracingServiceTest, ProducersConnectWriteAndLeave) {
  StartService(DefaultOptions());
  TestClient alpha;
  TestClient beta;
  ConnectAndHello(&alpha, "alpha");
  ConnectAndHello(&beta, "beta");
  EXPECT_NE(alpha.reply().producer_id, beta.reply().producer_id);
  {
    std::unique_ptr<shm_ring::TraceWriterV2> a1 = alpha.NewWriter();
    std::unique_ptr<shm_ring::TraceWriterV2> a2 = alpha.NewWriter();
    WriteTestPackets(a1.get(), "alpha-1", 0, 200);
    WriteTestPackets(a2.get(), "alpha-2", 0, 30);
    a1->Flush();
    a2->Flush();
  }
  // No DrainRequest, no tick: only the final drain on disconnect reads
  // alpha's ring.
  alpha.Disconnect();
  ASSERT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.peer_disconnects == 1 &&
           s.producers.producers_connected == 1;
  }));

  std::unique_ptr<shm_ring::TraceWriterV2> b1 = beta.NewWriter();
  WriteTestPackets(b1.get(), "beta-1", 0, 100);
  b1->Flush();
  ASSERT_TRUE(beta.SendDrainRequest());
  ASSERT_TRUE(WaitFor(
      [](const ServiceStats& s) { return s.producers.drain_requests == 1; }));
  WriteTestPackets(b1.get(), "beta-1", 100, 100);
  b1->Flush();
  b1.reset();
  // beta is still connected at Stop(): Finish() drains it.
  StopService();

  ASSERT_EQ(tagged_.size(), 3u);
  EXPECT_EQ(tagged_.at("alpha-1").seqs, Seqs(0, 200));
  EXPECT_EQ(tagged_.at("alpha-2").seqs, Seqs(0, 30));
  EXPECT_EQ(tagged_.at("beta-1").seqs, Seqs(0, 200));
  for (const auto& kv : tagged_) {
    EXPECT_EQ(kv.second.trusted_pids, (std::set<int32_t>{getpid()}))
        << kv.first;
    EXPECT_EQ(kv.second.trusted_uids,
              (std::set<int32_t>{static_cast<int32_t>(getuid())}))
        << kv.first;
  }
  const ServiceStats& s = summary_.stats;
  EXPECT_EQ(s.producers.producers_seen, 2u);
  EXPECT_EQ(s.connections.connections_accepted, 2u);
  EXPECT_EQ(s.connections.protocol_violations(), 0u);
  EXPECT_EQ(summary_.export_summary.export_stats.packets_exported, 430u);
  EXPECT_EQ(summary_.export_summary.export_stats.packets_with_loss, 0u);

  ASSERT_GE(trace_.packet_size(), 2);
  EXPECT_TRUE(trace_.packet(0).has_trace_config());
  const auto& stats_packet = trace_.packet(trace_.packet_size() - 2);
  ASSERT_TRUE(stats_packet.has_trace_stats());
  EXPECT_EQ(stats_packet.trace_stats().producers_seen(), 2u);
  EXPECT_EQ(stats_packet.trace_stats().producers_connected(), 1u);
  // The socket file is gone once the service stopped.
  EXPECT_NE(access(options_.socket_path.c_str(), F_OK), 0);
}

TEST_F(TracingServiceTest, HandsOutASealedMemfdWithTheClampedGeometry) {
  StartService(DefaultOptions());
  TestClient client;
  ASSERT_TRUE(client.Connect(options_.socket_path));
  ipc::HelloMsg hello;
  hello.name = "sizes";
  hello.requested_ring_bytes = 5;     // below the minimum
  hello.requested_chunk_size = 1000;  // not a power of two
  ASSERT_TRUE(client.Hello(hello));
  ASSERT_EQ(client.reply().status, ipc::HelloStatus::kOk);
  const RingLimits& limits = options_.core.ring_limits;
  EXPECT_EQ(client.reply().chunk_size, 1024u);
  EXPECT_EQ(uint64_t{client.reply().chunk_size} * client.reply().num_chunks,
            limits.min_ring_bytes);

  const int fd = client.region()->fd();
  const int seals = fcntl(fd, F_GET_SEALS);
  ASSERT_GE(seals, 0);
  EXPECT_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  const int rc = ftruncate(fd, 0);
  const int err = errno;
  EXPECT_NE(rc, 0);
  EXPECT_EQ(err, EPERM);
  // The fd must not leak into children of the producer either.
  EXPECT_NE(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
  StopService();
}

TEST_F(TracingServiceTest, GarbageDatagram) {
  StartService(DefaultOptions());
  ExpectIsolated(
      [&] {
        TestClient bad;
        ASSERT_TRUE(bad.Connect(options_.socket_path));
        const char garbage[] = "definitely not a Hello message";
        ASSERT_TRUE(bad.SendRaw(garbage, sizeof(garbage)));
        EXPECT_TRUE(bad.WaitForClose());
      },
      [](const ServiceStats& s) {
        return s.connections.violations_malformed == 1;
      });
  EXPECT_EQ(summary_.stats.connections.protocol_violations(), 1u);
}

TEST_F(TracingServiceTest, TruncatedHello) {
  StartService(DefaultOptions());
  ExpectIsolated(
      [&] {
        TestClient bad;
        ASSERT_TRUE(bad.Connect(options_.socket_path));
        ipc::HelloMsg hello;
        hello.name = "truncated";
        uint8_t buf[ipc::kMaxMessageSize];
        const size_t size = ipc::EncodeHello(hello, buf, sizeof(buf));
        ASSERT_GT(size, 3u);
        ASSERT_TRUE(bad.SendRaw(buf, size - 3));
        EXPECT_TRUE(bad.WaitForClose());
      },
      [](const ServiceStats& s) {
        return s.connections.violations_malformed == 1;
      });
  EXPECT_EQ(summary_.stats.producers.producers_seen, 2u);  // good, fresh
}

TEST_F(TracingServiceTest, OversizedDatagram) {
  StartService(DefaultOptions());
  ExpectIsolated(
      [&] {
        TestClient bad;
        ASSERT_TRUE(bad.Connect(options_.socket_path));
        // A valid Hello's header, then one byte more than any producer
        // message (the largest DataSourceCategories) may have.
        ipc::HelloMsg hello;
        hello.name = "oversized";
        std::vector<uint8_t> buf(ipc::kMaxProducerDatagramSize + 1);
        ASSERT_GT(ipc::EncodeHello(hello, buf.data(), buf.size()), 0u);
        ASSERT_TRUE(bad.SendRaw(buf.data(), buf.size()));
        EXPECT_TRUE(bad.WaitForClose());
      },
      [](const ServiceStats& s) {
        return s.connections.violations_oversized_datagram == 1;
      });
}

TEST_F(TracingServiceTest, SecondHelloKeepsWhatTheProducerWroteBefore) {
  StartService(DefaultOptions());
  ExpectIsolated(
      [&] {
        TestClient bad;
        ConnectAndHello(&bad, "bad");
        std::unique_ptr<shm_ring::TraceWriterV2> writer = bad.NewWriter();
        WriteTestPackets(writer.get(), "bad", 0, 25);
        writer->Flush();
        ipc::HelloMsg hello;
        hello.name = "bad again";
        uint8_t buf[ipc::kMaxMessageSize];
        const size_t size = ipc::EncodeHello(hello, buf, sizeof(buf));
        ASSERT_TRUE(bad.SendRaw(buf, size));
        EXPECT_TRUE(bad.WaitForClose());
      },
      [](const ServiceStats& s) {
        return s.connections.violations_second_hello == 1 &&
               s.producers.producers_connected == 1;
      });
  // Drained once more before the disconnect.
  ASSERT_EQ(tagged_.count("bad"), 1u);
  EXPECT_EQ(tagged_.at("bad").seqs, Seqs(0, 25));
}

TEST_F(TracingServiceTest, FdAttachedToAProducerMessage) {
  StartService(DefaultOptions());
  ExpectIsolated(
      [&] {
        TestClient bad;
        ConnectAndHello(&bad, "bad");
        const int fd = eventfd(0, EFD_CLOEXEC);
        ASSERT_GE(fd, 0);
        uint8_t buf[ipc::kMaxMessageSize];
        const size_t size = ipc::EncodeDrainRequest(buf, sizeof(buf));
        ASSERT_TRUE(bad.SendRaw(buf, size, fd));
        close(fd);
        EXPECT_TRUE(bad.WaitForClose());
      },
      [](const ServiceStats& s) {
        return s.connections.violations_fd_attached == 1 &&
               s.producers.producers_connected == 1;
      });
}

// Two fds on one datagram: refused by the transport (both closed at once)
// and counted apart from the single-fd case above.
TEST_F(TracingServiceTest, TwoFdsAttachedToAProducerMessage) {
  StartService(DefaultOptions());
  ExpectIsolated(
      [&] {
        TestClient bad;
        ConnectAndHello(&bad, "bad");
        const int fds[2] = {eventfd(0, EFD_CLOEXEC), eventfd(0, EFD_CLOEXEC)};
        ASSERT_GE(fds[0], 0);
        ASSERT_GE(fds[1], 0);
        uint8_t buf[ipc::kMaxMessageSize];
        const size_t size = ipc::EncodeDrainRequest(buf, sizeof(buf));
        ASSERT_TRUE(ipc::test::SendRawWithFds(bad.socket()->fd(), buf, size,
                                              {fds[0], fds[1]}));
        close(fds[0]);
        close(fds[1]);
        EXPECT_TRUE(bad.WaitForClose());
      },
      [](const ServiceStats& s) {
        return s.connections.violations_too_many_fds == 1 &&
               s.connections.violations_fd_attached == 0 &&
               s.producers.producers_connected == 1;
      });
}

TEST_F(TracingServiceTest, DrainRequestBeforeHello) {
  StartService(DefaultOptions());
  ExpectIsolated(
      [&] {
        TestClient bad;
        ASSERT_TRUE(bad.Connect(options_.socket_path));
        ASSERT_TRUE(bad.SendDrainRequest());
        EXPECT_TRUE(bad.WaitForClose());
      },
      [](const ServiceStats& s) {
        return s.connections.violations_early_drain_request == 1;
      });
}

TEST_F(TracingServiceTest, HelloReplyFromAProducer) {
  StartService(DefaultOptions());
  ExpectIsolated(
      [&] {
        TestClient bad;
        ConnectAndHello(&bad, "bad");
        ipc::HelloReplyMsg reply;
        uint8_t buf[ipc::kMaxMessageSize];
        const size_t size = ipc::EncodeHelloReply(reply, buf, sizeof(buf));
        ASSERT_TRUE(bad.SendRaw(buf, size));
        EXPECT_TRUE(bad.WaitForClose());
      },
      [](const ServiceStats& s) {
        return s.connections.violations_unexpected_type == 1 &&
               s.producers.producers_connected == 1;
      });
}

TEST_F(TracingServiceTest, NoHelloBeforeTheDeadline) {
  TracingService::Options options = DefaultOptions();
  // Long enough that a well-behaved client (Hello right after connect) never
  // misses it, short enough for a fast test.
  options.hello_timeout_ms = 300;
  StartService(options);
  ExpectIsolated(
      [&] {
        TestClient silent;
        ASSERT_TRUE(silent.Connect(options_.socket_path));
        EXPECT_TRUE(silent.WaitForClose());
      },
      [](const ServiceStats& s) { return s.connections.hello_timeouts == 1; });
  EXPECT_EQ(summary_.stats.connections.protocol_violations(), 0u);
}

TEST_F(TracingServiceTest, TooManyProducers) {
  TracingService::Options options = DefaultOptions();
  options.core.max_producers = 2;
  StartService(options);
  ExpectIsolated(
      [&] {
        TestClient filler;
        ConnectAndHello(&filler, "filler");
        TestClient extra;
        ASSERT_TRUE(extra.Connect(options_.socket_path));
        ASSERT_TRUE(extra.Hello("extra"));
        EXPECT_EQ(extra.reply().status, ipc::HelloStatus::kTooManyProducers);
        EXPECT_EQ(extra.region(), nullptr);
        EXPECT_TRUE(extra.WaitForClose());
        filler.Disconnect();  // makes room for ExpectIsolated's fresh one
      },
      [](const ServiceStats& s) {
        return s.producers.hellos_rejected_too_many == 1 &&
               s.connections.peer_disconnects == 1;
      });
}

TEST_F(TracingServiceTest, VersionMismatch) {
  StartService(DefaultOptions());
  ExpectIsolated(
      [&] {
        TestClient old;
        ASSERT_TRUE(old.Connect(options_.socket_path));
        ipc::HelloMsg hello;
        hello.name = "from the future";
        hello.protocol_version = ipc::kProtocolVersion + 1;
        ASSERT_TRUE(old.Hello(hello));
        EXPECT_EQ(old.reply().status, ipc::HelloStatus::kVersionMismatch);
        EXPECT_TRUE(old.WaitForClose());
      },
      [](const ServiceStats& s) {
        return s.producers.hellos_rejected_version == 1;
      });
}

TEST_F(TracingServiceTest, DrainRequestFloodIsServedInTurns) {
  TracingService::Options options = DefaultOptions();
  options.messages_per_round = 4;
  StartService(options);
  constexpr uint64_t kRequests = 1000;
  ExpectIsolated(
      [&] {
        TestClient noisy;
        ConnectAndHello(&noisy, "noisy");
        for (uint64_t i = 0; i < kRequests; ++i)
          ASSERT_TRUE(noisy.SendDrainRequest());
      },
      [&](const ServiceStats& s) {
        // good's first request and the flood.
        return s.producers.drain_requests == kRequests + 1;
      });
  EXPECT_EQ(summary_.stats.connections.protocol_violations(), 0u);
}

// A producer's loss report (here its final one, sent just before the
// service stops: what was queued is read before the producers are removed)
// reaches the trace's TraceStats, with the producer's identity.
TEST_F(TracingServiceTest, LossReportSentJustBeforeStopReachesTraceStats) {
  TracingService::Options options = DefaultOptions();
  options.messages_per_round = 1;
  StartService(options);
  TestClient client;
  ConnectAndHello(&client, "reporter");
  ASSERT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.producers.producers_connected == 1;
  }));
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(client.SendDrainRequest());
  ipc::DrainRequestMsg report;
  report.flags = ipc::kLossReportFinal;
  report.num_entries = 1;
  report.entries[0].writer_id = 3;
  // The --out session's buffer, which the HelloReply named.
  report.entries[0].target_buffer = client.reply().target_buffer;
  report.entries[0].packets_dropped_before_end = 7;
  report.entries[0].packets_dropped_after_end = 2;
  report.entries[0].bytes_dropped = 900;
  report.entries[0].stall_timeouts = 1;
  uint8_t buf[ipc::kMaxMessageSize];
  const size_t size = ipc::EncodeLossReport(report, buf, sizeof(buf));
  ASSERT_GT(size, 0u);
  ASSERT_TRUE(client.SendRaw(buf, size));
  StopService();

  const perfetto::protos::TraceStats* stats = nullptr;
  for (const perfetto::protos::TracePacket& p : trace_.packet()) {
    if (p.has_trace_stats())
      stats = &p.trace_stats();
  }
  ASSERT_NE(stats, nullptr);
  ASSERT_EQ(stats->ringtrace_producer_loss_size(), 1);
  const auto& producer = stats->ringtrace_producer_loss(0);
  EXPECT_EQ(producer.producer_name(), "reporter");
  EXPECT_EQ(producer.pid(), getpid());
  EXPECT_TRUE(producer.final_report());
  ASSERT_EQ(producer.writers_size(), 1);
  EXPECT_EQ(producer.writers(0).writer_id(), 3u);
  EXPECT_EQ(producer.writers(0).packets_dropped_before_end(), 7u);
  EXPECT_EQ(producer.writers(0).packets_dropped_after_end(), 2u);
  EXPECT_EQ(producer.writers(0).bytes_dropped(), 900u);
  EXPECT_EQ(producer.writers(0).stall_timeouts(), 1u);
  EXPECT_EQ(stats->ringtrace_packets_dropped_by_producers(), 9u);
  EXPECT_EQ(summary_.stats.connections.protocol_violations(), 0u);
}

TEST_F(TracingServiceTest, ConnectionsOwingTheirHelloAreLimited) {
  TracingService::Options options = DefaultOptions();
  options.max_pending_connections = 2;
  StartService(options);
  TestClient first, second, third;
  ASSERT_TRUE(first.Connect(options_.socket_path));
  ASSERT_TRUE(second.Connect(options_.socket_path));
  ASSERT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.connections_accepted == 2;
  }));
  ASSERT_TRUE(third.Connect(options_.socket_path));
  EXPECT_TRUE(third.WaitForClose());
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.connections_refused == 1;
  }));
  // The first two are still served.
  ASSERT_TRUE(first.Hello("first"));
  EXPECT_EQ(first.reply().status, ipc::HelloStatus::kOk);
  ASSERT_TRUE(second.Hello("second"));
  EXPECT_EQ(second.reply().status, ipc::HelloStatus::kOk);
  StopService();
}

// Connects to the Unix socket |path| and waits (10 s at most) for the
// peer to hang up. 0 if it did; for RunAsNobody() bodies (system calls
// only).
int WaitForHangUp(const char* path, size_t path_length) {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (fd < 0 || path_length >= sizeof(addr.sun_path))
    return 1;
  memcpy(addr.sun_path, path, path_length);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    return 2;
  timeval timeout = {10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  char byte = 0;
  const ssize_t n = recv(fd, &byte, 1, 0);
  close(fd);
  return n == 0 ? 0 : 3;
}

// own_uid_only (the in-process backend's service): a peer of another uid
// is closed at once on either socket, however open the socket files are,
// and counted; the service's own uid is served. (Without the option the
// producer connection would wait for its Hello, longer than the peer
// waits.)
TEST_F(TracingServiceTest, OwnUidOnlyRefusesOtherUsers) {
  if (!base::CanActAsOtherUser())
    GTEST_SKIP() << base::kNeedsRootMessage;
  ASSERT_EQ(chmod(dir_.path().c_str(), 0711), 0);
  TracingService::Options options = DefaultOptions();
  options.consumer_socket_path = dir_.File("consumer.sock");
  options.socket_options.mode = 0666;
  options.consumer_socket_options.mode = 0666;
  options.hello_timeout_ms = 60000;
  options.own_uid_only = true;
  StartService(options);
  const std::string producer = options.socket_path;
  const std::string consumer = options.consumer_socket_path;
  EXPECT_EQ(base::RunAsNobody([&] {
              return WaitForHangUp(producer.data(), producer.size());
            }),
            0);
  EXPECT_EQ(base::RunAsNobody([&] {
              return WaitForHangUp(consumer.data(), consumer.size());
            }),
            0);
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.connections_refused == 1 &&
           s.connections.consumers_refused == 1;
  }));
  TestClient own;
  ConnectAndHello(&own, "own");
  StopService();
}

// The per-uid bound counts connections still owing their Hello: once one
// of them said Hello, the uid may open another.
TEST_F(TracingServiceTest, PendingConnectionsAreLimitedPerUid) {
  TracingService::Options options = DefaultOptions();
  options.max_pending_per_uid = 2;
  StartService(options);
  TestClient first, second, third, fourth;
  ASSERT_TRUE(first.Connect(options_.socket_path));
  ASSERT_TRUE(second.Connect(options_.socket_path));
  ASSERT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.connections_accepted == 2;
  }));
  ASSERT_TRUE(third.Connect(options_.socket_path));
  EXPECT_TRUE(third.WaitForClose());
  EXPECT_TRUE(WaitFor([](const ServiceStats& s) {
    return s.connections.connections_refused == 1 &&
           s.connections.connections_refused_per_uid == 1;
  }));
  ASSERT_TRUE(first.Hello("first"));
  EXPECT_EQ(first.reply().status, ipc::HelloStatus::kOk);
  ASSERT_TRUE(fourth.Connect(options_.socket_path));
  ASSERT_TRUE(fourth.Hello("fourth"));
  EXPECT_EQ(fourth.reply().status, ipc::HelloStatus::kOk);
  StopService();
  EXPECT_EQ(summary_.stats.connections.connections_refused_per_uid, 1u);
}

TEST_F(TracingServiceTest, StartFailsCleanly) {
  TracingService::Options options = DefaultOptions();
  options.out_path = dir_.path() + "/missing/dir/trace.pftrace";
  TracingService no_file(options);
  EXPECT_FALSE(no_file.Start().ok());
  EXPECT_FALSE(no_file.Stop(nullptr).ok());

  StartService(DefaultOptions());
  // A live listener is never replaced.
  TracingService::Options second = DefaultOptions();
  second.out_path = dir_.File("second.pftrace");
  TracingService twin(second);
  EXPECT_FALSE(twin.Start().ok());
  StopService();
  EXPECT_FALSE(service_->Stop(nullptr).ok());  // already stopped
}

// ---- Snapshots -------------------------------------------------------------

TEST_F(TracingServiceTest, SnapshotWhileAProducerIsConnected) {
  StartService(DefaultOptions());
  TestClient client;
  ConnectAndHello(&client, "client");
  std::unique_ptr<shm_ring::TraceWriterV2> w = client.NewWriter();
  WriteTestPackets(w.get(), "w", 0, 20);
  w->Flush();  // no DrainRequest: the snapshot drains

  const std::string path = dir_.File("snapshot-1");
  ServiceSummary s;
  base::Status status = service_->Snapshot(path, &s);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(s.out_path, path);
  EXPECT_EQ(s.export_summary.export_stats.packets_exported, 20u);
  EXPECT_EQ(s.stats.snapshots_written, 1u);
  EXPECT_EQ(s.stats.snapshot_errors, 0u);
  EXPECT_EQ(service_->stats().snapshots_written, 1u);
  perfetto::protos::Trace snapshot;
  ASSERT_TRUE(ReadTraceFile(path, &snapshot));
  auto tagged = CollectTestPackets(snapshot);
  ASSERT_EQ(tagged.count("w"), 1u);
  EXPECT_EQ(tagged.at("w").seqs, Seqs(0, 20));
  EXPECT_EQ(tagged.at("w").trusted_pids, (std::set<int32_t>{getpid()}));
  ASSERT_GE(snapshot.packet_size(), 4);
  EXPECT_TRUE(snapshot.packet(0).has_trace_config());
  EXPECT_TRUE(snapshot.packet(snapshot.packet_size() - 2).has_trace_stats());

  // The producer is still connected and goes on; a second snapshot over the
  // same path replaces the first.
  EXPECT_EQ(service_->stats().producers.producers_connected, 1u);
  WriteTestPackets(w.get(), "w", 20, 10);
  w->Flush();
  ASSERT_TRUE(client.SendDrainRequest());
  status = service_->Snapshot(path, nullptr);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(ReadTraceFile(path, &snapshot));
  EXPECT_EQ(CollectTestPackets(snapshot).at("w").seqs, Seqs(0, 30));

  WriteTestPackets(w.get(), "w", 30, 10);
  w.reset();
  StopService();
  EXPECT_EQ(tagged_.at("w").seqs, Seqs(0, 40));
  EXPECT_EQ(summary_.stats.snapshots_written, 2u);
  EXPECT_EQ(summary_.stats.producers.producers_seen, 1u);
  EXPECT_NE(FormatSummary(summary_).find("2 snapshots written, 0 failed"),
            std::string::npos)
      << FormatSummary(summary_);
}

// A writer thread keeps writing while the owner takes snapshots: each one
// holds a prefix of the sequence, never less than the one before. (Not
// necessarily the batches flushed so far: a flushed chunk the writer took
// back to go on filling is Acquired again, and left to it, with its
// published prefix, during the head grace.)
TEST_F(TracingServiceTest, SnapshotsWhileAWriterThreadWrites) {
  TracingService::Options options = DefaultOptions();
  options.core.ring_limits.default_ring_bytes = 1 << 20;  // no drop
  StartService(options);
  TestClient client;
  ConnectAndHello(&client, "client");
  std::unique_ptr<shm_ring::TraceWriterV2> w = client.NewWriter();
  constexpr uint32_t kBatches = 40;
  constexpr uint32_t kPerBatch = 50;
  std::atomic<uint32_t> batches_flushed{0};
  std::thread writer([&] {
    for (uint32_t i = 0; i < kBatches; ++i) {
      WriteTestPackets(w.get(), "w", i * kPerBatch, kPerBatch);
      w->Flush();
      (void)client.SendDrainRequest();
      // release; pairs with the owner's acquire load below.
      batches_flushed.store(i + 1, std::memory_order_release);
    }
  });
  // acquire; pairs with the writer's release store: the snapshots start
  // while the writer is at work (or done).
  while (batches_flushed.load(std::memory_order_acquire) == 0)
    std::this_thread::yield();
  size_t previous = 0;
  // No ASSERT before the join: the writer thread must be joined.
  for (int i = 0; i < 3; ++i) {
    const std::string path = dir_.File("snapshot-" + std::to_string(i));
    const base::Status status = service_->Snapshot(path, nullptr);
    perfetto::protos::Trace snapshot;
    if (!status.ok() || !ReadTraceFile(path, &snapshot)) {
      ADD_FAILURE() << "snapshot " << i << ": " << status.message();
      continue;
    }
    const auto tagged = CollectTestPackets(snapshot);
    const std::vector<uint32_t> seqs =
        tagged.count("w") ? tagged.at("w").seqs : std::vector<uint32_t>();
    EXPECT_EQ(seqs, Seqs(0, static_cast<uint32_t>(seqs.size())));
    EXPECT_GE(seqs.size(), previous);
    previous = seqs.size();
  }
  writer.join();
  // (Relocations may happen: a normal pass that loses a CAS race with the
  // writer resolves the position, snapshot or not; they lose nothing.)
  EXPECT_EQ(w->stats().packets_dropped, 0u);
  w.reset();
  StopService();
  EXPECT_EQ(tagged_.at("w").seqs, Seqs(0, kBatches * kPerBatch));
  EXPECT_EQ(summary_.stats.snapshots_written, 3u);
}

TEST_F(TracingServiceTest, SnapshotErrorsLeaveTheServiceRunning) {
  StartService(DefaultOptions());
  ServiceSummary s;
  // Unwritable path: counted, reported, nothing else happens.
  base::Status status =
      service_->Snapshot(dir_.path() + "/no/such/dir/snapshot", &s);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot write " + dir_.path() +
                                  "/no/such/dir/snapshot"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(service_->stats().snapshot_errors, 1u);
  // The trace file itself is refused (it would be truncated).
  status = service_->Snapshot(options_.out_path, &s);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("trace file"), std::string::npos)
      << status.message();
  EXPECT_EQ(service_->stats().snapshot_errors, 2u);
  // Refused before the service thread sees it: not counted.
  EXPECT_FALSE(service_->Snapshot("", &s).ok());
  EXPECT_EQ(service_->stats().snapshot_errors, 2u);
  EXPECT_EQ(service_->stats().snapshots_written, 0u);

  TestClient client;
  ConnectAndHello(&client, "client");
  std::unique_ptr<shm_ring::TraceWriterV2> w = client.NewWriter();
  WriteTestPackets(w.get(), "w", 0, 5);
  w.reset();
  StopService();
  EXPECT_EQ(tagged_.at("w").seqs, Seqs(0, 5));
  EXPECT_EQ(summary_.stats.snapshot_errors, 2u);
  // Not running any more.
  EXPECT_FALSE(service_->Snapshot(dir_.File("late"), &s).ok());
}

// The owner's wait is bounded: a service thread stuck in a snapshot (held
// here by the test hook until the owner gave up) gives a clear error, the
// next request is refused until that one finished, and then all is normal.
TEST_F(TracingServiceTest, SnapshotWaitIsBounded) {
  // Holds the service thread in the hook until opened. Shared with the hook,
  // and opened on every way out of the test, so that the service (a
  // fixture member, destroyed after the test body) can always stop.
  struct Gate {
    std::mutex mutex;
    std::condition_variable cv;
    bool open = false;  // guarded by |mutex|
    void Open() {
      std::lock_guard<std::mutex> lock(mutex);
      open = true;
      cv.notify_all();
    }
  };
  const auto gate = std::make_shared<Gate>();
  struct OpenOnExit {
    Gate* gate;
    ~OpenOnExit() { gate->Open(); }
  } open_on_exit{gate.get()};

  TracingService::Options options = DefaultOptions();
  options.snapshot_timeout_ms = 1;
  options_ = options;
  service_.reset(new TracingService(options));
  service_->set_snapshot_hook_for_testing([gate] {
    std::unique_lock<std::mutex> lock(gate->mutex);
    gate->cv.wait(lock, [&] { return gate->open; });
  });
  base::Status status = service_->Start();
  ASSERT_TRUE(status.ok()) << status.message();

  const std::string first = dir_.File("first");
  status = service_->Snapshot(first, nullptr);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("did not finish it within 1 ms"),
            std::string::npos)
      << status.message();
  status = service_->Snapshot(dir_.File("second"), nullptr);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("still being written"), std::string::npos)
      << status.message();
  gate->Open();
  // The first request completes after all.
  ASSERT_TRUE(
      WaitFor([](const ServiceStats& s) { return s.snapshots_written == 1; }));
  perfetto::protos::Trace snapshot;
  EXPECT_TRUE(ReadTraceFile(first, &snapshot));
  EXPECT_GE(snapshot.packet_size(), 4);
  // And the next one is served (the hook no longer holds it; the timeout
  // is still 1 ms, so wait for the count rather than the call).
  (void)service_->Snapshot(dir_.File("third"), nullptr);
  ASSERT_TRUE(
      WaitFor([](const ServiceStats& s) { return s.snapshots_written == 2; }));
  StopService();
  EXPECT_EQ(summary_.stats.snapshots_written, 2u);
  EXPECT_EQ(summary_.stats.snapshot_errors, 0u);
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
