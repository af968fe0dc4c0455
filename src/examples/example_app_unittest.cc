/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/examples/example_app.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/examples/test/trace_reader.h"
#include "src/tracing/producer/test/fake_service.h"

namespace ringtrace {
namespace examples {
namespace {

using perfetto::protos::TracePacket;
using perfetto::protos::TrackEvent;
using producer::FakeService;
using producer::TempDir;

ParseResult Parse(std::vector<const char*> args,
                  ExampleConfig* config,
                  std::string* error) {
  args.insert(args.begin(), "ringtrace_example_app");
  return ParseExampleArgs(static_cast<int>(args.size()), args.data(), config,
                          error);
}

TEST(ProducerExampleArgsTest, ParsesEveryFlagInBothSpellings) {
  ExampleConfig c;
  std::string error;
  ASSERT_EQ(
      Parse({"--socket", "/tmp/s", "--threads=3", "--events", "12", "--name",
             "app", "--ring_kb", "64", "--chunk-size=1024", "--policy", "drop",
             "--stall-timeout-ms", "9", "--timeout_ms=77"},
            &c, &error),
      ParseResult::kRun)
      << error;
  EXPECT_EQ(c.socket_path, "/tmp/s");
  EXPECT_EQ(c.threads, 3u);
  EXPECT_EQ(c.events_per_thread, 12u);
  EXPECT_EQ(c.name, "app");
  EXPECT_EQ(c.ring_kb, 64u);
  EXPECT_EQ(c.chunk_size, 1024u);
  EXPECT_EQ(c.policy, shm_ring::BufferExhaustedPolicy::kDrop);
  EXPECT_EQ(c.stall_timeout_ms, 9u);
  EXPECT_EQ(c.connect_timeout_ms, 77u);
}

TEST(ProducerExampleArgsTest, RejectsBadInput) {
  const std::vector<std::vector<const char*>> bad = {
      {},                                            // no socket
      {"--socket"},                                  // no value
      {"--socket", "/s", "--threads", "0"},          // no thread
      {"--socket", "/s", "--threads", "-1"},         // negative
      {"--socket", "/s", "--events", "1x"},          // not a number
      {"--socket", "/s", "--events", "5000000000"},  // > 32 bits
      {"--socket", "/s", "--policy", "block"},       // unknown policy
      {"--socket", "/s", "--ring-kb", "4194304"},    // bytes overflow 32 bits
      {"--socket", "/s", "--frobnicate", "1"},       // unknown flag
      {"--socket", "/s", "--mode", "session"},       // unknown mode
      {"--socket", "/s", "--duration-ms", "-1"},     // negative
  };
  for (const auto& args : bad) {
    ExampleConfig c;
    std::string error;
    EXPECT_EQ(Parse(args, &c, &error), ParseResult::kError);
    EXPECT_FALSE(error.empty());
  }
  ExampleConfig c;
  std::string error;
  EXPECT_EQ(Parse({"--help"}, &c, &error), ParseResult::kHelp);
}

TEST(ProducerExampleArgsTest, ParsesTheSessionsMode) {
  ExampleConfig c;
  std::string error;
  EXPECT_FALSE(c.sessions);
  ASSERT_EQ(Parse({"--socket", "/s", "--mode", "sessions", "--duration-ms",
                   "2500", "--cycle_interval_us=7"},
                  &c, &error),
            ParseResult::kRun)
      << error;
  EXPECT_TRUE(c.sessions);
  EXPECT_EQ(c.duration_ms, 2500u);
  EXPECT_EQ(c.cycle_interval_us, 7u);
  ASSERT_EQ(Parse({"--socket", "/s", "--mode=classic"}, &c, &error),
            ParseResult::kRun);
  EXPECT_FALSE(c.sessions);
}

TEST(ProducerExampleAppTest, SessionsModeWithoutServiceFailsClearly) {
  TempDir dir;
  ExampleConfig config;
  config.socket_path = dir.File("none.sock");
  config.sessions = true;
  config.connect_timeout_ms = 50;
  SessionExampleHooks hooks;
  bool connected = false;
  hooks.on_connected = [&](uint64_t) { connected = true; };
  SessionExampleResult result;
  const base::Status status = RunSessionExample(config, hooks, &result);
  EXPECT_EQ(status.message(),
            "no connection to " + config.socket_path + " within 50 ms");
  EXPECT_FALSE(connected);
}

TEST(ProducerExampleAppTest, NoServiceFailsClearly) {
  TempDir dir;
  ExampleConfig config;
  config.socket_path = dir.File("none.sock");
  ExampleResult result;
  const base::Status status = RunExample(config, &result);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot connect"), std::string::npos)
      << status.message();
}

struct Counts {
  uint32_t clears = 0;  // clear packets: the defaults and the clock snapshot
  uint32_t process_tracks = 0;
  uint32_t thread_tracks = 0;
  uint32_t counter_tracks = 0;
  uint32_t begins = 0;
  uint32_t ends = 0;
  uint32_t counters = 0;
  bool balanced = true;  // never more ends than begins
};

Counts CountPackets(const std::vector<TracePacket>& packets) {
  Counts c;
  int depth = 0;
  for (const TracePacket& p : packets) {
    if (p.has_clock_snapshot()) {
      EXPECT_TRUE(p.has_trace_packet_defaults());
      c.clears++;
      continue;
    }
    if (p.has_track_descriptor()) {
      c.process_tracks += p.track_descriptor().has_process();
      c.thread_tracks += p.track_descriptor().has_thread();
      c.counter_tracks += p.track_descriptor().has_counter();
      continue;
    }
    EXPECT_TRUE(p.has_track_event());
    switch (p.track_event().type()) {
      case TrackEvent::TYPE_SLICE_BEGIN:
        EXPECT_NE(p.track_event().name_iid(), 0u);
        c.begins++;
        depth++;
        break;
      case TrackEvent::TYPE_SLICE_END:
        c.ends++;
        c.balanced = c.balanced && --depth >= 0;
        break;
      case TrackEvent::TYPE_COUNTER:
        c.counters++;
        break;
      default:
        ADD_FAILURE() << "unexpected event type";
    }
  }
  c.balanced = c.balanced && depth == 0;
  return c;
}

// The app against a service: every packet it reports as written is in the
// service's ring, parses as Perfetto, and the slices are balanced for every
// length of the last cycle.
TEST(ProducerExampleAppTest, WritesBalancedTrackEventsToTheService) {
  constexpr uint32_t kThreads = 2;
  for (uint32_t events : {0u, 1u, 2u, 3u, 4u, 5u, 23u}) {
    SCOPED_TRACE(events);
    TempDir dir;
    FakeService::Config service_config;
    service_config.geometry = shm_ring::RingGeometry(4096, 16);
    auto service = FakeService::Start(dir.File("svc.sock"), service_config);
    ASSERT_TRUE(service);
    ExampleConfig config;
    config.socket_path = dir.File("svc.sock");
    config.threads = kThreads;
    config.events_per_thread = events;
    // The fake service does not close at the app's EOF as ringtraced does.
    config.disconnect_timeout_ms = 100;
    ExampleResult result;
    const base::Status status = RunExample(config, &result);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_TRUE(result.connected_at_end);
    EXPECT_EQ(result.events_written, kThreads * events);
    EXPECT_EQ(result.main_thread_events, 2u);
    EXPECT_NE(FormatExampleSummary(config, result)
                  .find("TrackEvents " + std::to_string(kThreads * events + 2) +
                        " (workers " + std::to_string(kThreads * events) +
                        ", main thread 2)"),
              std::string::npos);
    // Per worker: the clear packet, two descriptors, the events, and a
    // counter descriptor if the cycles hold a counter; the main thread: the
    // clear packet, two descriptors and the "run" slice.
    const bool has_counter = events == 1 || events >= 3;
    EXPECT_EQ(result.packets_written,
              kThreads * (events + 3 + (has_counter ? 1 : 0)) + 5);
    EXPECT_EQ(result.packets_committed, result.packets_written);
    EXPECT_EQ(result.packets_dropped, 0u);
    EXPECT_EQ(result.producer.writers_created, kThreads + 1);  // + main
    EXPECT_NE(FormatExampleSummary(config, result).find("dropped 0"),
              std::string::npos);

    ASSERT_TRUE(service->WaitHelloDone());
    EXPECT_EQ(service->hello().name, "ringtrace_example_app");
    const PacketsByWriter all = ReadAllPackets(service->region()->view());
    ASSERT_EQ(all.size(), kThreads + 1);
    Counts total;
    uint32_t main_sequences = 0;
    for (const auto& [id, packets] : all) {
      const Counts c = CountPackets(packets);
      EXPECT_TRUE(c.balanced);
      EXPECT_EQ(c.clears, 1u);
      EXPECT_EQ(c.thread_tracks, 1u);
      EXPECT_EQ(c.process_tracks, 1u);
      if (c.counters == 0 && c.begins == 1 && events != 2) {
        main_sequences++;  // the "run" slice
        continue;
      }
      EXPECT_EQ(c.counter_tracks, c.counters != 0 ? 1u : 0u);
      EXPECT_EQ(c.begins + c.ends + c.counters, events);
      total.counters += c.counters;
    }
    if (events != 2) {
      EXPECT_EQ(main_sequences, 1u);
    }
  }
}

}  // namespace
}  // namespace examples
}  // namespace ringtrace
