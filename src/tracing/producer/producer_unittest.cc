/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Producer::Connect() end to end against FakeService (a listening socket and
// a thread that speaks the protocol with the raw encoders). The broken
// replies are covered one by one in hello_client_unittest.cc.

#include "ringtrace/producer.h"

#include <gtest/gtest.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "src/tracing/core/encoding/test/proto_test_encoder.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"
#include "src/tracing/producer/test/fake_service.h"

namespace ringtrace {
namespace producer {
namespace {

using encoding::ProtoTestEncoder;
using shm_ring::ReadChunk;
using shm_ring::ResolveResult;
using shm_ring::TestPacketReassembler;
using shm_ring::TestRingReader;
using shm_ring::TraceWriterV2;
using shm_ring::WriterID;

namespace rt = perfetto::protos::rtzero;

ProducerOptions OptionsFor(const std::string& socket_path) {
  ProducerOptions options;
  options.socket_path = socket_path;
  options.name = "producer_test";
  // The test services do not close their end at the producer's EOF as
  // ringtraced does, so a teardown would wait all of DisconnectInOrder's
  // default second for them.
  options.disconnect_timeout_ms = 100;
  options.requested_ring_bytes = 65536;
  options.requested_chunk_size = 4096;
  return options;
}

std::string Body(uint32_t thread, uint32_t i) {
  return "thread " + std::to_string(thread) + " packet " + std::to_string(i);
}

TEST(ProducerConnectTest, NoServiceFailsClearly) {
  TempDir dir;
  const int fds_before = CountOpenFds();
  base::Status status;
  auto producer =
      Producer::Connect(OptionsFor(dir.File("nobody.sock")), &status);
  EXPECT_FALSE(producer);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot connect to the ringtrace service"),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("nobody.sock"), std::string::npos);
  EXPECT_EQ(CountOpenFds(), fds_before);
}

TEST(ProducerConnectTest, ServiceThatNeverAnswersTimesOut) {
  TempDir dir;
  FakeService::Config config;
  config.reply = false;
  auto service = FakeService::Start(dir.File("mute.sock"), config);
  ASSERT_TRUE(service);
  ProducerOptions options = OptionsFor(dir.File("mute.sock"));
  options.connect_timeout_ms = 30;
  base::Status status;
  EXPECT_FALSE(Producer::Connect(options, &status));
  EXPECT_NE(status.message().find("did not answer the Hello within 30 ms"),
            std::string::npos)
      << status.message();
}

TEST(ProducerConnectTest, RefusalFailsClearlyAndLeaksNoFd) {
  TempDir dir;
  const int fds_before = CountOpenFds();
  {
    FakeService::Config config;
    config.status = ipc::HelloStatus::kTooManyProducers;
    auto service = FakeService::Start(dir.File("full.sock"), config);
    ASSERT_TRUE(service);
    base::Status status;
    EXPECT_FALSE(Producer::Connect(OptionsFor(dir.File("full.sock")), &status));
    EXPECT_NE(status.message().find("refused the producer"), std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find("full.sock"), std::string::npos);
  }
  EXPECT_EQ(CountOpenFds(), fds_before);
}

// The whole path: Hello, the ring's fd, writers on app threads, DrainRequests
// on the socket, and the service reading every packet from its own mapping.
// An empty socket path is the default one, the same as ringtraced's:
// $RINGTRACE_PRODUCER_SOCK here (default_socket_paths.h).
TEST(ProducerConnectTest, EmptySocketPathIsTheDefault) {
  TempDir dir;
  const std::string path = dir.File("default.sock");
  ASSERT_EQ(setenv("RINGTRACE_PRODUCER_SOCK", path.c_str(), 1), 0);
  base::Status status;
  auto producer = Producer::Connect(OptionsFor(""), &status);
  EXPECT_FALSE(producer);
  EXPECT_NE(status.message().find(path), std::string::npos) << status.message();
  FakeService::Config config;
  auto service = FakeService::Start(path, config);
  ASSERT_TRUE(service);
  producer = Producer::Connect(OptionsFor(""), &status);
  EXPECT_TRUE(producer) << status.message();
  ASSERT_EQ(unsetenv("RINGTRACE_PRODUCER_SOCK"), 0);
}

TEST(ProducerConnectTest, RoundTripThroughTheServicesRing) {
  constexpr uint32_t kThreads = 3;
  constexpr uint32_t kPackets = 200;
  FakeConnection conn;
  const int fds_before = CountOpenFds();
  FakeService::Config config;
  config.geometry = shm_ring::RingGeometry(1024, 64);
  config.producer_id = 9;
  config.target_buffer = 5;
  const base::Status status = conn.Connect(config, OptionsFor(""));
  ASSERT_TRUE(status.ok()) << status.message();
  FakeService* service = conn.service.get();
  std::unique_ptr<Producer>& producer = conn.producer;
  ASSERT_TRUE(service->WaitHelloDone());
  EXPECT_EQ(service->hello().name, "producer_test");
  EXPECT_EQ(service->hello().requested_ring_bytes, 65536u);
  EXPECT_EQ(service->hello().requested_chunk_size, 4096u);
  EXPECT_EQ(producer->producer_id(), 9u);
  EXPECT_EQ(producer->target_buffer(), 5u);
  EXPECT_EQ(producer->geometry().chunk_size, 1024u);
  EXPECT_EQ(producer->geometry().num_chunks, 64u);
  EXPECT_TRUE(producer->connected());

  std::vector<WriterID> ids(kThreads);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<TraceWriterV2> w = producer->NewTraceWriter();
      ids[t] = w->writer_id();
      for (uint32_t i = 0; i < kPackets; ++i) {
        auto handle = w->NewTracePacket();
        rt::TracePacket packet(handle);
        packet.set_timestamp(i);
        packet.set_for_testing().set_str(Body(t, i));
      }
      w->Flush();
      EXPECT_EQ(w->stats().packets_committed, kPackets);
    });
  }
  for (std::thread& t : threads)
    t.join();
  EXPECT_NE(ids[0], ids[1]);
  EXPECT_NE(ids[1], ids[2]);

  // The first publication found no request in flight, so at least one
  // DrainRequest went out and reached the service.
  ASSERT_TRUE(service->WaitForDrainRequests(1));
  const ProducerStats stats = producer->stats();
  EXPECT_EQ(stats.writers_created, kThreads);
  EXPECT_GE(stats.drain_requests_sent, 1u);
  EXPECT_EQ(stats.drain_requests_dropped, 0u);
  EXPECT_EQ(stats.notifications_after_disconnect, 0u);

  TestRingReader reader(service->region()->view());
  std::vector<ReadChunk> chunks;
  ASSERT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  TestPacketReassembler reassembler;
  for (const ReadChunk& c : chunks) {
    EXPECT_EQ(c.buffer_id, 5u);
    reassembler.Add(c);
  }
  for (uint32_t t = 0; t < kThreads; ++t) {
    const auto packets = reassembler.packets(ids[t]);
    ASSERT_EQ(packets.size(), kPackets);
    for (uint32_t i = 0; i < kPackets; ++i) {
      ProtoTestEncoder expected;
      expected.VarIntField(rt::TracePacket::kTimestampFieldNumber, i)
          .Group(rt::TracePacket::kForTestingFieldNumber,
                 ProtoTestEncoder().BytesField(rt::TestEvent::kStrFieldNumber,
                                               Body(t, i)));
      EXPECT_EQ(packets[i], expected.str());
    }
  }

  // Destroying the producer closes the connection: the service sees EOF.
  producer.reset();
  EXPECT_TRUE(service->WaitForProducerGone());
  conn.service.reset();
  EXPECT_EQ(CountOpenFds(), fds_before);  // socket and ring fd closed
}

// Writes |n| packets of about 100 bytes.
void WritePackets(TraceWriterV2* w, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    auto handle = w->NewTracePacket();
    rt::TracePacket packet(handle);
    packet.set_timestamp(i);
    packet.set_for_testing().set_str(std::string(100, 'p'));
  }
  w->Flush();
}

void ExpectExactAccounting(const TraceWriterV2& w) {
  const shm_ring::TraceWriterV2Stats s = w.stats();
  EXPECT_EQ(s.packets_begun, s.packets_committed + s.packets_dropped);
}

// The service dies before the producer writes: the first DrainRequest fails
// with EPIPE and marks the producer disconnected. From then on every new
// packet is refused at once and counted. No crash, no hang, no SIGPIPE.
TEST(ProducerConnectTest, ServiceGoneIsNoticedBySendAndWritersDrop) {
  FakeConnection conn;
  FakeService::Config config;
  config.geometry = shm_ring::RingGeometry(1024, 8);
  const base::Status status = conn.Connect(config, OptionsFor(""));
  ASSERT_TRUE(status.ok()) << status.message();
  FakeService* service = conn.service.get();
  std::unique_ptr<Producer>& producer = conn.producer;
  service->CloseConnection();

  std::unique_ptr<TraceWriterV2> w = producer->NewTraceWriter();
  WritePackets(w.get(), 500);  // ~55 KB into an 8 KiB ring
  EXPECT_FALSE(producer->connected());
  const ProducerStats stats = producer->stats();
  EXPECT_EQ(stats.drain_requests_sent, 0u);
  EXPECT_GT(stats.notifications_after_disconnect, 0u);
  const shm_ring::TraceWriterV2Stats ws = w->stats();
  EXPECT_GT(ws.packets_committed, 0u);
  EXPECT_GT(ws.packets_refused, 0u);
  EXPECT_EQ(ws.packets_begun, 500u);
  ExpectExactAccounting(*w);
  w.reset();
}

// The same, noticed by connected() (the socket hung up), with the stall
// policy: once the producer knows, every packet is refused at once; the
// writer never stalls although the ring is full.
TEST(ProducerConnectTest, ServiceGoneIsNoticedByConnectedAndWritersRefuse) {
  FakeConnection conn;
  FakeService::Config config;
  config.geometry = shm_ring::RingGeometry(1024, 8);
  ProducerOptions options = OptionsFor("");
  options.buffer_exhausted_policy = shm_ring::BufferExhaustedPolicy::kStall;
  options.stall_timeout_ms = 60000;  // a stall would hang the test
  const base::Status status = conn.Connect(config, options);
  ASSERT_TRUE(status.ok()) << status.message();
  FakeService* service = conn.service.get();
  std::unique_ptr<Producer>& producer = conn.producer;
  std::unique_ptr<TraceWriterV2> w = producer->NewTraceWriter();
  WritePackets(w.get(), 5);  // the service is alive: one request goes out
  ASSERT_TRUE(service->WaitForDrainRequests(1));
  EXPECT_TRUE(producer->connected());

  service->CloseConnection();
  EXPECT_FALSE(producer->connected());
  EXPECT_FALSE(producer->connected());  // for good
  WritePackets(w.get(), 500);
  const shm_ring::TraceWriterV2Stats ws = w->stats();
  EXPECT_EQ(ws.packets_committed, 5u);
  EXPECT_EQ(ws.packets_refused, 500u);
  EXPECT_EQ(ws.packets_dropped, 500u);
  EXPECT_EQ(shm_ring::TraceWriterV2Owner::ring_writer(*w).stats().stalls, 0u);
  ExpectExactAccounting(*w);
  EXPECT_EQ(producer->stats().drain_requests_sent, 1u);
  w.reset();
}

// A listener whose backlog is full and that never accepts: connect(2) would
// block forever; Connect() gives up after connect_timeout_ms.
TEST(ProducerConnectTest, FullListenBacklogTimesOut) {
  TempDir dir;
  const std::string path = dir.File("full_backlog.sock");
  base::ScopedFd listener(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(listener.valid());
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof(addr.sun_path));
  memcpy(addr.sun_path, path.data(), path.size());
  ASSERT_EQ(
      bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
      0);
  ASSERT_EQ(listen(listener.get(), 0), 0);
  // Fill the backlog with non-blocking connects until one would block.
  std::vector<base::ScopedFd> queued;
  bool full = false;
  for (int i = 0; i < 64 && !full; i++) {
    base::ScopedFd c(
        socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    ASSERT_TRUE(c.valid());
    if (connect(c.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) !=
        0) {
      ASSERT_EQ(errno, EAGAIN) << strerror(errno);
      full = true;
    }
    queued.push_back(std::move(c));
  }
  ASSERT_TRUE(full);

  const int fds_before = CountOpenFds();
  ProducerOptions options = OptionsFor(path);
  options.connect_timeout_ms = 50;
  base::Status status;
  EXPECT_FALSE(Producer::Connect(options, &status));
  EXPECT_NE(status.message().find("backlog is full"), std::string::npos)
      << status.message();
  EXPECT_EQ(CountOpenFds(), fds_before);
}

}  // namespace
}  // namespace producer
}  // namespace ringtrace
