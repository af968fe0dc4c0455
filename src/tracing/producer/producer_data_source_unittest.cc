/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Data sources on a Producer against a scripted service: registration,
// Start/Stop/Flush reaching the handlers on the reader thread, the acks sent
// only after the handlers returned (a stop's once the handler acked it, also
// later from another thread), a hostile service disconnecting (and
// being counted), the reader's end (hang-up, StopDataSources, destruction),
// shared ownership by writers, and fork().

#include <gtest/gtest.h>

#include <sys/eventfd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/producer.h"
#include "src/base/scoped_fd.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"
#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/producer/test/recording_handler.h"
#include "src/tracing/producer/test/scripted_service.h"

namespace ringtrace {
namespace producer {
namespace {

using base::TempDir;
using Kind = RecordingHandler::Kind;
using shm_ring::ReadChunk;
using shm_ring::TestRingReader;
using shm_ring::TraceWriterV2;

ProducerOptions OptionsFor(const std::string& path) {
  ProducerOptions options;
  options.socket_path = path;
  options.name = "ds_test";
  // The test services do not close their end at the producer's EOF as
  // ringtraced does, so a teardown would wait all of DisconnectInOrder's
  // default second for them.
  options.disconnect_timeout_ms = 100;
  return options;
}

ipc::StartDataSourceMsg StartMsg(uint32_t instance_id,
                                 const std::string& name,
                                 uint32_t target_buffer = 1) {
  ipc::StartDataSourceMsg start;
  start.instance_id = instance_id;
  start.target_buffer = target_buffer;
  start.name = name;
  return start;
}

// A producer connected to a scripted service, with |handler| registered as
// "ds" (its RegisterDataSource already received by the service).
struct Connected {
  TempDir dir;
  std::unique_ptr<ScriptedService> service;
  std::unique_ptr<Producer> producer;
  std::atomic<int> disconnects{0};

  bool Connect(DataSourceHandler* handler) {
    service = ScriptedService::Start(dir.File("svc.sock"));
    if (!service)
      return false;
    ProducerOptions options = OptionsFor(dir.File("svc.sock"));
    options.on_disconnect = [this] { disconnects++; };
    base::Status status;
    producer = Producer::Connect(options, &status);
    if (!producer || !service->WaitConnected())
      return false;
    if (!handler)
      return true;
    if (!producer->RegisterDataSource("ds", handler).ok())
      return false;
    ipc::Message msg;
    return service->Receive(&msg) &&
           msg.type == ipc::MessageType::kRegisterDataSource &&
           msg.register_data_source.name == "ds";
  }
};

void WritePackets(TraceWriterV2* w, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    auto packet = w->NewTracePacket();
    perfetto::protos::rtzero::TracePacket(packet).set_timestamp(i + 1);
  }
  w->Flush();
}

DataSourceCategory Category(const std::string& name,
                            const std::string& description = "",
                            std::vector<std::string> tags = {}) {
  DataSourceCategory c;
  c.name = name;
  c.description = description;
  c.tags = std::move(tags);
  return c;
}

// The handler's categories follow its RegisterDataSource, in order, in as
// many messages as they need; what the wire cannot carry is left out (or a
// description cut and cleaned) and counted, never a reason to disconnect.
TEST(ProducerDataSourceTest, RegistrationPublishesTheHandlersCategories) {
  RecordingHandler handler;
  handler.categories = {
      Category("gfx", "Frames", {"rendering"}),
      Category("gfx*"),  // a pattern
      Category(""),      // empty
      Category(std::string(ipc::kMaxCategoryNameSize + 1, 'n')),
      Category("tags", "", {"a", "b", "c", "d", "e"}),  // five tags
      Category("bad.tag", "", {"sl*w"}),
      Category("gfx", "again"),  // repeated
      Category("long", std::string(300, 'x') + "\n"),
      Category("io", "caf\xc3\xa9\tok", {"slow", "debug"}),
  };
  for (int i = 0; i < 20; i++)  // more than one message's worth
    handler.categories.push_back(Category("many." + std::to_string(i)));
  Connected c;
  ASSERT_TRUE(c.Connect(&handler));
  ASSERT_TRUE(c.service->WaitForDeclaredCategory("many.19"));
  const std::vector<ScriptedService::Declared>& declared =
      c.service->declared_categories();
  ASSERT_EQ(declared.size(), 23u);
  for (const ScriptedService::Declared& d : declared)
    EXPECT_EQ(d.data_source, "ds");
  EXPECT_EQ(declared[0].category.name, "gfx");
  EXPECT_EQ(declared[0].category.description, "Frames");
  EXPECT_EQ(declared[0].category.tags, (std::vector<std::string>{"rendering"}));
  EXPECT_EQ(declared[1].category.name, "long");
  EXPECT_EQ(declared[1].category.description,
            std::string(ipc::kMaxCategoryDescriptionSize, 'x'));
  EXPECT_EQ(declared[2].category.name, "io");
  EXPECT_EQ(declared[2].category.description, "caf???ok");
  EXPECT_EQ(declared[2].category.tags,
            (std::vector<std::string>{"slow", "debug"}));
  EXPECT_EQ(declared[22].category.name, "many.19");
  const ProducerStats stats = c.producer->stats();
  EXPECT_EQ(stats.categories_published, 23u);
  EXPECT_EQ(stats.categories_not_published, 6u);
  EXPECT_EQ(stats.service_protocol_violations, 0u);
  EXPECT_TRUE(c.producer->connected());
}

// At most kMaxDeclaredCategoriesPerProducer in all the producer's data
// sources: the first registrations get them.
TEST(ProducerDataSourceTest, CategoriesAreBoundedPerProducer) {
  RecordingHandler first, second;
  for (size_t i = 0; i + 8 < ipc::kMaxDeclaredCategoriesPerProducer; i++)
    first.categories.push_back(Category("a." + std::to_string(i)));
  for (int i = 0; i < 20; i++)
    second.categories.push_back(Category("b." + std::to_string(i)));
  Connected c;
  ASSERT_TRUE(c.Connect(&first));
  ASSERT_TRUE(c.producer->RegisterDataSource("second", &second).ok());
  ASSERT_TRUE(c.service->WaitForDeclaredCategory("b.7"));
  ipc::Message msg;
  ASSERT_TRUE(c.service->Receive(&msg));
  EXPECT_EQ(msg.type, ipc::MessageType::kRegisterDataSource);
  EXPECT_FALSE(c.service->HasPendingMessage());
  EXPECT_EQ(c.service->declared_categories().size(),
            ipc::kMaxDeclaredCategoriesPerProducer);
  EXPECT_EQ(c.service->declared_categories().back().category.name, "b.7");
  EXPECT_EQ(c.service->declared_categories().back().data_source, "second");
  EXPECT_EQ(c.producer->stats().categories_not_published, 12u);
}

TEST(ProducerDataSourceTest, StartReachesTheHandlerOnTheReaderThread) {
  RecordingHandler handler;
  Connected c;
  // The handler writes a packet for the instance's buffer from OnStart.
  std::unique_ptr<TraceWriterV2> writer;
  handler.on_start = [&writer](const DataSourceInstanceConfig& config) {
    base::Status status;
    writer = config.producer->NewTraceWriter(config.target_buffer, &status);
    if (writer)
      WritePackets(writer.get(), 1);
  };
  ASSERT_TRUE(c.Connect(&handler));
  EXPECT_EQ(c.producer->stats().data_sources_registered, 1u);

  ipc::StartDataSourceMsg start = StartMsg(42, "ds", 0x1234);
  start.clear_period_ms = 250;
  start.enabled_categories = {"gfx*", "input"};
  start.disabled_categories = {"debug"};
  start.enabled_tags = {"slow"};
  start.disabled_tags = {"x*", "y"};
  start.config = std::string(
      "\x0a\x02"
      "ds\xa2\x06\x00",
      7);
  ASSERT_TRUE(c.service->SendStart(start));
  ASSERT_TRUE(handler.WaitFor(Kind::kStart, 1));
  const std::vector<RecordingHandler::Event> events = handler.events();
  ASSERT_EQ(events.size(), 1u);
  const DataSourceInstanceConfig& config = events[0].config;
  EXPECT_EQ(config.instance_id, 42u);
  EXPECT_EQ(config.target_buffer, 0x1234u);
  EXPECT_EQ(config.name, "ds");
  EXPECT_EQ(config.enabled_categories,
            (std::vector<std::string>{"gfx*", "input"}));
  EXPECT_EQ(config.disabled_categories, (std::vector<std::string>{"debug"}));
  EXPECT_EQ(config.enabled_tags, (std::vector<std::string>{"slow"}));
  EXPECT_EQ(config.disabled_tags, (std::vector<std::string>{"x*", "y"}));
  EXPECT_EQ(config.clear_period_ms, 250u);
  EXPECT_EQ(config.config, start.config) << "the config bytes, unread";
  EXPECT_EQ(config.producer, c.producer.get());
  EXPECT_NE(events[0].thread, std::this_thread::get_id());
  EXPECT_EQ(c.producer->stats().instances_started, 1u);

  // The instance's writer put its chunk in buffer 0x1234, the default one in
  // HelloReply.target_buffer (0).
  ASSERT_TRUE(writer);
  std::unique_ptr<TraceWriterV2> default_writer = c.producer->NewTraceWriter();
  WritePackets(default_writer.get(), 1);
  TestRingReader reader(c.service->region()->view());
  std::vector<ReadChunk> chunks;
  reader.DrainAll(&chunks);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].buffer_id, 0x1234u);
  EXPECT_EQ(chunks[1].buffer_id, 0u);
  writer.reset();
  default_writer.reset();
}

// DataSourceStopped goes out only once OnStop returned: while the handler
// holds the call, nothing is queued at the service (a send would already
// be there).
TEST(ProducerDataSourceTest, StopIsAckedAfterTheHandlerReturns) {
  RecordingHandler handler;
  Connected c;
  ASSERT_TRUE(c.Connect(&handler));
  ASSERT_TRUE(c.service->SendStart(StartMsg(7, "ds")));
  ASSERT_TRUE(handler.WaitFor(Kind::kStart, 1));

  handler.HoldNext(Kind::kStop);
  ASSERT_TRUE(c.service->SendStop(7));
  ASSERT_TRUE(handler.WaitHeld());
  EXPECT_FALSE(c.service->HasPendingMessage());
  handler.Release();
  ipc::Message msg;
  ASSERT_TRUE(c.service->Receive(&msg));
  EXPECT_EQ(msg.type, ipc::MessageType::kDataSourceStopped);
  EXPECT_EQ(msg.id, 7u);
  EXPECT_EQ(handler.count(Kind::kStop), 1u);
  EXPECT_EQ(c.producer->stats().instances_stopped, 1u);

  // The id is free again: the service may start it anew.
  ASSERT_TRUE(c.service->SendStart(StartMsg(7, "ds")));
  ASSERT_TRUE(handler.WaitFor(Kind::kStart, 2));
  EXPECT_TRUE(c.producer->connected());
  EXPECT_EQ(c.producer->stats().service_protocol_violations, 0u);
  c.producer.reset();  // the destructor stops the started instance
  EXPECT_EQ(handler.count(Kind::kStop), 2u);
  EXPECT_EQ(c.disconnects.load(), 0);
}

TEST(ProducerDataSourceTest, FlushCallsEveryHandlerThenAcks) {
  RecordingHandler first;
  RecordingHandler second;
  Connected c;
  ASSERT_TRUE(c.Connect(&first));
  ASSERT_TRUE(c.producer->RegisterDataSource("other", &second).ok());
  ipc::Message msg;
  ASSERT_TRUE(c.service->Receive(&msg));
  EXPECT_EQ(msg.register_data_source.name, "other");

  second.HoldNext(Kind::kFlush);
  ASSERT_TRUE(c.service->SendFlush(0xabcdef01));
  ASSERT_TRUE(second.WaitHeld());
  EXPECT_FALSE(c.service->HasPendingMessage());
  second.Release();
  ASSERT_TRUE(c.service->Receive(&msg));
  EXPECT_EQ(msg.type, ipc::MessageType::kFlushAck);
  EXPECT_EQ(msg.id, 0xabcdef01u);
  ASSERT_EQ(first.count(Kind::kFlush), 1u);
  ASSERT_EQ(second.count(Kind::kFlush), 1u);
  EXPECT_EQ(first.events()[0].id, 0xabcdef01u);
  EXPECT_EQ(c.producer->stats().flushes, 1u);
}

// A handler may call back into its Producer from the reader thread.
TEST(ProducerDataSourceTest, HandlersMayUseTheProducer) {
  RecordingHandler handler;
  RecordingHandler late;
  Connected c;
  base::Status register_status = base::ErrStatus("not called");
  handler.on_start = [&](const DataSourceInstanceConfig& config) {
    register_status = config.producer->RegisterDataSource("late", &late);
    (void)config.producer->stats();
    (void)config.producer->connected();
  };
  ASSERT_TRUE(c.Connect(&handler));
  ASSERT_TRUE(c.service->SendStart(StartMsg(1, "ds")));
  ipc::Message msg;
  ASSERT_TRUE(c.service->Receive(&msg));
  EXPECT_EQ(msg.type, ipc::MessageType::kRegisterDataSource);
  EXPECT_EQ(msg.register_data_source.name, "late");
  ASSERT_TRUE(handler.WaitFor(Kind::kStart, 1));  // on_start returned
  EXPECT_TRUE(register_status.ok()) << register_status.message();
  ASSERT_TRUE(c.service->SendStart(StartMsg(2, "late")));
  ASSERT_TRUE(late.WaitFor(Kind::kStart, 1));
}

TEST(ProducerDataSourceTest, RegisterRefusesBadRequests) {
  RecordingHandler handler;
  Connected c;
  ASSERT_TRUE(c.Connect(&handler));
  EXPECT_FALSE(c.producer->RegisterDataSource("", &handler).ok());
  EXPECT_FALSE(c.producer->RegisterDataSource("tab\t", &handler).ok());
  EXPECT_FALSE(
      c.producer->RegisterDataSource(std::string(65, 'x'), &handler).ok());
  EXPECT_FALSE(c.producer->RegisterDataSource("ds", &handler).ok());
  EXPECT_FALSE(c.producer->RegisterDataSource("null", nullptr).ok());
  for (int i = 1; i < 32; ++i) {
    ASSERT_TRUE(
        c.producer->RegisterDataSource("ds" + std::to_string(i), &handler)
            .ok());
  }
  const base::Status s = c.producer->RegisterDataSource("ds32", &handler);
  EXPECT_NE(s.message().find("more than 32"), std::string::npos) << s.message();
  EXPECT_EQ(c.producer->stats().data_sources_registered, 32u);
  // Exactly 32 registrations reached the service, nothing else.
  for (int i = 1; i < 32; ++i) {
    ipc::Message msg;
    ASSERT_TRUE(c.service->Receive(&msg));
    EXPECT_EQ(msg.register_data_source.name, "ds" + std::to_string(i));
  }
  EXPECT_FALSE(c.service->HasPendingMessage());

  // After a lost connection.
  c.service->Close();
  c.producer->StopDataSources();
  EXPECT_FALSE(c.producer->RegisterDataSource("later", &handler).ok());
}

// The service hangs up: every started instance gets OnStop (ascending ids),
// then on_disconnect, once; the writers refuse new packets (counted).
TEST(ProducerDataSourceTest, HangUpStopsStartedInstances) {
  RecordingHandler handler;
  Connected c;
  ASSERT_TRUE(c.Connect(&handler));
  ASSERT_TRUE(c.service->SendStart(StartMsg(9, "ds")));
  ASSERT_TRUE(c.service->SendStart(StartMsg(3, "ds")));
  ASSERT_TRUE(handler.WaitFor(Kind::kStart, 2));
  std::unique_ptr<TraceWriterV2> writer =
      c.producer->NewTraceWriter(1, nullptr);
  c.service->Close();
  ASSERT_TRUE(handler.WaitFor(Kind::kStop, 2));
  // on_disconnect runs after the OnStops, on the same thread: wait for the
  // reader to end.
  c.producer->StopDataSources();
  EXPECT_EQ(c.disconnects.load(), 1);
  const std::vector<RecordingHandler::Event> events = handler.events();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[2].id, 3u);
  EXPECT_EQ(events[3].id, 9u);
  const ProducerStats stats = c.producer->stats();
  EXPECT_EQ(stats.instances_stopped_without_request, 2u);
  EXPECT_EQ(stats.instances_stopped, 0u);
  EXPECT_EQ(stats.service_protocol_violations, 0u);
  EXPECT_FALSE(c.producer->connected());
  WritePackets(writer.get(), 25);
  EXPECT_EQ(writer->stats().packets_refused, 25u);
  EXPECT_EQ(writer->stats().packets_committed, 0u);
  writer.reset();
}

// StopDataSources() and the destructor stop the started instances too, but
// the connection was not lost: no on_disconnect.
TEST(ProducerDataSourceTest, StopDataSourcesStopsInstancesWithoutDisconnect) {
  RecordingHandler handler;
  Connected c;
  ASSERT_TRUE(c.Connect(&handler));
  ASSERT_TRUE(c.service->SendStart(StartMsg(5, "ds")));
  ASSERT_TRUE(handler.WaitFor(Kind::kStart, 1));
  c.producer->StopDataSources();
  EXPECT_EQ(handler.count(Kind::kStop), 1u);
  c.producer->StopDataSources();  // idempotent
  EXPECT_EQ(handler.count(Kind::kStop), 1u);
  EXPECT_EQ(c.disconnects.load(), 0);
  EXPECT_EQ(c.producer->stats().instances_stopped_without_request, 1u);
  // Messages are no longer read or answered; the connection stays up.
  ASSERT_TRUE(c.service->SendFlush(1));
  EXPECT_TRUE(c.producer->connected());
  EXPECT_FALSE(c.service->hung_up());
  EXPECT_FALSE(c.service->HasPendingMessage());
  EXPECT_EQ(handler.count(Kind::kFlush), 0u);
  c.producer.reset();
  EXPECT_TRUE(c.service->WaitForHangUp());
  EXPECT_EQ(c.service->final_loss_reports(), 1u);
  EXPECT_EQ(handler.count(Kind::kStop), 1u);
}

// What a hostile service can send; each one disconnects the producer.
struct HostileCase {
  const char* what;
  // Sends the offending datagram (after instance 1 of "ds" started).
  std::function<bool(ScriptedService*)> send;
};

std::vector<uint8_t> Header(uint32_t type, uint32_t payload_size) {
  std::vector<uint8_t> b(ipc::kHeaderSize + payload_size, 0);
  const uint32_t words[3] = {ipc::kMagic, type, payload_size};
  for (int w = 0; w < 3; ++w) {
    for (int i = 0; i < 4; ++i)
      b[w * 4 + i] = static_cast<uint8_t>(words[w] >> (8 * i));
  }
  return b;
}

std::vector<HostileCase> HostileCases() {
  return {
      {"bad magic",
       [](ScriptedService* s) {
         std::vector<uint8_t> b = Header(8, 4);
         b[0] = 'X';
         return s->Send(b.data(), b.size());
       }},
      {"flush of the wrong size",
       [](ScriptedService* s) {
         std::vector<uint8_t> b = Header(8, 5);
         return s->Send(b.data(), b.size());
       }},
      {"unknown type",
       [](ScriptedService* s) {
         std::vector<uint8_t> b = Header(77, 0);
         return s->Send(b.data(), b.size());
       }},
      {"a HelloReply after the handshake",
       [](ScriptedService* s) {
         uint8_t buf[ipc::kMaxProducerMessageSize];
         const size_t n =
             ipc::EncodeHelloReply(ipc::HelloReplyMsg(), buf, sizeof(buf));
         return s->Send(buf, n);
       }},
      {"a DrainRequest from the service",
       [](ScriptedService* s) {
         uint8_t buf[ipc::kMaxProducerMessageSize];
         return s->Send(buf, ipc::EncodeDrainRequest(buf, sizeof(buf)));
       }},
      {"an ack from the service",
       [](ScriptedService* s) {
         uint8_t buf[ipc::kMaxProducerMessageSize];
         return s->Send(buf, ipc::EncodeFlushAck(1, buf, sizeof(buf)));
       }},
      {"a start for a data source never registered",
       [](ScriptedService* s) { return s->SendStart(StartMsg(2, "nope")); }},
      {"a second start of a started instance",
       [](ScriptedService* s) { return s->SendStart(StartMsg(1, "ds")); }},
      {"a stop of an unknown instance",
       [](ScriptedService* s) { return s->SendStop(2); }},
      {"a datagram longer than any message",
       [](ScriptedService* s) {
         std::vector<uint8_t> b(ipc::kMaxMessageSize + 1, 0);
         return s->Send(b.data(), b.size());
       }},
      {"an fd attached",
       [](ScriptedService* s) {
         base::ScopedFd fd(eventfd(0, EFD_CLOEXEC));
         uint8_t buf[ipc::kMaxProducerMessageSize];
         const size_t n = ipc::EncodeFlush(1, buf, sizeof(buf));
         return fd.valid() && s->Send(buf, n, fd.get());
       }},
  };
}

TEST(ProducerDataSourceTest, HostileServiceMessagesDisconnectAndAreCounted) {
  for (const HostileCase& hc : HostileCases()) {
    SCOPED_TRACE(hc.what);
    RecordingHandler handler;
    Connected c;
    ASSERT_TRUE(c.Connect(&handler));
    ASSERT_TRUE(c.service->SendStart(StartMsg(1, "ds")));
    ASSERT_TRUE(handler.WaitFor(Kind::kStart, 1));
    std::unique_ptr<TraceWriterV2> writer =
        c.producer->NewTraceWriter(1, nullptr);
    ASSERT_TRUE(hc.send(c.service.get()));
    // The producer hangs up (the service sees it) and stops the instance.
    EXPECT_TRUE(c.service->WaitForHangUp());
    ASSERT_TRUE(handler.WaitFor(Kind::kStop, 1));
    c.producer->StopDataSources();  // joins the reader: on_disconnect ran
    EXPECT_EQ(c.disconnects.load(), 1);
    const ProducerStats stats = c.producer->stats();
    EXPECT_EQ(stats.service_protocol_violations, 1u);
    EXPECT_EQ(stats.instances_stopped_without_request, 1u);
    EXPECT_EQ(handler.count(Kind::kStop), 1u);
    EXPECT_EQ(handler.count(Kind::kFlush), 0u);
    EXPECT_FALSE(c.producer->connected());
    WritePackets(writer.get(), 10);
    EXPECT_EQ(writer->stats().packets_refused, 10u);
    writer.reset();
  }
}

// A shared-owned Producer lives while a writer does: dropping every other
// reference keeps the connection (the service sees no hang-up) until the
// writer goes; then the final loss report goes out and the socket closes.
TEST(ProducerDataSourceTest, WritersKeepASharedProducerAlive) {
  RecordingHandler handler;
  Connected c;
  ASSERT_TRUE(c.Connect(&handler));
  std::shared_ptr<Producer> shared(std::move(c.producer));
  std::unique_ptr<TraceWriterV2> writer = shared->NewTraceWriter();
  std::weak_ptr<Producer> weak = shared;
  shared.reset();
  ASSERT_FALSE(weak.expired());
  EXPECT_FALSE(c.service->hung_up());
  WritePackets(writer.get(), 3);
  EXPECT_EQ(writer->stats().packets_committed, 3u);
  writer.reset();  // the last reference
  EXPECT_TRUE(weak.expired());
  EXPECT_TRUE(c.service->WaitForHangUp());
  EXPECT_EQ(c.service->final_loss_reports(), 1u);
  TestRingReader reader(c.service->region()->view());
  std::vector<ReadChunk> chunks;
  reader.DrainAll(&chunks);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].fragments.size(), 3u);
}

// fork() while the reader runs with a started instance: the child's
// inherited Producer refuses registrations and is destroyed without
// touching the reader (the thread does not exist there; a join would hang
// or crash); the parent's reader goes on as if nothing happened.
TEST(ProducerDataSourceTest, ForkChildLeavesTheReaderAlone) {
  RecordingHandler handler;
  Connected c;
  ASSERT_TRUE(c.Connect(&handler));
  ASSERT_TRUE(c.service->SendStart(StartMsg(4, "ds")));
  ASSERT_TRUE(handler.WaitFor(Kind::kStart, 1));

  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int failures = 0;
    RecordingHandler child_handler;
    if (c.producer->RegisterDataSource("child", &child_handler).ok())
      failures |= 1;
    if (c.producer->connected())
      failures |= 2;
    if (!c.producer->stats().inert_after_fork)
      failures |= 4;
    c.producer->StopDataSources();  // a no-op in the child
    c.producer.reset();
    if (handler.count(Kind::kStop) != 0)
      failures |= 8;
    _exit(failures);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFEXITED(wstatus));
  EXPECT_EQ(WEXITSTATUS(wstatus), 0);

  // The parent: the child's exit did not hang up the connection (the child
  // never sent anything); stop and flush still work.
  EXPECT_FALSE(c.service->HasPendingMessage());
  ASSERT_TRUE(c.service->SendStop(4));
  ipc::Message msg;
  ASSERT_TRUE(c.service->Receive(&msg));
  EXPECT_EQ(msg.type, ipc::MessageType::kDataSourceStopped);
  EXPECT_EQ(msg.id, 4u);
  EXPECT_TRUE(c.producer->connected());
}

// A handler that keeps the ack of every requested stop (Perfetto's
// asynchronous stop), or acks some at once.
class DeferringHandler : public DataSourceHandler {
 public:
  void OnStart(const DataSourceInstanceConfig&) override {}
  void OnStop(uint32_t instance_id) override {
    std::lock_guard<std::mutex> lock(mutex);
    plain_stops.push_back(instance_id);
  }
  void OnFlush(uint32_t) override {}
  void OnStopRequested(uint32_t instance_id,
                       std::function<void()> ack) override {
    if (ack_at_once) {
      ack();
      ack();  // a second call does nothing
      return;
    }
    std::lock_guard<std::mutex> lock(mutex);
    acks.emplace_back(instance_id, std::move(ack));
  }
  // The kept ack of |instance_id| (empty if none).
  std::function<void()> TakeAck(uint32_t instance_id) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = acks.begin(); it != acks.end(); ++it) {
      if (it->first == instance_id) {
        std::function<void()> ack = std::move(it->second);
        acks.erase(it);
        return ack;
      }
    }
    return {};
  }

  bool ack_at_once = false;
  std::mutex mutex;
  std::vector<std::pair<uint32_t, std::function<void()>>> acks;
  std::vector<uint32_t> plain_stops;
};

// Receives the FlushAck of |flush_id| and requires that nothing came before
// it: the reader handles messages in order, so a FlushAck proves it is done
// with everything the service sent earlier.
void ExpectOnlyFlushAck(ScriptedService* service, uint32_t flush_id) {
  ASSERT_TRUE(service->SendFlush(flush_id));
  ipc::Message msg;
  ASSERT_TRUE(service->Receive(&msg));
  EXPECT_EQ(msg.type, ipc::MessageType::kFlushAck);
  EXPECT_EQ(msg.id, flush_id);
}

// A stop whose ack the handler keeps: DataSourceStopped goes out only when
// the ack is called, from another thread, while the reader goes on serving
// other messages meanwhile; a second call does nothing.
TEST(ProducerDataSourceTest, DeferredStopIsAckedWhenTheHandlerAcks) {
  DeferringHandler handler;
  Connected c;
  ASSERT_TRUE(c.Connect(&handler));
  ASSERT_TRUE(c.service->SendStart(StartMsg(5, "ds")));
  ASSERT_TRUE(c.service->SendStart(StartMsg(6, "ds")));
  ASSERT_TRUE(c.service->SendStop(5));
  ASSERT_TRUE(c.service->SendStop(6));
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyFlushAck(c.service.get(), 1));
  ProducerStats stats = c.producer->stats();
  EXPECT_EQ(stats.instances_stopped, 2u);
  EXPECT_EQ(stats.stops_deferred, 2u);
  EXPECT_EQ(stats.deferred_stops_acked, 0u);

  std::function<void()> ack6 = handler.TakeAck(6);
  ASSERT_TRUE(ack6);
  std::thread([ack6] { ack6(); }).join();
  ipc::Message msg;
  ASSERT_TRUE(c.service->Receive(&msg));
  EXPECT_EQ(msg.type, ipc::MessageType::kDataSourceStopped);
  EXPECT_EQ(msg.id, 6u);
  ack6();  // again: nothing
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyFlushAck(c.service.get(), 2));

  std::function<void()> ack5 = handler.TakeAck(5);
  ASSERT_TRUE(ack5);
  ack5();
  ASSERT_TRUE(c.service->Receive(&msg));
  EXPECT_EQ(msg.type, ipc::MessageType::kDataSourceStopped);
  EXPECT_EQ(msg.id, 5u);
  stats = c.producer->stats();
  EXPECT_EQ(stats.deferred_stops_acked, 2u);
  EXPECT_EQ(stats.service_protocol_violations, 0u);
  EXPECT_TRUE(handler.plain_stops.empty());
  c.service.reset();  // the final loss report fails at once
}

// An ack given before OnStopRequested returns is sent at once, as the
// default handler's: nothing is deferred.
TEST(ProducerDataSourceTest, AckInsideTheHandlerIsSentAtOnce) {
  DeferringHandler handler;
  handler.ack_at_once = true;
  Connected c;
  ASSERT_TRUE(c.Connect(&handler));
  ASSERT_TRUE(c.service->SendStart(StartMsg(8, "ds")));
  ASSERT_TRUE(c.service->SendStop(8));
  ipc::Message msg;
  ASSERT_TRUE(c.service->Receive(&msg));
  EXPECT_EQ(msg.type, ipc::MessageType::kDataSourceStopped);
  EXPECT_EQ(msg.id, 8u);
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyFlushAck(c.service.get(), 1));
  const ProducerStats stats = c.producer->stats();
  EXPECT_EQ(stats.stops_deferred, 0u);
  EXPECT_EQ(stats.instances_stopped, 1u);
  c.service.reset();  // the final loss report fails at once
}

// While a stop's ack is pending the id is neither started nor free: a
// second StopDataSource or a StartDataSource for it breaks the protocol.
TEST(ProducerDataSourceTest, StoppingInstanceCannotBeStoppedOrStartedAgain) {
  for (const bool restart : {false, true}) {
    SCOPED_TRACE(restart ? "start" : "stop");
    DeferringHandler handler;
    Connected c;
    ASSERT_TRUE(c.Connect(&handler));
    ASSERT_TRUE(c.service->SendStart(StartMsg(3, "ds")));
    ASSERT_TRUE(c.service->SendStop(3));
    ASSERT_TRUE(restart ? c.service->SendStart(StartMsg(3, "ds"))
                        : c.service->SendStop(3));
    ASSERT_TRUE(c.service->WaitForHangUp());
    c.producer->StopDataSources();
    EXPECT_EQ(c.producer->stats().service_protocol_violations, 1u);
    EXPECT_TRUE(handler.plain_stops.empty());
  }
}

// The connection ends while a stop waits for its ack: the instance gets no
// OnStop (it is the handler's), and the ack, called after the Producer is
// gone, does nothing.
TEST(ProducerDataSourceTest, AckAfterTheConnectionEndedDoesNothing) {
  DeferringHandler handler;
  Connected c;
  ASSERT_TRUE(c.Connect(&handler));
  ASSERT_TRUE(c.service->SendStart(StartMsg(1, "ds")));
  ASSERT_TRUE(c.service->SendStart(StartMsg(2, "ds")));
  ASSERT_TRUE(c.service->SendStop(2));
  ASSERT_NO_FATAL_FAILURE(ExpectOnlyFlushAck(c.service.get(), 1));
  c.service->Close();
  // on_disconnect runs last on the reader thread; StopDataSources() then
  // joins it.
  for (int i = 0; i < RecordingHandler::kWaitMs && c.disconnects.load() == 0;
       i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(c.disconnects.load(), 1);
  c.producer->StopDataSources();
  EXPECT_EQ(handler.plain_stops, std::vector<uint32_t>{1});
  const ProducerStats stats = c.producer->stats();
  EXPECT_EQ(stats.instances_stopped_without_request, 1u);
  EXPECT_EQ(stats.stops_deferred, 1u);
  std::function<void()> ack = handler.TakeAck(2);
  ASSERT_TRUE(ack);
  c.producer.reset();
  ack();
  EXPECT_EQ(c.disconnects.load(), 1);
}

}  // namespace
}  // namespace producer
}  // namespace ringtrace
