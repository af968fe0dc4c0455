/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// DataSource<T> against a real ringtraced: this process registers the test
// data sources through ringtrace::Tracing and records its own sessions
// with ringtrace::TracingSession (libprotobuf configs carrying the data
// source's own config as a DataSourceConfig extension). The traces are
// decoded with libprotobuf, the app's proto compiled with it too, and the
// interned names resolved per sequence as trace_processor does.

#include "ringtrace/data_source.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/perfetto/trace/trace.pb.h"
#include "ringtrace/intern_table.h"
#include "ringtrace/proto_field_reader.h"
#include "ringtrace/tracing.h"
#include "ringtrace/tracing_session.h"
#include "src/base/test/subprocess.h"
#include "src/base/test/temp_dir.h"
#include "src/base/test/trace_processor_stats.h"
#include "src/base/time.h"
#include "src/tracing/data_source/test/test_data_source.pb.h"
#include "src/tracing/data_source/test/test_data_source.rtzero.h"
#include "src/tracing/test/ringtraced_process.h"

namespace ringtrace {
namespace {

namespace pb = perfetto::protos;
namespace dst = ringtrace::data_source_test;
namespace rtt = ringtrace::data_source_test::rtzero;

constexpr int kTimeoutMs = 20000;
constexpr char kName[] = "ringtrace.test_source";
constexpr uint32_t kConfigField =
    rtt::TestSourceDataSourceConfig::kTestSourceConfigFieldNumber;
static_assert(kConfigField ==
              dst::TestSourceDataSourceConfig::kTestSourceConfigFieldNumber);

// What the test's instances saw and do, shared with the test body (the SDK
// creates the data source objects).
struct Script {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::string> setup_labels;
  std::vector<uint32_t> flush_ids;
  uint32_t starts = 0;
  uint32_t stops = 0;
  bool async_stop = false;  // OnStop keeps the stop's closure
  std::vector<std::function<void()>> stop_closures;

  void Reset() {
    std::lock_guard<std::mutex> lock(mutex);
    setup_labels.clear();
    flush_ids.clear();
    starts = stops = 0;
    async_stop = false;
    stop_closures.clear();
  }
  template <typename F>
  bool WaitFor(F done) {
    std::unique_lock<std::mutex> lock(mutex);
    return cv.wait_for(lock, std::chrono::milliseconds(kTimeoutMs), done);
  }
};
Script& script() {
  static Script* s = new Script();
  return *s;
}

struct TestIncrementalState {
  InternTable<std::string> names;
};
struct TestTraits : DefaultDataSourceTraits {
  using IncrementalStateType = TestIncrementalState;
};

class TestSource : public DataSource<TestSource, TestTraits> {
 public:
  void OnSetup(const SetupArgs& args) override {
    // The app's own config, read without libprotobuf.
    encoding::FieldReader reader(args.own_config);
    encoding::Field field;
    while (reader.Next(&field)) {
      if (field.id == rtt::TestSourceConfig::kLabelFieldNumber)
        label = std::string(field.as_string());
      if (field.id == rtt::TestSourceConfig::kPacketsPerCallFieldNumber)
        packets_per_call = field.as_uint32();
    }
    EXPECT_TRUE(reader.ok());
    EXPECT_EQ(args.config->name, kName);
    Script& s = script();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.setup_labels.push_back(label);
  }
  void OnStart(const StartArgs&) override {
    Script& s = script();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.starts++;
    s.cv.notify_all();
  }
  void OnStop(const StopArgs& args) override {
    Script& s = script();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.stops++;
    if (s.async_stop)
      s.stop_closures.push_back(args.HandleStopAsynchronously());
    s.cv.notify_all();
  }
  void OnFlush(const FlushArgs& args) override {
    Script& s = script();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.flush_ids.push_back(args.flush_id);
    s.cv.notify_all();
  }

  std::string label;
  uint32_t packets_per_call = 1;
};

// A second type without incremental state: its packets carry no sequence
// flags.
class PlainSource : public DataSource<PlainSource> {};
constexpr char kPlainName[] = "ringtrace.plain_source";

// One Trace() call: packets_per_call packets per instance, each a
// TestSourceEvent with |seq|, the instance's label and the interned |name|.
void WriteEvents(uint64_t seq, const std::string& name) {
  TestSource::Trace([&](TestSource::TraceContext ctx) {
    std::string label;
    uint32_t n = 0;
    {
      auto ds = ctx.GetDataSourceLocked();
      label = ds->label;
      n = ds->packets_per_call;
    }
    for (uint32_t i = 0; i < n; i++) {
      auto packet = ctx.NewTracePacket<rtt::TestSourcePacket>();
      packet->set_timestamp(base::BootTimeNs());
      bool is_new = false;
      const uint64_t iid =
          ctx.GetIncrementalState()->names.Intern(name, &is_new);
      if (is_new) {
        rtt::TestSourceInternedData interned(
            packet->set_interned_data().message());
        rtt::TestSourceName entry = interned.add_test_source_names();
        entry.set_iid(iid);
        entry.set_name(name);
      }
      rtt::TestSourceEvent event = packet->set_test_source_event();
      event.set_seq(seq);
      event.set_label(label);
      event.set_name_iid(iid);
      event.set_instance_index(ctx.instance_index());
    }
  });
}

// A TestSourceEvent read back, its name resolved on its sequence.
struct Event {
  uint64_t seq = 0;
  std::string label;
  std::string name;
  uint32_t instance_index = 0;
  uint32_t sequence_id = 0;
  uint32_t flags = 0;
};

// The TestSourceEvents of |trace_bytes|, in order. Interned names are
// resolved per sequence and forgotten at SEQ_INCREMENTAL_STATE_CLEARED;
// every event must resolve, and every sequence must begin with a clear.
std::vector<Event> Decode(const std::string& trace_bytes) {
  pb::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(trace_bytes));
  std::map<uint32_t, std::map<uint64_t, std::string>> names;
  std::vector<Event> out;
  for (const pb::TracePacket& p : trace.packet()) {
    if (!p.HasExtension(dst::TestSourcePacket::test_source_event))
      continue;
    const uint32_t seq_id = p.trusted_packet_sequence_id();
    if (p.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
      names[seq_id].clear();
    } else {
      EXPECT_TRUE(names.count(seq_id)) << "a sequence without a clear first";
      EXPECT_EQ(
          p.sequence_flags(),
          static_cast<uint32_t>(pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE));
    }
    for (const dst::TestSourceName& n : p.interned_data().GetRepeatedExtension(
             dst::TestSourceInternedData::test_source_names)) {
      names[seq_id][n.iid()] = n.name();
    }
    const dst::TestSourceEvent& e =
        p.GetExtension(dst::TestSourcePacket::test_source_event);
    Event event;
    event.seq = e.seq();
    event.label = e.label();
    if (e.has_name_iid()) {
      auto it = names[seq_id].find(e.name_iid());
      EXPECT_NE(it, names[seq_id].end()) << "iid " << e.name_iid();
      if (it != names[seq_id].end())
        event.name = it->second;
    }
    event.instance_index = e.instance_index();
    event.sequence_id = seq_id;
    event.flags = p.sequence_flags();
    out.push_back(event);
  }
  return out;
}

size_t CountLabel(const std::vector<Event>& events, const std::string& label) {
  size_t n = 0;
  for (const Event& e : events)
    n += e.label == label;
  return n;
}

pb::TraceConfig Config(const std::string& label,
                       uint32_t packets_per_call = 1) {
  pb::TraceConfig config;
  config.add_buffers()->set_size_kb(1024);
  pb::DataSourceConfig* ds = config.add_data_sources()->mutable_config();
  ds->set_name(kName);
  dst::TestSourceConfig* own =
      ds->MutableExtension(dst::TestSourceDataSourceConfig::test_source_config);
  own->set_label(label);
  own->set_packets_per_call(packets_per_call);
  return config;
}

class DataSourceTest : public test::EndToEndFixture {
 protected:
  void SetUp() override {
    script().Reset();
    consumer_socket_ = dir_ + "/consumer.sock";
    service_.reset(
        new base::Subprocess({bin_ + "/ringtraced", "--producer-socket",
                              socket_, "--consumer-socket", consumer_socket_}));
    const std::string error =
        test::StartRingtraced(service_.get(), socket_, kTimeoutMs);
    ASSERT_TRUE(error.empty()) << error;
    TracingOptions options;
    options.producer.socket_path = socket_;
    options.producer.name = "data_source_unittest";
    tracing_.reset(new Tracing(options));
    // The types are the process's: each test registers them again with its
    // own Tracing (the previous one is gone).
    DataSourceDescriptor descriptor;
    descriptor.name = kName;
    descriptor.config_field = kConfigField;
    base::Status status = TestSource::Register(tracing_.get(), descriptor);
    ASSERT_TRUE(status.ok()) << status.message();
    DataSourceDescriptor plain;
    plain.name = kPlainName;
    status = PlainSource::Register(tracing_.get(), plain);
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_TRUE(tracing_->Start().ok());
    ASSERT_NE(tracing_->WaitForConnection(0, kTimeoutMs), 0u);
  }

  void TearDown() override {
    tracing_.reset();
    if (service_ && service_->running()) {
      service_->Signal(SIGTERM);
      ASSERT_TRUE(service_->Wait(kTimeoutMs)) << service_->output();
      EXPECT_EQ(service_->exit_code(), 0) << service_->output();
    }
  }

  std::unique_ptr<TracingSession> StartSession(const pb::TraceConfig& config) {
    TracingSessionOptions options;
    options.consumer_socket_path = consumer_socket_;
    options.timeout_ms = kTimeoutMs;
    base::Status status;
    std::unique_ptr<TracingSession> session =
        TracingSession::Connect(options, &status);
    EXPECT_TRUE(session) << status.message();
    if (!session)
      return nullptr;
    status = session->Setup(config);
    EXPECT_TRUE(status.ok()) << status.message();
    status = session->StartBlocking();
    EXPECT_TRUE(status.ok()) << status.message();
    return session;
  }

  // Stops |session| and returns its trace.
  static std::string StopAndRead(TracingSession* session) {
    base::Status status = session->StopBlocking();
    EXPECT_TRUE(status.ok()) << status.message();
    std::string trace;
    status = session->ReadTraceBlocking(&trace);
    EXPECT_TRUE(status.ok()) << status.message();
    return trace;
  }

  // Waits until the producer's reader saw OnStop return without the stop
  // completed (the stop is deferred): a closure called from then on
  // completes the stop on its caller's thread.
  bool WaitStopDeferred() {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(kTimeoutMs);
    for (;;) {
      std::shared_ptr<Producer> producer = tracing_->GetProducer();
      if (producer && producer->stats().stops_deferred >= 1)
        return true;
      if (std::chrono::steady_clock::now() >= deadline)
        return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  std::string consumer_socket_;
  std::unique_ptr<base::Subprocess> service_;
  std::unique_ptr<Tracing> tracing_;
};

// Without a session Trace() runs nothing; with one, the instance gets its
// own config (an extension of DataSourceConfig the service does not know)
// and its packets, with interned names, reach the session's trace from
// every thread, each thread on a sequence of its own.
TEST_F(DataSourceTest, OwnConfigAndPacketsReachTheTrace) {
  bool ran = false;
  TestSource::Trace([&](TestSource::TraceContext) { ran = true; });
  EXPECT_FALSE(ran);
  const DataSourceStats before = TestSource::stats();

  std::unique_ptr<TracingSession> session = StartSession(Config("alpha", 2));
  ASSERT_TRUE(session);
  ASSERT_TRUE(script().WaitFor([] { return script().starts == 1; }));
  EXPECT_EQ(script().setup_labels, std::vector<std::string>{"alpha"});
  WriteEvents(1, "main");
  std::thread([] { WriteEvents(2, "worker"); }).join();
  WriteEvents(3, "main");
  const std::vector<Event> events = Decode(StopAndRead(session.get()));
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(CountLabel(events, "alpha"), 6u);
  std::map<std::string, uint32_t> sequence_of;
  for (const Event& e : events) {
    EXPECT_EQ(e.name, e.seq == 2 ? "worker" : "main");
    sequence_of.emplace(e.name, e.sequence_id);
    EXPECT_EQ(sequence_of[e.name], e.sequence_id);
  }
  EXPECT_NE(sequence_of["main"], sequence_of["worker"]);
  // One clear per sequence: the first packet of each.
  size_t clears = 0;
  for (const Event& e : events)
    clears += (e.flags & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) != 0;
  EXPECT_EQ(clears, 2u);

  const DataSourceStats after = TestSource::stats();
  EXPECT_EQ(after.instances_started - before.instances_started, 1u);
  EXPECT_EQ(after.instances_stopped - before.instances_stopped, 1u);
  EXPECT_EQ(after.trace_calls_without_writer,
            before.trace_calls_without_writer);
  EXPECT_EQ(after.config_errors, before.config_errors);
  ran = false;
  TestSource::Trace([&](TestSource::TraceContext) { ran = true; });
  EXPECT_FALSE(ran) << "the stopped instance still traces";
}

// Two sessions at once: each instance has its own config and buffer, and
// each trace holds exactly its own packets; stopping one leaves the other
// running.
TEST_F(DataSourceTest, TwoSessionsEachGetTheirOwnPackets) {
  std::unique_ptr<TracingSession> first = StartSession(Config("first"));
  ASSERT_TRUE(first);
  std::unique_ptr<TracingSession> second = StartSession(Config("second", 3));
  ASSERT_TRUE(second);
  ASSERT_TRUE(script().WaitFor([] { return script().starts == 2; }));
  WriteEvents(1, "both");
  const std::vector<Event> first_events = Decode(StopAndRead(first.get()));
  WriteEvents(2, "second only");
  const std::vector<Event> second_events = Decode(StopAndRead(second.get()));

  ASSERT_EQ(first_events.size(), 1u);
  EXPECT_EQ(first_events[0].label, "first");
  EXPECT_EQ(first_events[0].seq, 1u);
  ASSERT_EQ(second_events.size(), 6u);
  EXPECT_EQ(CountLabel(second_events, "second"), 6u);
  EXPECT_EQ(second_events[0].seq, 1u);
  EXPECT_EQ(second_events[5].seq, 2u);
  EXPECT_EQ(second_events[5].name, "second only");
  EXPECT_NE(first_events[0].instance_index, second_events[0].instance_index);
}

// The stop waits for the data source: after OnStop returned, Trace() still
// writes for the instance until the closure of HandleStopAsynchronously()
// is called, and those packets are in the trace (the service waited for
// the deferred DataSourceStopped).
TEST_F(DataSourceTest, AsyncStopWaitsForTheClosure) {
  {
    std::lock_guard<std::mutex> lock(script().mutex);
    script().async_stop = true;
  }
  std::unique_ptr<TracingSession> session = StartSession(Config("async"));
  ASSERT_TRUE(session);
  ASSERT_TRUE(script().WaitFor([] { return script().starts == 1; }));
  WriteEvents(1, "before");
  std::string trace;
  std::thread stopper([&] { trace = StopAndRead(session.get()); });
  ASSERT_TRUE(WaitStopDeferred());
  WriteEvents(2, "after OnStop");
  std::function<void()> complete;
  {
    std::lock_guard<std::mutex> lock(script().mutex);
    ASSERT_EQ(script().stop_closures.size(), 1u);
    complete = script().stop_closures[0];
  }
  std::thread(complete).join();
  stopper.join();
  bool ran = false;
  TestSource::Trace([&](TestSource::TraceContext) { ran = true; });
  EXPECT_FALSE(ran);
  const std::vector<Event> events = Decode(trace);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].name, "after OnStop");
  const ProducerStats stats = tracing_->GetProducer()->stats();
  EXPECT_EQ(stats.stops_deferred, 1u);
  EXPECT_EQ(stats.deferred_stops_acked, 1u);
  complete();  // again: nothing
}

// A stop that is never completed is bounded by the session's
// data_source_stop_timeout_ms and counted in its trace; the closure called
// later completes the instance (its slot is free again).
TEST_F(DataSourceTest, AsyncStopNeverCompletedTimesOutAndIsCounted) {
  {
    std::lock_guard<std::mutex> lock(script().mutex);
    script().async_stop = true;
  }
  pb::TraceConfig config = Config("late");
  config.set_data_source_stop_timeout_ms(200);
  std::unique_ptr<TracingSession> session = StartSession(config);
  ASSERT_TRUE(session);
  ASSERT_TRUE(script().WaitFor([] { return script().starts == 1; }));
  WriteEvents(1, "only");
  const std::string trace = StopAndRead(session.get());
  pb::Trace parsed;
  ASSERT_TRUE(parsed.ParseFromString(trace));
  uint64_t timeouts = 0;
  for (const pb::TracePacket& p : parsed.packet()) {
    if (p.has_trace_stats())
      timeouts += p.trace_stats().ringtrace_data_source_stop_timeouts();
  }
  EXPECT_EQ(timeouts, 1u);
  EXPECT_EQ(Decode(trace).size(), 1u);
  // Still running on the app's side until completed.
  bool ran = false;
  TestSource::Trace([&](TestSource::TraceContext) { ran = true; });
  EXPECT_TRUE(ran);
  const uint64_t stopped = TestSource::stats().instances_stopped;
  std::function<void()> complete;
  {
    std::lock_guard<std::mutex> lock(script().mutex);
    ASSERT_EQ(script().stop_closures.size(), 1u);
    complete = script().stop_closures[0];
  }
  complete();
  EXPECT_EQ(TestSource::stats().instances_stopped, stopped + 1);
  ran = false;
  TestSource::Trace([&](TestSource::TraceContext) { ran = true; });
  EXPECT_FALSE(ran);
}

// The stop closure called from inside a Trace() lambda of the instance
// (Perfetto's "write a last packet, then complete the stop" pattern): the
// stop completes when the lambda returned, not inside it.
TEST_F(DataSourceTest, StopCompletedInsideTraceCompletesAfterTheLambda) {
  {
    std::lock_guard<std::mutex> lock(script().mutex);
    script().async_stop = true;
  }
  std::unique_ptr<TracingSession> session = StartSession(Config("inside"));
  ASSERT_TRUE(session);
  ASSERT_TRUE(script().WaitFor([] { return script().starts == 1; }));
  std::string trace;
  std::thread stopper([&] { trace = StopAndRead(session.get()); });
  ASSERT_TRUE(WaitStopDeferred());
  std::function<void()> complete;
  {
    std::lock_guard<std::mutex> lock(script().mutex);
    ASSERT_EQ(script().stop_closures.size(), 1u);
    complete = script().stop_closures[0];
  }
  const uint64_t stopped = TestSource::stats().instances_stopped;
  uint64_t stopped_inside = 0;
  TestSource::Trace([&](TestSource::TraceContext ctx) {
    auto packet = ctx.NewTracePacket<rtt::TestSourcePacket>();
    packet->set_test_source_event().set_label("last");
    packet.Finish();
    complete();
    stopped_inside = TestSource::stats().instances_stopped;
  });
  EXPECT_EQ(stopped_inside, stopped);
  EXPECT_EQ(TestSource::stats().instances_stopped, stopped + 1);
  stopper.join();
  EXPECT_EQ(CountLabel(Decode(trace), "last"), 1u);
}

// The service's flush reaches OnFlush of every running instance; the app's
// own flush (TraceContext::Flush()) signals the service.
TEST_F(DataSourceTest, FlushesFromTheServiceAndFromTheApp) {
  std::unique_ptr<TracingSession> a = StartSession(Config("a"));
  std::unique_ptr<TracingSession> b = StartSession(Config("b"));
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(script().WaitFor([] { return script().starts == 2; }));
  ASSERT_TRUE(a->FlushBlocking().ok());
  ASSERT_TRUE(script().WaitFor([] { return script().flush_ids.size() >= 1; }));
  {
    std::lock_guard<std::mutex> lock(script().mutex);
    EXPECT_EQ(script().flush_ids.size(), 2u) << "one per running instance";
  }
  // Each instance's writer on this thread published a packet the service
  // was not told about yet (it stays in the writer's cached chunk): the
  // app's flush notifies once per writer; a second flush has nothing new.
  WriteEvents(1, "x");
  auto notifications = [this] {
    const ProducerStats s = tracing_->GetProducer()->stats();
    return s.drain_requests_sent + s.drain_requests_coalesced +
           s.drain_requests_dropped;
  };
  const uint64_t before = notifications();
  TestSource::Trace([](TestSource::TraceContext ctx) { ctx.Flush(); });
  EXPECT_EQ(notifications(), before + 2) << "one per instance's writer";
  TestSource::Trace([](TestSource::TraceContext ctx) { ctx.Flush(); });
  EXPECT_EQ(notifications(), before + 2);
  EXPECT_EQ(Decode(StopAndRead(a.get())).size(), 1u);
  EXPECT_EQ(Decode(StopAndRead(b.get())).size(), 1u);
}

// The clear period resets each thread's incremental state: the next packet
// says SEQ_INCREMENTAL_STATE_CLEARED and defines its names again.
TEST_F(DataSourceTest, IncrementalStateIsResetByTheClearPeriod) {
  pb::TraceConfig config = Config("clear");
  config.mutable_incremental_state_config()->set_clear_period_ms(100);
  std::unique_ptr<TracingSession> session = StartSession(config);
  ASSERT_TRUE(session);
  ASSERT_TRUE(script().WaitFor([] { return script().starts == 1; }));
  const uint64_t resets = TestSource::stats().incremental_state_resets;
  WriteEvents(1, "n");
  // Past the period (a wait, not a timing assertion).
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  WriteEvents(2, "n");
  const std::vector<Event> events = Decode(StopAndRead(session.get()));
  ASSERT_EQ(events.size(), 2u);
  const uint32_t cleared = pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED;
  EXPECT_EQ(events[0].flags, cleared);
  EXPECT_EQ(events[1].flags, cleared);
  EXPECT_EQ(events[1].name, "n");  // defined again, resolved
  EXPECT_EQ(events[0].sequence_id, events[1].sequence_id);
  EXPECT_GE(TestSource::stats().incremental_state_resets, resets + 1);
}

// A loss resets the thread's incremental state (the lost packet may have
// defined what later ones refer to): the service is killed, the instance
// goes on (its stop is asynchronous and not completed), its writer refuses
// the next packet (a counted loss), and the Trace() after that starts with
// an empty intern table.
TEST_F(DataSourceTest, IncrementalStateIsResetAfterALoss) {
  {
    std::lock_guard<std::mutex> lock(script().mutex);
    script().async_stop = true;
  }
  std::unique_ptr<TracingSession> session = StartSession(Config("loss"));
  ASSERT_TRUE(session);
  ASSERT_TRUE(script().WaitFor([] { return script().starts == 1; }));
  auto intern_new = [] {
    bool is_new = false;
    TestSource::Trace([&](TestSource::TraceContext ctx) {
      auto packet = ctx.NewTracePacket<rtt::TestSourcePacket>();
      ctx.GetIncrementalState()->names.Intern("n", &is_new);
      packet->set_test_source_event().set_seq(1);
    });
    return is_new;
  };
  EXPECT_TRUE(intern_new());
  EXPECT_FALSE(intern_new());
  const uint64_t resets = TestSource::stats().incremental_state_resets;
  service_->Signal(SIGKILL);
  ASSERT_TRUE(service_->Wait(kTimeoutMs));
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
  while (tracing_->stats().disconnects == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(tracing_->stats().disconnects, 1u);
  // The instance got OnStop (the connection ended) and keeps running.
  ASSERT_TRUE(script().WaitFor([] { return script().stops == 1; }));
  EXPECT_FALSE(intern_new()) << "the loss is not seen before this packet";
  EXPECT_TRUE(intern_new()) << "reset after the refused packet";
  EXPECT_EQ(TestSource::stats().incremental_state_resets, resets + 1);
  std::function<void()> complete;
  {
    std::lock_guard<std::mutex> lock(script().mutex);
    ASSERT_EQ(script().stop_closures.size(), 1u);
    complete = script().stop_closures[0];
  }
  complete();
}

// Nested Trace() of the same type is refused and counted; another type
// nests. A type without incremental state writes no sequence flags.
TEST_F(DataSourceTest, NestingAndTypesWithoutIncrementalState) {
  pb::TraceConfig config = Config("nest");
  config.add_data_sources()->mutable_config()->set_name(kPlainName);
  const uint64_t plain_started = PlainSource::stats().instances_started;
  std::unique_ptr<TracingSession> session = StartSession(config);
  ASSERT_TRUE(session);
  ASSERT_TRUE(script().WaitFor([] { return script().starts == 1; }));
  // The other data source's start may come a little later.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
  while (PlainSource::stats().instances_started == plain_started &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(PlainSource::stats().instances_started, plain_started + 1);
  const uint64_t nested = TestSource::stats().nested_trace_calls;
  bool inner_ran = false;
  TestSource::Trace([&](TestSource::TraceContext) {
    TestSource::Trace([&](TestSource::TraceContext) { inner_ran = true; });
    PlainSource::Trace([](PlainSource::TraceContext ctx) {
      auto packet = ctx.NewTracePacket<rtt::TestSourcePacket>();
      packet->set_test_source_event().set_label("plain");
    });
  });
  EXPECT_FALSE(inner_ran);
  EXPECT_EQ(TestSource::stats().nested_trace_calls, nested + 1);
  pb::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(StopAndRead(session.get())));
  size_t plain = 0;
  for (const pb::TracePacket& p : trace.packet()) {
    if (!p.HasExtension(dst::TestSourcePacket::test_source_event))
      continue;
    EXPECT_EQ(p.GetExtension(dst::TestSourcePacket::test_source_event).label(),
              "plain");
    EXPECT_FALSE(p.has_sequence_flags());
    plain++;
  }
  EXPECT_EQ(plain, 1u);
}

// The trace loads in trace_processor with no health issue: the app's
// packet extension and interned-data extension are skipped silently.
TEST_F(DataSourceTest, TraceProcessorImportsTheTraceWithoutHealthIssues) {
  const std::string tp = test::TraceProcessorShellPath();
  if (tp.empty())
    GTEST_SKIP() << "no trace_processor_shell: set TRACE_PROCESSOR_SHELL";
  std::unique_ptr<TracingSession> session = StartSession(Config("tp", 2));
  ASSERT_TRUE(session);
  ASSERT_TRUE(script().WaitFor([] { return script().starts == 1; }));
  for (uint64_t i = 0; i < 20; i++)
    WriteEvents(i, "name" + std::to_string(i % 3));
  const std::string trace = StopAndRead(session.get());
  ASSERT_EQ(Decode(trace).size(), 40u);
  const std::string file = dir_ + "/custom.pftrace";
  {
    std::ofstream out(file, std::ios::binary);
    out << trace;
  }
  std::vector<test::TraceProcessorStat> stats;
  std::string error;
  ASSERT_TRUE(test::QueryNonZeroStats(tp, file, dir_, &stats, &error)) << error;
  for (const test::TraceProcessorStat& stat : stats) {
    EXPECT_TRUE(stat.severity != "error" && stat.severity != "data_loss")
        << test::Describe(stat);
  }
}

// Register() checks the descriptor before the type takes it; the same
// type registers again with another Tracing only under the same one.
class RegisteredSource : public DataSource<RegisteredSource> {};

TEST(DataSourceRegistrationTest, RefusesBadDescriptorsAndKeepsTheFirst) {
  TracingOptions options;
  options.producer.socket_path = "/nonexistent/ringtrace.sock";  // no Start()
  Tracing first(options);
  DataSourceDescriptor d;
  d.name = "";
  EXPECT_FALSE(RegisteredSource::Register(&first, d).ok());
  d.name = "ringtrace.registered";
  for (uint32_t field : {1u, 99u, 19000u, 19999u, 1u << 29}) {
    d.config_field = field;
    EXPECT_FALSE(RegisteredSource::Register(&first, d).ok()) << field;
  }
  d.config_field = 10000;
  base::Status status = RegisteredSource::Register(&first, d);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_FALSE(RegisteredSource::Register(&first, d).ok())
      << "the name twice on one Tracing";
  Tracing second(options);
  status = RegisteredSource::Register(&second, d);
  EXPECT_TRUE(status.ok()) << status.message();
  DataSourceDescriptor other = d;
  other.config_field = 10001;
  Tracing third(options);
  EXPECT_FALSE(RegisteredSource::Register(&third, other).ok());
  other = d;
  other.name = "ringtrace.renamed";
  EXPECT_FALSE(RegisteredSource::Register(&third, other).ok());
  EXPECT_EQ(RegisteredSource::stats().instances_started, 0u);
}

TEST(InternTableTest, AssignsIidsFromOneAndSaysWhichAreNew) {
  InternTable<std::string> table;
  bool is_new = false;
  EXPECT_EQ(table.Intern("a", &is_new), 1u);
  EXPECT_TRUE(is_new);
  EXPECT_EQ(table.Intern("b", &is_new), 2u);
  EXPECT_TRUE(is_new);
  EXPECT_EQ(table.Intern("a", &is_new), 1u);
  EXPECT_FALSE(is_new);
  EXPECT_EQ(table.size(), 2u);
  table.Clear();
  EXPECT_EQ(table.Intern("a", &is_new), 3u) << "no iid is reused";
  EXPECT_TRUE(is_new);
}

}  // namespace
}  // namespace ringtrace
