/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Categories for this test only (see RT_TRACK_EVENT_NAMESPACE).
#define RT_TRACK_EVENT_NAMESPACE rt_track_event_data_source_unittest_categories

#include "ringtrace/track_event_data_source.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/trace/trace_packet.pb.h"
#include "ringtrace/tracing.h"
#include "ringtrace/track_event.h"
#include "src/base/time.h"
#include "src/tracing/core/encoding/test/packet_capture.h"
#include "src/tracing/core/shm_ring/test_ring.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"
#include "src/tracing/producer/test/fake_service.h"
#include "src/tracing/producer/test/scripted_service.h"
#include "src/tracing/track_event/test/sequence_reader.h"

RT_DEFINE_CATEGORIES("ds.a",
                     "ds.b",
                     ringtrace::track_event::Category("ds.tagged")
                         .SetDescription("Verbose details")
                         .SetTags("debug"),
                     "disabled-by-default-ds");

namespace ringtrace {
namespace track_event {
namespace {

// The test services do not close their end at the producer's EOF as
// ringtraced does, so a teardown would wait all of DisconnectInOrder's
// default second for them.
constexpr uint32_t kTestDisconnectMs = 100;

namespace pb = perfetto::protos;
using producer::FakeService;
using producer::ScriptedService;

struct Connection {
  base::TempDir dir;
  std::unique_ptr<FakeService> service;
  std::shared_ptr<Producer> producer;
};

void Connect(Connection* c) {
  FakeService::Config config;
  config.geometry = shm_ring::RingGeometry{4096, 64};
  const std::string path = c->dir.File("producer.sock");
  c->service = FakeService::Start(path, config);
  ASSERT_NE(c->service, nullptr);
  ProducerOptions options;
  options.socket_path = path;
  options.disconnect_timeout_ms = kTestDisconnectMs;
  base::Status status;
  c->producer = Producer::Connect(options, &status);
  ASSERT_NE(c->producer, nullptr) << status.message();
  ASSERT_TRUE(c->service->WaitHelloDone());
}

DataSourceInstanceConfig StartConfig(uint32_t id,
                                     shm_ring::BufferID buffer,
                                     std::vector<std::string> enabled,
                                     Producer* producer) {
  DataSourceInstanceConfig config;
  config.instance_id = id;
  config.target_buffer = buffer;
  config.name = TrackEventDataSource::kName;
  config.enabled_categories = std::move(enabled);
  config.disabled_categories = {"*"};  // |enabled| only
  config.producer = producer;
  return config;
}

// Event names per target buffer, read from the service's side of the ring.
std::map<shm_ring::BufferID, std::vector<std::string>> EventsByBuffer(
    shm_ring::SharedRingRegion* region) {
  shm_ring::TestRingReader reader(region->view());
  std::vector<shm_ring::ReadChunk> chunks;
  reader.DrainAll(&chunks);
  shm_ring::TestPacketReassembler reassembler;
  std::map<shm_ring::WriterID, shm_ring::BufferID> buffers;
  for (const shm_ring::ReadChunk& chunk : chunks) {
    EXPECT_FALSE(chunk.flags & shm_ring::kFlagDataLoss);
    buffers[chunk.writer_id] = chunk.buffer_id;
    reassembler.Add(chunk);
  }
  std::map<shm_ring::BufferID, std::vector<std::string>> out;
  for (const auto& [writer, buffer] : buffers) {
    std::vector<pb::TracePacket> packets;
    for (const std::string& grouped : reassembler.packets(writer)) {
      std::string flat;
      EXPECT_TRUE(encoding::PacketCapture::Ungroup(grouped, &flat));
      packets.emplace_back();
      EXPECT_TRUE(packets.back().ParseFromString(flat));
    }
    EXPECT_EQ(ResolveIncrementalState(&packets), 1);
    for (const pb::TracePacket& p : packets) {
      if (p.has_track_event())
        out[buffer].push_back(p.track_event().name());
    }
  }
  return out;
}

// The handler over a real (shared-owned) Producer: each instance's events go
// into a writer of its own buffer, created by the thread's first event; the
// handler holds no reference that keeps the Producer alive.
TEST(TrackEventDataSourceTest, InstancesWriteTheirBuffersThroughTheProducer) {
  Connection c;
  ASSERT_NO_FATAL_FAILURE(Connect(&c));
  std::weak_ptr<Producer> watch = c.producer;
  TrackEventDataSource data_source;
  data_source.OnStart(StartConfig(11, 5, {"ds.a"}, c.producer.get()));
  data_source.OnStart(StartConfig(12, 6, {"ds.*"}, c.producer.get()));
  data_source.OnStart(StartConfig(11, 7, {"ds.b"}, c.producer.get()));
  EXPECT_EQ(data_source.start_failures(), 1u);  // id 11 runs already
  EXPECT_EQ(data_source.running_instances(), 2u);
  std::thread thread([] {
    RT_TRACE_INSTANT("ds.a", "A");
    RT_TRACE_INSTANT("ds.b", "B");
  });
  thread.join();
  data_source.OnFlush(1);
  data_source.OnStop(11);
  data_source.OnStop(12);
  data_source.OnStop(99);  // unknown (e.g. its start failed): ignored
  EXPECT_EQ(data_source.running_instances(), 0u);
  using V = std::vector<std::string>;
  const auto events = EventsByBuffer(c.service->region());
  EXPECT_EQ(events,
            (std::map<shm_ring::BufferID, V>{{5, V{"A"}}, {6, V{"A", "B"}}}));
  c.producer.reset();
  EXPECT_TRUE(watch.expired());
}

// A Producer nobody shares (the unique_ptr Connect() returns) cannot be kept
// alive by writers: the instance starts, but its events find no writer, and
// each is counted.
TEST(TrackEventDataSourceTest, UnsharedProducerGivesNoWritersAndCounts) {
  base::TempDir dir;
  FakeService::Config config;
  const std::string path = dir.File("producer.sock");
  std::unique_ptr<FakeService> service = FakeService::Start(path, config);
  ASSERT_NE(service, nullptr);
  ProducerOptions options;
  options.socket_path = path;
  options.disconnect_timeout_ms = kTestDisconnectMs;
  base::Status status;
  std::unique_ptr<Producer> unshared = Producer::Connect(options, &status);
  ASSERT_NE(unshared, nullptr) << status.message();
  ASSERT_TRUE(service->WaitHelloDone());
  TrackEventDataSource data_source;
  data_source.OnStart(StartConfig(1, 5, {"ds.a"}, unshared.get()));
  EXPECT_EQ(data_source.running_instances(), 1u);
  const TrackEventStats before = Stats();
  std::thread thread([] {
    RT_TRACE_INSTANT("ds.a", "Lost");
    RT_TRACE_INSTANT("ds.a", "Lost");
  });
  thread.join();
  data_source.OnStop(1);
  EXPECT_EQ(Stats().events_without_writer - before.events_without_writer, 2u);
  EXPECT_EQ(Stats().instance_writers_created, before.instance_writers_created);
  EXPECT_TRUE(EventsByBuffer(service->region()).empty());
}

// Waits (bounded) until |done| holds, polling; no timing is asserted.
template <typename F>
bool Eventually(F done) {
  const uint64_t deadline = base::MonotonicMs() + ScriptedService::kWaitMs;
  while (!done()) {
    if (base::MonotonicMs() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// The whole SDK path against a service that speaks the protocol: Tracing
// connects and registers "track_event"; the service starts two instances
// with different categories and buffers; a thread's events reach each
// instance's buffer; each stop is acknowledged after the handler returned.
TEST(TrackEventDataSourceTest, SessionsThroughTracingAndTheWireProtocol) {
  base::TempDir dir;
  const std::string path = dir.File("svc.sock");
  ScriptedService::Config config;
  config.geometry = shm_ring::RingGeometry{4096, 64};
  std::unique_ptr<ScriptedService> service =
      ScriptedService::Start(path, config);
  ASSERT_TRUE(service);
  TrackEventDataSource data_source;  // outlives the Tracing
  TracingOptions options;
  options.producer.socket_path = path;
  options.min_backoff_ms = 5;
  options.max_backoff_ms = 40;
  Tracing tracing(options);
  ASSERT_TRUE(
      tracing.RegisterDataSource(TrackEventDataSource::kName, &data_source)
          .ok());
  ASSERT_TRUE(tracing.Start().ok());
  ASSERT_TRUE(service->WaitConnected());
  ipc::Message msg;
  ASSERT_TRUE(service->Receive(&msg));
  ASSERT_EQ(msg.type, ipc::MessageType::kRegisterDataSource);
  EXPECT_EQ(msg.register_data_source.name, "track_event");

  ipc::StartDataSourceMsg start;
  start.name = "track_event";
  start.instance_id = 1;
  start.target_buffer = 5;
  start.enabled_categories = {"ds.a"};
  start.disabled_categories = {"*"};
  ASSERT_TRUE(service->SendStart(start));
  start.instance_id = 2;
  start.target_buffer = 6;
  start.enabled_categories = {"ds.*"};
  start.disabled_categories = {"ds.a"};
  ASSERT_TRUE(service->SendStart(start));
  ASSERT_TRUE(Eventually([&] { return data_source.running_instances() == 2; }));

  std::thread thread([] {
    RT_TRACE_INSTANT("ds.a", "A");
    RT_TRACE_INSTANT("ds.b", "B");
  });
  thread.join();
  for (uint32_t id : {1u, 2u}) {
    ASSERT_TRUE(service->SendStop(id));
    ASSERT_TRUE(service->Receive(&msg));
    EXPECT_EQ(msg.type, ipc::MessageType::kDataSourceStopped);
    EXPECT_EQ(msg.id, id);
  }
  EXPECT_EQ(data_source.running_instances(), 0u);
  using V = std::vector<std::string>;
  EXPECT_EQ(EventsByBuffer(service->region()),
            (std::map<shm_ring::BufferID, V>{{5, V{"A"}}, {6, V{"B"}}}));
  // The process's declared categories (this file's among them) followed
  // the registration, each once.
  ASSERT_TRUE(service->WaitForDeclaredCategory("disabled-by-default-ds"));
  std::map<std::string, ipc::CategoryDescriptor> declared;
  for (const ScriptedService::Declared& d : service->declared_categories()) {
    EXPECT_EQ(d.data_source, "track_event");
    EXPECT_TRUE(declared.emplace(d.category.name, d.category).second)
        << d.category.name;
  }
  ASSERT_EQ(declared.count("ds.a"), 1u);
  EXPECT_TRUE(declared["ds.a"].tags.empty());
  EXPECT_EQ(declared["ds.tagged"].description, "Verbose details");
  EXPECT_EQ(declared["ds.tagged"].tags, (V{"debug"}));
  EXPECT_EQ(declared["disabled-by-default-ds"].tags, (V{"slow"}));
}

// A plain Producer app (no Tracing) joins sessions with one call: the
// service sees the registration, and a started instance gets the thread's
// events in its buffer.
TEST(TrackEventDataSourceTest, PlainProducerRegistersTheProcessDataSource) {
  EXPECT_FALSE(RegisterTrackEventDataSource(std::shared_ptr<Producer>()).ok());
  base::TempDir dir;
  const std::string path = dir.File("svc.sock");
  ScriptedService::Config config;
  config.geometry = shm_ring::RingGeometry{4096, 64};
  std::unique_ptr<ScriptedService> service =
      ScriptedService::Start(path, config);
  ASSERT_TRUE(service);
  ProducerOptions options;
  options.socket_path = path;
  options.disconnect_timeout_ms = kTestDisconnectMs;
  base::Status status;
  std::shared_ptr<Producer> producer = Producer::Connect(options, &status);
  ASSERT_TRUE(producer) << status.message();
  ASSERT_TRUE(service->WaitConnected());
  ASSERT_TRUE(RegisterTrackEventDataSource(producer).ok());
  ipc::Message msg;
  ASSERT_TRUE(service->Receive(&msg));
  ASSERT_EQ(msg.type, ipc::MessageType::kRegisterDataSource);
  EXPECT_EQ(msg.register_data_source.name, "track_event");
  // A second registration on the same Producer is refused by name.
  EXPECT_FALSE(RegisterTrackEventDataSource(producer).ok());

  ipc::StartDataSourceMsg start;
  start.name = "track_event";
  start.instance_id = 1;
  start.target_buffer = 9;
  start.enabled_categories = {"ds.b"};
  start.disabled_categories = {"*"};
  ASSERT_TRUE(service->SendStart(start));
  ASSERT_TRUE(Eventually([] { return CategoryMask("ds.b") != 0; }));
  std::thread thread([] {
    RT_TRACE_INSTANT("ds.a", "not enabled");
    RT_TRACE_INSTANT("ds.b", "plain");
  });
  thread.join();
  ASSERT_TRUE(service->SendStop(1));
  ASSERT_TRUE(service->Receive(&msg));
  EXPECT_EQ(msg.type, ipc::MessageType::kDataSourceStopped);
  using V = std::vector<std::string>;
  EXPECT_EQ(EventsByBuffer(service->region()),
            (std::map<shm_ring::BufferID, V>{{9, V{"plain"}}}));
  producer->StopDataSources();
}

}  // namespace
}  // namespace track_event
}  // namespace ringtrace
