/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The C API driven as a C program drives it: argument checks and misuse
// without a crash, the packets it encodes (into a bound writer, decoded with
// libprotobuf), and then real sessions of a ringtraced daemon recording this
// process, the C example app (a C program) and the Python package, each
// trace decoded and, with $TRACE_PROCESSOR_SHELL, loaded into
// trace_processor with no health issue; and the in-process backend (no
// daemon) from C and from Python, and both backends at once.

#include "ringtrace/c/ringtrace.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"
#include "ringtrace/track_event.h"
#include "src/base/scoped_fd.h"
#include "src/base/test/subprocess.h"
#include "src/base/test/temp_dir.h"
#include "src/base/test/trace_processor_stats.h"
#include "src/base/time.h"
#include "src/tracing/consumer/consumer_client.h"
#include "src/tracing/core/encoding/test/packet_capture.h"
#include "src/tracing/test/ringtraced_process.h"
#include "src/tracing/track_event/test/sequence_reader.h"

extern "C" int ringtrace_header_check_c89(void);
extern "C" int ringtrace_header_check_c99(void);

namespace ringtrace {
namespace {

namespace pb = perfetto::protos;
using base::Subprocess;

// Deadlines against hangs on a loaded machine, not timing assertions.
constexpr int kTimeoutMs = 120000;

ringtrace_category* Register(const char* name,
                             const char* description = nullptr,
                             std::vector<const char*> tags = {}) {
  ringtrace_category* category = nullptr;
  EXPECT_EQ(ringtrace_category_register(name, description, tags.data(),
                                        tags.size(), &category),
            RINGTRACE_OK)
      << ringtrace_last_error();
  return category;
}

ringtrace_arg IntArg(const char* name, int64_t v) {
  ringtrace_arg a;
  a.name = name;
  a.type = RINGTRACE_ARG_INT64;
  a.value.int64_value = v;
  return a;
}

TEST(CApiTest, HeaderCompilesAsC89AndC99) {
  EXPECT_EQ(ringtrace_header_check_c89(), 0);
  EXPECT_EQ(ringtrace_header_check_c99(), 0);
}

TEST(CApiTest, MisuseIsAnErrorWithAMessage) {
  EXPECT_EQ(ringtrace_abi_version(), uint32_t{RINGTRACE_C_ABI_VERSION});
  EXPECT_EQ(ringtrace_shutdown(), RINGTRACE_ERR_NOT_INITIALIZED);
  EXPECT_STREQ(ringtrace_last_error(), "not initialized");
  EXPECT_EQ(ringtrace_is_connected(), 0);
  EXPECT_EQ(ringtrace_init_options_set_defaults(nullptr, 0, 0),
            RINGTRACE_ERR_INVALID_ARGUMENT);

  ringtrace_init_options options;
  ringtrace_init_options_default(&options);
  options.abi_version = RINGTRACE_C_ABI_VERSION + 1;
  EXPECT_EQ(ringtrace_init(&options), RINGTRACE_ERR_ABI_MISMATCH);
  EXPECT_NE(std::string(ringtrace_last_error()).find("ABI version 2"),
            std::string::npos)
      << ringtrace_last_error();
  ringtrace_init_options_default(&options);
  options.struct_size -= 4;
  EXPECT_EQ(ringtrace_init(&options), RINGTRACE_ERR_ABI_MISMATCH);
  ringtrace_init_options_default(&options);
  options.backends = 0;
  EXPECT_EQ(ringtrace_init(&options), RINGTRACE_ERR_INVALID_ARGUMENT);
  options.backends = RINGTRACE_BACKEND_SYSTEM | 4;
  EXPECT_EQ(ringtrace_init(&options), RINGTRACE_ERR_UNSUPPORTED);
  ringtrace_init_options_default(&options);
  options.producer_name = "";
  EXPECT_EQ(ringtrace_init(&options), RINGTRACE_ERR_INVALID_ARGUMENT);
  options.producer_name = "tab\there";
  EXPECT_EQ(ringtrace_init(&options), RINGTRACE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ringtrace_shutdown(), RINGTRACE_ERR_NOT_INITIALIZED);

  ringtrace_category* c = nullptr;
  EXPECT_EQ(ringtrace_category_register("capi.x", nullptr, nullptr, 0, nullptr),
            RINGTRACE_ERR_INVALID_ARGUMENT);
  const std::string long_name(RINGTRACE_MAX_NAME_LENGTH + 1, 'a');
  for (const char* bad : {static_cast<const char*>(nullptr), "", "capi.*",
                          "capi\x01", long_name.c_str()}) {
    EXPECT_EQ(ringtrace_category_register(bad, nullptr, nullptr, 0, &c),
              RINGTRACE_ERR_INVALID_ARGUMENT)
        << (bad ? bad : "null");
    EXPECT_EQ(c, nullptr);
  }
  const char* tags5[] = {"a", "b", "c", "d", "e"};
  EXPECT_EQ(ringtrace_category_register("capi.x", nullptr, tags5, 5, &c),
            RINGTRACE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ringtrace_category_register("capi.x", nullptr, nullptr, 1, &c),
            RINGTRACE_ERR_INVALID_ARGUMENT);
  const char* bad_tag[] = {"debug*"};
  EXPECT_EQ(ringtrace_category_register("capi.x", nullptr, bad_tag, 1, &c),
            RINGTRACE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(
      ringtrace_category_register("capi.x", "bad\ndescription", nullptr, 0, &c),
      RINGTRACE_ERR_INVALID_ARGUMENT);

  // Events before init, on a NULL or disabled category: no crash.
  ringtrace_category* off = Register("capi.misuse");
  ASSERT_NE(off, nullptr);
  EXPECT_EQ(Register("capi.misuse"), off);  // the same handle again
  EXPECT_EQ(ringtrace_category_enabled(off), 0);
  EXPECT_FALSE(RINGTRACE_CATEGORY_ENABLED(off));
  EXPECT_EQ(ringtrace_slice_begin(off, "S", 0, nullptr, 0), RINGTRACE_OK);
  EXPECT_EQ(ringtrace_slice_end(off), RINGTRACE_OK);
  EXPECT_EQ(ringtrace_counter_double(off, "c", 0, 1.0), RINGTRACE_OK);
  EXPECT_EQ(ringtrace_instant(nullptr, "I", 0, nullptr, 0),
            RINGTRACE_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(ringtrace_last_error(), "null category");
  EXPECT_EQ(ringtrace_flush(), RINGTRACE_OK);
}

// The packets of |capture|, interned strings resolved; the descriptors
// dropped.
std::vector<pb::TrackEvent> Events(encoding::PacketCapture* capture,
                                   std::map<uint64_t, std::string>* tracks) {
  uint64_t lost = 0;
  std::vector<pb::TracePacket> packets;
  for (const std::string& grouped : capture->Drain(&lost)) {
    std::string flat;
    EXPECT_TRUE(encoding::PacketCapture::Ungroup(grouped, &flat));
    packets.emplace_back();
    EXPECT_TRUE(packets.back().ParseFromString(flat));
  }
  EXPECT_EQ(lost, 0u);
  track_event::ResolveIncrementalState(&packets);
  std::vector<pb::TrackEvent> events;
  for (const pb::TracePacket& p : packets) {
    if (p.has_track_descriptor())
      (*tracks)[p.track_descriptor().uuid()] = p.track_descriptor().name();
    if (p.has_track_event())
      events.push_back(p.track_event());
  }
  return events;
}

// Enabled through the static spec (bit 0) into a bound writer: what each
// function encodes, with every argument type and both name modes.
TEST(CApiTest, EncodesSlicesInstantsCountersAndEveryArgumentType) {
  ringtrace_category* c = Register("capi.encode", "Encoding test", {"t1"});
  ringtrace_category* other = Register("capi.encode.off");
  encoding::PacketCapture capture;
  {
    track_event::ScopedThreadWriter bind(capture.writer());
    ASSERT_EQ(track_event::SetCategoriesEnabled("capi.encode"), 1u);
    EXPECT_TRUE(RINGTRACE_CATEGORY_ENABLED(c));
    EXPECT_EQ(ringtrace_category_enabled(c), 1);
    EXPECT_FALSE(RINGTRACE_CATEGORY_ENABLED(other));
    ringtrace_arg args[5];
    args[0] = IntArg("i", -5);
    args[1].name = "u";
    args[1].type = RINGTRACE_ARG_UINT64;
    args[1].value.uint64_value = UINT64_MAX;
    args[2].name = "d";
    args[2].type = RINGTRACE_ARG_DOUBLE;
    args[2].value.double_value = 2.5;
    args[3].name = "b";
    args[3].type = RINGTRACE_ARG_BOOL;
    args[3].value.bool_value = 7;
    args[4].name = "s";
    args[4].type = RINGTRACE_ARG_STRING;
    args[4].value.string_value = "text";
    EXPECT_EQ(
        ringtrace_slice_begin(c, "Outer", RINGTRACE_STATIC_NAMES, args, 5),
        RINGTRACE_OK);
    char dynamic[16] = "Inner1";  // interned by content: changed below
    ringtrace_arg name_arg = IntArg(dynamic, 1);
    EXPECT_EQ(ringtrace_slice_begin(c, dynamic, 0, &name_arg, 1), RINGTRACE_OK);
    EXPECT_EQ(ringtrace_slice_end(c), RINGTRACE_OK);
    dynamic[5] = '2';
    EXPECT_EQ(ringtrace_instant(c, dynamic, 0, &name_arg, 1), RINGTRACE_OK);
    args[4].value.string_value = nullptr;
    RINGTRACE_INSTANT(c, "Null", &args[4], 1);
    RINGTRACE_SLICE_END(c);
    RINGTRACE_COUNTER_INT64(c, "ints", -3);
    RINGTRACE_COUNTER_DOUBLE(c, "doubles", 0.25);
    EXPECT_EQ(ringtrace_counter_int64(c, dynamic, 0, 9), RINGTRACE_OK);
    RINGTRACE_INSTANT(other, "Off", nullptr, 0);
    // Refused when enabled: nothing written.
    ringtrace_arg bad = IntArg("x", 1);
    bad.type = 99;
    EXPECT_EQ(ringtrace_instant(c, "Bad", 0, &bad, 1),
              RINGTRACE_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(ringtrace_last_error()).find("unknown type 99"),
              std::string::npos);
    bad.type = RINGTRACE_ARG_INT64;
    bad.name = nullptr;
    EXPECT_EQ(ringtrace_instant(c, "Bad", 0, &bad, 1),
              RINGTRACE_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(ringtrace_instant(c, "Bad", 0, nullptr, 1),
              RINGTRACE_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(ringtrace_instant(c, "Bad", 0, args, RINGTRACE_MAX_ARGS + 1),
              RINGTRACE_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(ringtrace_instant(c, "Bad", 4, nullptr, 0),
              RINGTRACE_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(ringtrace_instant(c, nullptr, 0, nullptr, 0),
              RINGTRACE_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(ringtrace_counter_int64(c, nullptr, 0, 1),
              RINGTRACE_ERR_INVALID_ARGUMENT);
    track_event::SetCategoriesEnabled("-capi.encode");
    EXPECT_FALSE(RINGTRACE_CATEGORY_ENABLED(c));
    RINGTRACE_INSTANT(c, "AfterDisable", nullptr, 0);
  }
  std::map<uint64_t, std::string> tracks;
  const std::vector<pb::TrackEvent> events = Events(&capture, &tracks);
  ASSERT_EQ(events.size(), 9u);
  using T = pb::TrackEvent;
  const T& outer = events[0];
  EXPECT_EQ(outer.type(), T::TYPE_SLICE_BEGIN);
  EXPECT_EQ(outer.name(), "Outer");
  ASSERT_EQ(outer.categories_size(), 1);
  EXPECT_EQ(outer.categories(0), "capi.encode");
  ASSERT_EQ(outer.debug_annotations_size(), 5);
  EXPECT_EQ(outer.debug_annotations(0).name(), "i");
  EXPECT_EQ(outer.debug_annotations(0).int_value(), -5);
  EXPECT_EQ(outer.debug_annotations(1).name(), "u");
  EXPECT_EQ(outer.debug_annotations(1).uint_value(), UINT64_MAX);
  EXPECT_EQ(outer.debug_annotations(2).double_value(), 2.5);
  EXPECT_TRUE(outer.debug_annotations(3).bool_value());
  EXPECT_EQ(outer.debug_annotations(4).string_value(), "text");
  EXPECT_EQ(events[1].name(), "Inner1");
  EXPECT_EQ(events[1].debug_annotations(0).name(), "Inner1");
  EXPECT_EQ(events[2].type(), T::TYPE_SLICE_END);
  EXPECT_EQ(events[3].type(), T::TYPE_INSTANT);
  EXPECT_EQ(events[3].name(), "Inner2");  // the new content, not the address
  EXPECT_EQ(events[3].debug_annotations(0).name(), "Inner2");
  EXPECT_EQ(events[4].name(), "Null");
  EXPECT_EQ(events[4].debug_annotations(0).string_value(), "(null)");
  EXPECT_EQ(events[5].type(), T::TYPE_SLICE_END);
  EXPECT_EQ(events[6].type(), T::TYPE_COUNTER);
  EXPECT_EQ(events[6].counter_value(), -3);
  EXPECT_EQ(tracks[events[6].track_uuid()], "ints");
  EXPECT_EQ(events[7].double_counter_value(), 0.25);
  EXPECT_EQ(tracks[events[7].track_uuid()], "doubles");
  EXPECT_EQ(events[8].counter_value(), 9);
  EXPECT_EQ(tracks[events[8].track_uuid()], "Inner2");
}

// --- Sessions of a real ringtraced. -----------------------------------------

// One trace file, decoded: every sequence's incremental state resolved.
struct DecodedTrace {
  struct Event {
    int32_t pid = 0;
    pb::TrackEvent event;
  };
  std::vector<Event> events;
  std::map<uint64_t, std::string> tracks;  // uuid -> name
  std::set<std::string> producer_names;
  // The service's own events (sequence 1, no incremental state): e.g. a
  // producer that ended without its final loss report.
  std::vector<std::string> service_events;

  std::vector<const pb::TrackEvent*> Named(const std::string& name) const {
    std::vector<const pb::TrackEvent*> out;
    for (const Event& e : events) {
      if (e.event.name() == name)
        out.push_back(&e.event);
    }
    return out;
  }
  size_t CountOfType(pb::TrackEvent::Type type) const {
    size_t n = 0;
    for (const Event& e : events)
      n += e.event.type() == type;
    return n;
  }
};

// The trusted_packet_sequence_id of the service's own packets.
constexpr uint32_t kServiceSequenceId = 1;

DecodedTrace Decode(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  pb::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(bytes.str())) << path;
  std::map<uint32_t, std::vector<pb::TracePacket>> sequences;
  for (const pb::TracePacket& p : trace.packet())
    sequences[p.trusted_packet_sequence_id()].push_back(p);
  DecodedTrace out;
  for (auto& [id, packets] : sequences) {
    if (id == kServiceSequenceId) {
      for (const pb::TracePacket& p : packets) {
        if (p.has_track_event())
          out.service_events.push_back(p.track_event().name());
      }
      continue;
    }
    track_event::ResolveIncrementalState(&packets);
    for (const pb::TracePacket& p : packets) {
      if (p.has_track_descriptor()) {
        out.tracks[p.track_descriptor().uuid()] = p.track_descriptor().name();
        if (p.track_descriptor().has_process())
          out.producer_names.insert(
              p.track_descriptor().process().process_name());
      }
      if (p.has_track_event())
        out.events.push_back({p.trusted_pid(), p.track_event()});
    }
  }
  return out;
}

// Loads |trace| into trace_processor_shell, if there is one: no stat of
// severity error or data_loss, and the number of slices named |name| (-1
// without trace_processor). |dir| holds the query file.
int64_t CountSlicesInTraceProcessor(const std::string& trace,
                                    const std::string& dir,
                                    const std::string& name) {
  const std::string tp = test::TraceProcessorShellPath();
  if (tp.empty()) {
    printf("$TRACE_PROCESSOR_SHELL not set: trace_processor not run\n");
    return -1;
  }
  std::vector<test::TraceProcessorStat> stats;
  std::string error;
  EXPECT_TRUE(test::QueryNonZeroStats(tp, trace, dir, &stats, &error)) << error;
  for (const test::TraceProcessorStat& s : stats) {
    EXPECT_TRUE(s.severity != "error" && s.severity != "data_loss")
        << test::Describe(s);
  }
  std::string csv;
  EXPECT_TRUE(test::RunTraceProcessorQuery(
      tp, trace, dir,
      "select count(*) as n from slice where name = '" + name + "';", &csv,
      &error))
      << error;
  // A header line, then the count.
  std::istringstream lines(csv);
  std::string line, last;
  while (std::getline(lines, line)) {
    if (!line.empty())
      last = line;
  }
  return strtoll(last.c_str(), nullptr, 10);
}

class CApiSessionTest : public test::EndToEndFixture {
 protected:
  CApiSessionTest() : consumer_socket_(dir_ + "/consumer.sock") {}

  void SetUp() override {
    service_ = std::make_unique<Subprocess>(std::vector<std::string>{
        bin_ + "/ringtraced", "--producer-socket", socket_, "--consumer-socket",
        consumer_socket_});
    const std::string error =
        test::StartRingtraced(service_.get(), socket_, kTimeoutMs);
    ASSERT_TRUE(error.empty()) << error;
    base::Status status;
    consumer_ = consumer::ConsumerClient::Connect(consumer_socket_, kTimeoutMs,
                                                  &status);
    ASSERT_TRUE(consumer_) << status.message();
  }

  void TearDown() override {
    consumer_.reset();
    if (service_ && service_->running()) {
      service_->Signal(SIGTERM);
      ASSERT_TRUE(service_->Wait(kTimeoutMs)) << service_->output();
      EXPECT_EQ(service_->exit_code(), 0) << service_->output();
    }
  }

  // A session of "track_event" with |enabled| categories alone (and the
  // default disabled tags), tracing into trace_.
  uint64_t StartSession(const std::vector<std::string>& enabled) {
    pb::TraceConfig config;
    config.add_buffers()->set_size_kb(4096);
    pb::DataSourceConfig* ds = config.add_data_sources()->mutable_config();
    ds->set_name("track_event");
    pb::TrackEventConfig* te = ds->mutable_track_event_config();
    te->add_disabled_categories("*");
    for (const std::string& c : enabled)
      te->add_enabled_categories(c);
    trace_fd_.reset(
        open(trace_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    EXPECT_TRUE(trace_fd_.get() >= 0);
    uint64_t session = 0;
    base::Status status =
        consumer_->EnableTracing(config, trace_fd_.get(), &session);
    EXPECT_TRUE(status.ok()) << status.message();
    return session;
  }

  void StopSession(uint64_t session) {
    base::Status status =
        consumer_->DisableTracing(session, kTimeoutMs, nullptr);
    EXPECT_TRUE(status.ok()) << status.message();
  }

  int64_t CountSlicesWithTraceProcessor(const std::string& name) {
    return CountSlicesInTraceProcessor(trace_, dir_, name);
  }

  std::string consumer_socket_;
  std::unique_ptr<Subprocess> service_;
  std::unique_ptr<consumer::ConsumerClient> consumer_;
  base::ScopedFd trace_fd_;
};

template <typename F>
bool Eventually(F done) {
  const uint64_t deadline = base::MonotonicMs() + kTimeoutMs;
  while (!done()) {
    if (base::MonotonicMs() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// This process records through the C API into a session: two threads of
// slices with arguments, instants and counters; a category the session does
// not enable and a "slow"-tagged one stay off. After shutdown nothing is
// enabled, and init works again.
TEST_F(CApiSessionTest, RecordsThisProcessIntoASession) {
  ringtrace_category* on = Register("capi.session", "Session test");
  ringtrace_category* off = Register("capi.session.off");
  ringtrace_category* slow = Register("capi.session.slow", nullptr, {"slow"});
  const uint64_t session =
      StartSession({"capi.session", "capi.session.slow*", "capi.late"});
  ringtrace_init_options options;
  ringtrace_init_options_default(&options);
  options.producer_socket_path = socket_.c_str();
  options.producer_name = "capi_unittest";
  options.wait_for_connection_ms = kTimeoutMs;
  ASSERT_EQ(ringtrace_init(&options), RINGTRACE_OK) << ringtrace_last_error();
  EXPECT_EQ(ringtrace_init(&options), RINGTRACE_ERR_ALREADY_INITIALIZED);
  EXPECT_EQ(ringtrace_is_connected(), 1);
  ASSERT_TRUE(Eventually([&] { return RINGTRACE_CATEGORY_ENABLED(on); }));
  // Registered after the session started: the running instance enables it.
  ringtrace_category* late = Register("capi.late");
  EXPECT_TRUE(RINGTRACE_CATEGORY_ENABLED(late));
  EXPECT_FALSE(RINGTRACE_CATEGORY_ENABLED(off));
  // "slow" is a default disabled tag; a pattern does not override it.
  EXPECT_FALSE(RINGTRACE_CATEGORY_ENABLED(slow));

  constexpr int kSlices = 100;
  auto body = [&](int64_t base) {
    for (int i = 0; i < kSlices; i++) {
      ringtrace_arg arg = IntArg("i", base + i);
      RINGTRACE_SLICE_BEGIN(on, "Work", &arg, 1);
      RINGTRACE_INSTANT(off, "Off", nullptr, 0);
      RINGTRACE_INSTANT(slow, "Slow", nullptr, 0);
      RINGTRACE_COUNTER_INT64(on, "progress", base + i);
      RINGTRACE_SLICE_END(on);
    }
    RINGTRACE_INSTANT(late, "Late", nullptr, 0);
    EXPECT_EQ(ringtrace_flush(), RINGTRACE_OK);
  };
  std::thread other(body, 1000);
  body(0);
  other.join();
  StopSession(session);
  EXPECT_FALSE(RINGTRACE_CATEGORY_ENABLED(on));
  ASSERT_EQ(ringtrace_shutdown(), RINGTRACE_OK);
  EXPECT_EQ(ringtrace_is_connected(), 0);

  const DecodedTrace trace = Decode(trace_);
  EXPECT_TRUE(trace.service_events.empty()) << trace.service_events[0];
  EXPECT_EQ(trace.Named("Work").size(), 2u * kSlices);
  EXPECT_EQ(trace.CountOfType(pb::TrackEvent::TYPE_SLICE_END), 2u * kSlices);
  EXPECT_EQ(trace.CountOfType(pb::TrackEvent::TYPE_COUNTER), 2u * kSlices);
  EXPECT_EQ(trace.Named("Late").size(), 2u);
  EXPECT_TRUE(trace.Named("Off").empty());
  EXPECT_TRUE(trace.Named("Slow").empty());
  std::set<int64_t> args;
  for (const pb::TrackEvent* e : trace.Named("Work")) {
    ASSERT_EQ(e->debug_annotations_size(), 1);
    EXPECT_EQ(e->debug_annotations(0).name(), "i");
    args.insert(e->debug_annotations(0).int_value());
  }
  EXPECT_EQ(args.size(), 2u * kSlices);
  EXPECT_EQ(args.count(1000 + kSlices - 1), 1u);
  const int64_t tp_slices = CountSlicesWithTraceProcessor("Work");
  if (tp_slices >= 0) {
    EXPECT_EQ(tp_slices, 200);
  }

  // Again, on the same service: a second connection.
  ASSERT_EQ(ringtrace_init(&options), RINGTRACE_OK) << ringtrace_last_error();
  EXPECT_EQ(ringtrace_is_connected(), 1);
  EXPECT_EQ(ringtrace_shutdown(), RINGTRACE_OK);
}

// Shutdown while another thread is writing events: the thread's events
// stop being recorded (its category's bits go with the session's instance),
// nothing crashes, and what it wrote before arrives whole.
TEST_F(CApiSessionTest, ShutdownWhileAnotherThreadTraces) {
  ringtrace_category* c = Register("capi.concurrent");
  const uint64_t session = StartSession({"capi.concurrent"});
  ringtrace_init_options options;
  ringtrace_init_options_default(&options);
  options.producer_socket_path = socket_.c_str();
  options.wait_for_connection_ms = kTimeoutMs;
  ASSERT_EQ(ringtrace_init(&options), RINGTRACE_OK) << ringtrace_last_error();
  ASSERT_TRUE(Eventually([&] { return RINGTRACE_CATEGORY_ENABLED(c); }));
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> written{0};
  std::thread writer([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      RINGTRACE_SLICE_BEGIN(c, "Busy", nullptr, 0);
      RINGTRACE_SLICE_END(c);
      written.fetch_add(1, std::memory_order_relaxed);
    }
    ringtrace_flush();
  });
  ASSERT_TRUE(Eventually([&] { return written.load() >= 100; }));
  ASSERT_EQ(ringtrace_shutdown(), RINGTRACE_OK);
  EXPECT_FALSE(RINGTRACE_CATEGORY_ENABLED(c));
  const uint64_t at_shutdown = written.load();
  ASSERT_TRUE(Eventually([&] { return written.load() >= at_shutdown + 100; }));
  stop.store(true);
  writer.join();
  StopSession(session);
  const DecodedTrace trace = Decode(trace_);
  // The connection's end is the writer thread's last release (after the
  // shutdown): an orderly disconnect with its final loss report, never a
  // producer that died.
  EXPECT_TRUE(trace.service_events.empty()) << trace.service_events[0];
  const size_t begins = trace.Named("Busy").size();
  EXPECT_GE(begins, 100u);
  EXPECT_LE(begins, at_shutdown + 1);  // none after the shutdown returned
  // Every begin that arrived has its end, but for the pair the shutdown
  // may have cut.
  const size_t ends = trace.CountOfType(pb::TrackEvent::TYPE_SLICE_END);
  EXPECT_TRUE(ends == begins || ends + 1 == begins) << begins << " " << ends;
}

// The C example app (a C program, built by the C compiler) under a session:
// its slices, instants and counters arrive.
TEST_F(CApiSessionTest, CExampleAppRecordsIntoASession) {
  const uint64_t session = StartSession({"c_example"});
  Subprocess app(
      {bin_ + "/ringtrace_c_example_app", socket_, "--wait-ms", "60000"});
  std::string error;
  ASSERT_TRUE(app.Start(&error)) << error;
  ASSERT_TRUE(app.Wait(kTimeoutMs)) << app.output();
  ASSERT_EQ(app.exit_code(), 0) << app.output();
  StopSession(session);
  EXPECT_NE(app.output().find("c_example_app: recorded 20 frames"),
            std::string::npos)
      << app.output();
  const DecodedTrace trace = Decode(trace_);
  EXPECT_TRUE(trace.service_events.empty()) << trace.service_events[0];
  EXPECT_EQ(trace.producer_names.count("ringtrace_c_example_app"), 1u);
  EXPECT_EQ(trace.Named("Frame").size(), 20u);
  EXPECT_EQ(trace.Named("Draw").size(), 20u);
  EXPECT_EQ(trace.Named("Present").size(), 20u);
  EXPECT_EQ(trace.CountOfType(pb::TrackEvent::TYPE_SLICE_END), 40u);
  EXPECT_EQ(trace.CountOfType(pb::TrackEvent::TYPE_COUNTER), 40u);
  for (const pb::TrackEvent* e : trace.Named("Frame")) {
    ASSERT_EQ(e->debug_annotations_size(), 2);
    EXPECT_EQ(e->debug_annotations(0).name(), "frame");
    EXPECT_EQ(e->debug_annotations(1).name(), "vsync");
  }
  const int64_t tp_slices = CountSlicesWithTraceProcessor("Frame");
  if (tp_slices >= 0) {
    EXPECT_EQ(tp_slices, 20);
  }
}

// The Python package over libringtrace_c.so: the test script records
// slices (context manager and decorator), instants and counters.
TEST_F(CApiSessionTest, PythonPackageRecordsIntoASession) {
#if defined(RT_ASAN) || defined(RT_TSAN) || defined(RT_UBSAN)
  // A sanitized libringtrace_c.so needs its sanitizer's runtime, which an
  // uninstrumented python3 does not load (dlopen: undefined
  // __ubsan_*/__asan_*/__tsan_* symbols). The C example app covers the C
  // API under the sanitizers; this test runs in the other builds.
  GTEST_SKIP() << "python3 cannot load a sanitized libringtrace_c.so";
#endif
  if (access("/usr/bin/python3", X_OK) != 0)
    GTEST_SKIP() << "no /usr/bin/python3";
  const uint64_t session = StartSession({"py"});
  Subprocess app({"/usr/bin/env", "PYTHONPATH=" + bin_ + "/python",
                  "RINGTRACE_C_LIBRARY=" + bin_ + "/libringtrace_c.so",
                  "/usr/bin/python3", "-B", bin_ + "/python/record_session.py",
                  socket_});
  std::string error;
  ASSERT_TRUE(app.Start(&error)) << error;
  ASSERT_TRUE(app.Wait(kTimeoutMs)) << app.output();
  ASSERT_EQ(app.exit_code(), 0) << app.output();
  StopSession(session);
  const DecodedTrace trace = Decode(trace_);
  EXPECT_TRUE(trace.service_events.empty()) << trace.service_events[0];
  EXPECT_EQ(trace.Named("step").size(), 10u);
  EXPECT_EQ(trace.Named("decorated").size(), 10u);
  EXPECT_EQ(trace.Named("tick").size(), 10u);
  EXPECT_EQ(trace.Named("raises").size(), 1u);  // ended by the exception
  EXPECT_EQ(trace.CountOfType(pb::TrackEvent::TYPE_SLICE_END), 21u);
  EXPECT_EQ(trace.CountOfType(pb::TrackEvent::TYPE_COUNTER), 20u);
  EXPECT_TRUE(trace.Named("never").empty());
  for (const pb::TrackEvent* e : trace.Named("step")) {
    ASSERT_EQ(e->debug_annotations_size(), 5) << e->DebugString();
    std::map<std::string, pb::DebugAnnotation> a;
    for (const pb::DebugAnnotation& d : e->debug_annotations())
      a[d.name()] = d;
    EXPECT_TRUE(a["i"].has_int_value());
    EXPECT_EQ(a["big"].uint_value(), uint64_t{1} << 63);
    EXPECT_EQ(a["ratio"].double_value(), 0.5);
    EXPECT_TRUE(a["flag"].bool_value());
    EXPECT_EQ(a["label"].string_value(), "py");
  }
  const int64_t tp_slices = CountSlicesWithTraceProcessor("decorated");
  if (tp_slices >= 0) {
    EXPECT_EQ(tp_slices, 10);
  }
}

// A "track_event" session of |category| alone, in Perfetto's text format.
std::string TextConfig(const std::string& category) {
  return "buffers { size_kb: 4096 }\n"
         "data_sources { config { name: \"track_event\"\n"
         "  track_event_config { disabled_categories: \"*\"\n"
         "    enabled_categories: \"" +
         category + "\" } } }\n";
}

// A C session's trace, read back as the header says (the size, a buffer
// too small, the bytes), into |path|.
void ReadSessionTrace(ringtrace_session* session, const std::string& path) {
  size_t size = 0;
  ASSERT_EQ(ringtrace_session_read_trace(session, nullptr, 0, &size),
            RINGTRACE_OK)
      << ringtrace_last_error();
  ASSERT_GT(size, 0u);
  std::string bytes(size, '\0');
  size_t got = 0;
  EXPECT_EQ(ringtrace_session_read_trace(session, &bytes[0], size - 1, &got),
            RINGTRACE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(got, size);
  ASSERT_EQ(ringtrace_session_read_trace(session, &bytes[0], size, &got),
            RINGTRACE_OK)
      << ringtrace_last_error();
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The in-process backend from C, no daemon: ringtrace_init with
// RINGTRACE_BACKEND_IN_PROCESS, a session from a text config into memory
// (the category on when the start returns), two threads of slices and
// counters, the trace read back, decoded and loaded into trace_processor.
TEST(CApiInProcessTest, RecordsThisProcessWithNoDaemon) {
  base::TempDir dir("ringtrace_capi_inproc");
  ringtrace_category* cat = Register("capi.inproc");
  const std::string config = TextConfig("capi.inproc");
  ringtrace_session_options so;
  ringtrace_session_options_default(&so);
  ringtrace_session* session = nullptr;
  EXPECT_EQ(ringtrace_session_new(&so, config.c_str(), -1, &session),
            RINGTRACE_ERR_NOT_INITIALIZED);
  ringtrace_init_options options;
  ringtrace_init_options_default(&options);
  options.backends = RINGTRACE_BACKEND_IN_PROCESS;
  options.producer_name = "capi_in_process";
  ASSERT_EQ(ringtrace_init(&options), RINGTRACE_OK) << ringtrace_last_error();
  EXPECT_EQ(ringtrace_is_connected(), 1);
  EXPECT_EQ(ringtrace_session_new(&so, "buffers { size_kb: }", -1, &session),
            RINGTRACE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(strstr(ringtrace_last_error(), "<config>:1:20"), nullptr)
      << ringtrace_last_error();
  so.backend = RINGTRACE_BACKEND_SYSTEM | RINGTRACE_BACKEND_IN_PROCESS;
  EXPECT_EQ(ringtrace_session_new(&so, config.c_str(), -1, &session),
            RINGTRACE_ERR_INVALID_ARGUMENT);
  so.backend = RINGTRACE_BACKEND_IN_PROCESS;
  ASSERT_EQ(ringtrace_session_new(&so, config.c_str(), -1, &session),
            RINGTRACE_OK)
      << ringtrace_last_error();
  EXPECT_EQ(ringtrace_session_summary(session, nullptr, nullptr),
            RINGTRACE_ERR_FAILED);
  ASSERT_EQ(ringtrace_session_start(session), RINGTRACE_OK)
      << ringtrace_last_error();
  EXPECT_TRUE(RINGTRACE_CATEGORY_ENABLED(cat));
  constexpr int kSlices = 100;
  auto body = [&](int64_t base) {
    for (int i = 0; i < kSlices; i++) {
      ringtrace_arg arg = IntArg("i", base + i);
      RINGTRACE_SLICE_BEGIN(cat, "Work", &arg, 1);
      RINGTRACE_COUNTER_INT64(cat, "progress", base + i);
      RINGTRACE_SLICE_END(cat);
    }
  };
  std::thread other(body, 1000);
  body(0);
  other.join();
  EXPECT_EQ(ringtrace_session_flush(session, 0), RINGTRACE_OK)
      << ringtrace_last_error();
  ASSERT_EQ(ringtrace_session_stop(session), RINGTRACE_OK)
      << ringtrace_last_error();
  EXPECT_FALSE(RINGTRACE_CATEGORY_ENABLED(cat));
  uint64_t written = 0, lost = 1;
  EXPECT_EQ(ringtrace_session_summary(session, &written, &lost), RINGTRACE_OK);
  EXPECT_GT(written, 4u * kSlices);
  EXPECT_EQ(lost, 0u);
  const std::string path = dir.File("inproc.pftrace");
  ReadSessionTrace(session, path);
  ringtrace_session_destroy(session);
  ASSERT_EQ(ringtrace_shutdown(), RINGTRACE_OK);
  EXPECT_EQ(ringtrace_is_connected(), 0);

  const DecodedTrace trace = Decode(path);
  EXPECT_TRUE(trace.service_events.empty()) << trace.service_events[0];
  EXPECT_EQ(trace.Named("Work").size(), 2u * kSlices);
  EXPECT_EQ(trace.CountOfType(pb::TrackEvent::TYPE_SLICE_END), 2u * kSlices);
  EXPECT_EQ(trace.CountOfType(pb::TrackEvent::TYPE_COUNTER), 2u * kSlices);
  const int64_t tp_slices =
      CountSlicesInTraceProcessor(path, dir.path(), "Work");
  if (tp_slices >= 0) {
    EXPECT_EQ(tp_slices, 2 * kSlices);
  }
}

// Both backends from C: the daemon's session (through the consumer
// socket) and an in-process session, each enabling its own category; each
// trace holds its own category's events only.
TEST_F(CApiSessionTest, BothBackendsEachGetTheirCategory) {
  ringtrace_category* sys = Register("capi.both.system");
  ringtrace_category* inproc = Register("capi.both.inproc");
  const uint64_t system_session = StartSession({"capi.both.system"});
  ringtrace_init_options options;
  ringtrace_init_options_default(&options);
  options.backends = RINGTRACE_BACKEND_SYSTEM | RINGTRACE_BACKEND_IN_PROCESS;
  options.producer_socket_path = socket_.c_str();
  options.wait_for_connection_ms = kTimeoutMs;
  ASSERT_EQ(ringtrace_init(&options), RINGTRACE_OK) << ringtrace_last_error();
  EXPECT_EQ(ringtrace_is_connected(), 1);
  ringtrace_session_options so;
  ringtrace_session_options_default(&so);
  ringtrace_session* session = nullptr;
  ASSERT_EQ(ringtrace_session_new(&so, TextConfig("capi.both.inproc").c_str(),
                                  -1, &session),
            RINGTRACE_OK)
      << ringtrace_last_error();
  ASSERT_EQ(ringtrace_session_start(session), RINGTRACE_OK)
      << ringtrace_last_error();
  ASSERT_TRUE(Eventually([&] { return RINGTRACE_CATEGORY_ENABLED(sys); }));
  EXPECT_TRUE(RINGTRACE_CATEGORY_ENABLED(inproc));
  for (int i = 0; i < 50; i++) {
    RINGTRACE_INSTANT(sys, "SystemOnly", nullptr, 0);
    RINGTRACE_INSTANT(inproc, "InProcessOnly", nullptr, 0);
  }
  ASSERT_EQ(ringtrace_session_stop(session), RINGTRACE_OK);
  StopSession(system_session);
  const std::string inproc_path = dir_ + "/inproc.pftrace";
  ReadSessionTrace(session, inproc_path);
  ringtrace_session_destroy(session);
  ASSERT_EQ(ringtrace_shutdown(), RINGTRACE_OK);
  const DecodedTrace system_trace = Decode(trace_);
  const DecodedTrace inproc_trace = Decode(inproc_path);
  EXPECT_EQ(system_trace.Named("SystemOnly").size(), 50u);
  EXPECT_EQ(system_trace.Named("InProcessOnly").size(), 0u);
  EXPECT_EQ(inproc_trace.Named("InProcessOnly").size(), 50u);
  EXPECT_EQ(inproc_trace.Named("SystemOnly").size(), 0u);
}

// The Python package with the in-process backend: a script records into
// an in-process session, with no daemon, and writes the trace it read
// back; the test decodes it.
TEST(CApiInProcessTest, PythonPackageRecordsInProcess) {
#if defined(RT_ASAN) || defined(RT_TSAN) || defined(RT_UBSAN)
  GTEST_SKIP() << "python3 cannot load a sanitized libringtrace_c.so";
#endif
  if (access("/usr/bin/python3", X_OK) != 0)
    GTEST_SKIP() << "no /usr/bin/python3";
  base::TempDir dir("ringtrace_py_inproc");
  const std::string bin = base::ExecutableDir();
  const std::string path = dir.File("py.pftrace");
  Subprocess app({"/usr/bin/env", "PYTHONPATH=" + bin + "/python",
                  "RINGTRACE_C_LIBRARY=" + bin + "/libringtrace_c.so",
                  "/usr/bin/python3", "-B",
                  bin + "/python/record_in_process.py", path});
  std::string error;
  ASSERT_TRUE(app.Start(&error)) << error;
  ASSERT_TRUE(app.Wait(kTimeoutMs)) << app.output();
  ASSERT_EQ(app.exit_code(), 0) << app.output();
  EXPECT_NE(app.output().find("record_in_process: 0 lost"), std::string::npos)
      << app.output();
  const DecodedTrace trace = Decode(path);
  EXPECT_EQ(trace.Named("step").size(), 10u);
  EXPECT_EQ(trace.CountOfType(pb::TrackEvent::TYPE_COUNTER), 10u);
  EXPECT_TRUE(trace.Named("off").empty());
}

}  // namespace
}  // namespace ringtrace
