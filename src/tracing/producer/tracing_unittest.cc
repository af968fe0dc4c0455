/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace::Tracing against scripted services: connecting when the service
// comes late, reconnecting after it went away (a restart at the same path,
// or a service breaking the protocol), data sources registered again on
// every connection, writers of an old connection refusing and counting
// until they are dropped, and destruction stopping the instances.

#include "ringtrace/tracing.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "src/base/test/temp_dir.h"
#include "src/base/time.h"
#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/producer/test/recording_handler.h"
#include "src/tracing/producer/test/scripted_service.h"

namespace ringtrace {
namespace producer {
namespace {

using base::TempDir;
using Kind = RecordingHandler::Kind;
using shm_ring::TraceWriterV2;

constexpr int kWaitMs = 10000;

TracingOptions OptionsFor(const std::string& path) {
  TracingOptions options;
  options.producer.socket_path = path;
  options.producer.name = "tracing_test";
  // The test services do not close their end at the producer's EOF as
  // ringtraced does, so a teardown would wait all of DisconnectInOrder's
  // default second for them.
  options.producer.disconnect_timeout_ms = 100;
  options.min_backoff_ms = 5;
  options.max_backoff_ms = 40;
  return options;
}

ipc::StartDataSourceMsg StartMsg(uint32_t instance_id,
                                 const std::string& name) {
  ipc::StartDataSourceMsg start;
  start.instance_id = instance_id;
  start.target_buffer = 1;
  start.name = name;
  return start;
}

// Waits (bounded) until |done| holds, polling; no timing is asserted.
template <typename F>
bool Eventually(F done) {
  const uint64_t deadline = base::MonotonicMs() + kWaitMs;
  while (!done()) {
    if (base::MonotonicMs() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// The registrations a freshly connected service receives, in order.
std::vector<std::string> Registrations(ScriptedService* service, size_t n) {
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) {
    ipc::Message msg;
    if (!service->Receive(&msg) ||
        msg.type != ipc::MessageType::kRegisterDataSource) {
      break;
    }
    names.push_back(msg.register_data_source.name);
  }
  return names;
}

void WritePackets(TraceWriterV2* w, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    auto packet = w->NewTracePacket();
    perfetto::protos::rtzero::TracePacket(packet).set_timestamp(i + 1);
  }
  w->Flush();
}

TEST(TracingTest, StartValidatesTheOptions) {
  TracingOptions options = OptionsFor("/nonexistent/x.sock");
  options.min_backoff_ms = 0;
  EXPECT_FALSE(Tracing(options).Start().ok());
  options.min_backoff_ms = 100;
  options.max_backoff_ms = 99;
  EXPECT_FALSE(Tracing(options).Start().ok());
}

TEST(TracingTest, RegisterRefusesBadNamesAndDuplicates) {
  RecordingHandler handler;  // handlers outlive the Tracing
  Tracing tracing(OptionsFor("/nonexistent/x.sock"));
  EXPECT_FALSE(tracing.RegisterDataSource("", &handler).ok());
  EXPECT_FALSE(tracing.RegisterDataSource("nl\n", &handler).ok());
  EXPECT_FALSE(tracing.RegisterDataSource("ds", nullptr).ok());
  EXPECT_TRUE(tracing.RegisterDataSource("ds", &handler).ok());
  EXPECT_FALSE(tracing.RegisterDataSource("ds", &handler).ok());
  for (int i = 1; i < 32; ++i)
    ASSERT_TRUE(
        tracing.RegisterDataSource("ds" + std::to_string(i), &handler).ok());
  EXPECT_FALSE(tracing.RegisterDataSource("ds32", &handler).ok());
}

// The app starts first; the service comes later and the app is picked up.
TEST(TracingTest, ConnectsWhenTheServiceComesLater) {
  TempDir dir;
  const std::string path = dir.File("svc.sock");
  RecordingHandler handler;  // handlers outlive the Tracing
  RecordingHandler late;
  Tracing tracing(OptionsFor(path));
  ASSERT_TRUE(tracing.RegisterDataSource("ds", &handler).ok());
  ASSERT_TRUE(tracing.Start().ok());
  ASSERT_TRUE(tracing.Start().ok());  // idempotent
  ASSERT_TRUE(
      Eventually([&] { return tracing.stats().connect_failures >= 2; }));
  EXPECT_EQ(tracing.generation(), 0u);
  EXPECT_FALSE(tracing.connected());
  uint64_t generation = 99;
  EXPECT_EQ(tracing.GetProducer(&generation), nullptr);
  EXPECT_EQ(generation, 0u);

  auto service = ScriptedService::Start(path);
  ASSERT_TRUE(service);
  ASSERT_TRUE(service->WaitConnected());
  EXPECT_EQ(service->hello().name, "tracing_test");
  EXPECT_EQ(Registrations(service.get(), 1), std::vector<std::string>{"ds"});
  EXPECT_EQ(tracing.WaitForConnection(0, kWaitMs), 1u);
  std::shared_ptr<Producer> producer = tracing.GetProducer(&generation);
  ASSERT_TRUE(producer);
  EXPECT_EQ(generation, 1u);
  EXPECT_EQ(tracing.generation(), 1u);

  // A data source registered now goes to the current connection at once.
  ASSERT_TRUE(tracing.RegisterDataSource("late", &late).ok());
  EXPECT_EQ(Registrations(service.get(), 1), std::vector<std::string>{"late"});
  ASSERT_TRUE(service->SendStart(StartMsg(1, "late")));
  ASSERT_TRUE(late.WaitFor(Kind::kStart, 1));
  EXPECT_EQ(late.events()[0].config.producer, producer.get());
  const TracingStats stats = tracing.stats();
  EXPECT_EQ(stats.connections, 1u);
  EXPECT_EQ(stats.disconnects, 0u);
  EXPECT_EQ(stats.connect_attempts, stats.connect_failures + 1);
}

// The service restarts at the same path: the started instance gets OnStop,
// the Tracing reconnects and registers its data sources again; a writer of
// the old connection stays valid, refuses (and counts) every packet, and is
// dropped safely after the old connection is gone.
TEST(TracingTest, ReconnectsAndRegistersAgainAfterARestart) {
  TempDir dir;
  const std::string path = dir.File("svc.sock");
  auto service = ScriptedService::Start(path);
  ASSERT_TRUE(service);
  RecordingHandler handler;  // handlers outlive the Tracing
  RecordingHandler other;
  Tracing tracing(OptionsFor(path));
  ASSERT_TRUE(tracing.RegisterDataSource("ds", &handler).ok());
  ASSERT_TRUE(tracing.RegisterDataSource("other", &other).ok());
  ASSERT_TRUE(tracing.Start().ok());
  ASSERT_TRUE(service->WaitConnected());
  EXPECT_EQ(Registrations(service.get(), 2),
            (std::vector<std::string>{"ds", "other"}));
  ASSERT_EQ(tracing.WaitForConnection(0, kWaitMs), 1u);
  ASSERT_TRUE(service->SendStart(StartMsg(1, "ds")));
  ASSERT_TRUE(handler.WaitFor(Kind::kStart, 1));
  std::unique_ptr<TraceWriterV2> old_writer;
  std::weak_ptr<Producer> old_producer;
  {
    std::shared_ptr<Producer> p = tracing.GetProducer();
    ASSERT_TRUE(p);
    old_writer = p->NewTraceWriter(1, nullptr);
    old_producer = p;
  }
  WritePackets(old_writer.get(), 4);
  EXPECT_EQ(old_writer->stats().packets_committed, 4u);

  service.reset();  // the service goes away
  ASSERT_TRUE(handler.WaitFor(Kind::kStop, 1));
  EXPECT_EQ(handler.events()[1].id, 1u);
  ASSERT_TRUE(Eventually([&] { return tracing.stats().disconnects == 1; }));

  service = ScriptedService::Start(path);  // and comes back
  ASSERT_TRUE(service);
  ASSERT_TRUE(service->WaitConnected());
  EXPECT_EQ(Registrations(service.get(), 2),
            (std::vector<std::string>{"ds", "other"}));
  EXPECT_FALSE(service->HasPendingMessage());  // registered once each
  ASSERT_EQ(tracing.WaitForConnection(1, kWaitMs), 2u);
  uint64_t generation = 0;
  std::shared_ptr<Producer> current = tracing.GetProducer(&generation);
  ASSERT_TRUE(current);
  EXPECT_EQ(generation, 2u);

  // The old writer: valid, refusing, counting; its Producer lives on it.
  ASSERT_FALSE(old_producer.expired());
  EXPECT_NE(old_producer.lock(), current);
  WritePackets(old_writer.get(), 17);
  EXPECT_EQ(old_writer->stats().packets_committed, 4u);
  EXPECT_EQ(old_writer->stats().packets_refused, 17u);
  old_writer.reset();
  EXPECT_TRUE(old_producer.expired());

  // The new connection serves the same handler.
  ASSERT_TRUE(service->SendStart(StartMsg(1, "ds")));
  ASSERT_TRUE(handler.WaitFor(Kind::kStart, 2));
  EXPECT_EQ(handler.events()[2].config.producer, current.get());
  const TracingStats stats = tracing.stats();
  EXPECT_EQ(stats.connections, 2u);
  EXPECT_EQ(stats.disconnects, 1u);
  EXPECT_EQ(stats.register_failures, 0u);
}

// A service that breaks the protocol: the producer disconnects (counted on
// that connection), the instance stops, and the Tracing connects again.
TEST(TracingTest, AServiceBreakingTheProtocolIsLeftAndReconnected) {
  TempDir dir;
  const std::string path = dir.File("svc.sock");
  auto service = ScriptedService::Start(path);
  ASSERT_TRUE(service);
  RecordingHandler handler;  // handlers outlive the Tracing
  Tracing tracing(OptionsFor(path));
  ASSERT_TRUE(tracing.RegisterDataSource("ds", &handler).ok());
  ASSERT_TRUE(tracing.Start().ok());
  ASSERT_TRUE(service->WaitConnected());
  ASSERT_EQ(Registrations(service.get(), 1).size(), 1u);
  ASSERT_EQ(tracing.WaitForConnection(0, kWaitMs), 1u);
  std::weak_ptr<Producer> first = tracing.GetProducer();
  ASSERT_TRUE(service->SendStart(StartMsg(3, "ds")));
  ASSERT_TRUE(handler.WaitFor(Kind::kStart, 1));

  ASSERT_TRUE(service->SendStop(4));  // never started
  EXPECT_TRUE(service->WaitForHangUp());
  ASSERT_TRUE(handler.WaitFor(Kind::kStop, 1));
  EXPECT_EQ(handler.events()[1].id, 3u);
  // Nothing else held it: the Tracing's thread releases it.
  EXPECT_TRUE(Eventually([&] { return first.expired(); }));

  // The listener still accepts, but this scripted service answers one
  // Hello only: restart it so the next attempt is served.
  service.reset();
  service = ScriptedService::Start(path);
  ASSERT_TRUE(service);
  ASSERT_TRUE(service->WaitConnected());
  ASSERT_EQ(tracing.WaitForConnection(1, kWaitMs), 2u);
  EXPECT_EQ(Registrations(service.get(), 1), std::vector<std::string>{"ds"});
  EXPECT_EQ(tracing.stats().disconnects, 1u);
}

// Destroying the Tracing stops every started instance (OnStop before the
// destructor returns) and, with no writer left, closes the connection after
// the final loss report.
TEST(TracingTest, DestructionStopsStartedInstances) {
  TempDir dir;
  const std::string path = dir.File("svc.sock");
  auto service = ScriptedService::Start(path);
  ASSERT_TRUE(service);
  RecordingHandler handler;
  auto tracing = std::make_unique<Tracing>(OptionsFor(path));
  ASSERT_TRUE(tracing->RegisterDataSource("ds", &handler).ok());
  ASSERT_TRUE(tracing->Start().ok());
  ASSERT_TRUE(service->WaitConnected());
  ASSERT_EQ(Registrations(service.get(), 1).size(), 1u);
  ASSERT_TRUE(service->SendStart(StartMsg(8, "ds")));
  ASSERT_TRUE(handler.WaitFor(Kind::kStart, 1));
  tracing.reset();
  ASSERT_EQ(handler.count(Kind::kStop), 1u);
  EXPECT_EQ(handler.events()[1].id, 8u);
  EXPECT_TRUE(service->WaitForHangUp());
  EXPECT_EQ(service->final_loss_reports(), 1u);
}

// A Tracing that never reaches a service is destroyed promptly and cleanly.
TEST(TracingTest, DestructionWhileRetrying) {
  TempDir dir;
  Tracing tracing(OptionsFor(dir.File("none.sock")));
  ASSERT_TRUE(tracing.Start().ok());
  ASSERT_TRUE(
      Eventually([&] { return tracing.stats().connect_failures >= 1; }));
  EXPECT_EQ(tracing.WaitForConnection(0, 1), 0u);
}

}  // namespace
}  // namespace producer
}  // namespace ringtrace
