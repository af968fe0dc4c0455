/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_custom_data_source_app as it is used: a real ringtraced, the
// app as a process of its own, and two sessions recorded at once by this
// process (TracingSession), each with its own FrameStatsConfig (a
// DataSourceConfig extension). Each trace holds exactly its session's
// frames, decoded with libprotobuf and the app's proto; every scene name
// resolves on its sequence; each render thread wrote its last packet as
// its instance stopped asynchronously.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/perfetto/trace/trace.pb.h"
#include "ringtrace/tracing_session.h"
#include "src/base/test/subprocess.h"
#include "src/base/time.h"
#include "src/examples/protos/custom_data_source.pb.h"
#include "src/tracing/test/ringtraced_process.h"

namespace ringtrace {
namespace {

namespace pb = perfetto::protos;
namespace ex = ringtrace_example;

constexpr int kTimeoutMs = 20000;

struct Frame {
  uint64_t frame_number = 0;
  uint32_t duration_us = 0;
  std::string scene;
  std::string label;
  uint64_t frames_total = 0;
  uint32_t sequence_id = 0;
};

std::vector<Frame> DecodeFrames(const std::string& bytes) {
  pb::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(bytes));
  std::map<uint32_t, std::map<uint64_t, std::string>> scenes;
  std::vector<Frame> frames;
  for (const pb::TracePacket& p : trace.packet()) {
    if (!p.HasExtension(ex::FrameStatsPacket::frame_stats))
      continue;
    const uint32_t seq = p.trusted_packet_sequence_id();
    if (p.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED)
      scenes[seq].clear();
    for (const ex::SceneName& n : p.interned_data().GetRepeatedExtension(
             ex::FrameStatsInternedData::scene_names)) {
      scenes[seq][n.iid()] = n.name();
    }
    const ex::FrameStats& s = p.GetExtension(ex::FrameStatsPacket::frame_stats);
    Frame f;
    f.frame_number = s.frame_number();
    f.duration_us = s.duration_us();
    auto it = scenes[seq].find(s.scene_iid());
    EXPECT_NE(it, scenes[seq].end()) << "scene iid " << s.scene_iid();
    if (it != scenes[seq].end())
      f.scene = it->second;
    f.label = s.session_label();
    f.frames_total = s.frames_total();
    f.sequence_id = seq;
    frames.push_back(f);
  }
  return frames;
}

pb::TraceConfig FramesConfig(const std::string& label,
                             uint32_t min_duration_us) {
  pb::TraceConfig config;
  config.add_buffers()->set_size_kb(2048);
  pb::DataSourceConfig* ds = config.add_data_sources()->mutable_config();
  ds->set_name("com.example.frame_stats");
  ex::FrameStatsConfig* own =
      ds->MutableExtension(ex::FrameStatsDataSourceConfig::frame_stats_config);
  own->set_session_label(label);
  own->set_min_duration_us(min_duration_us);
  return config;
}

template <typename F>
bool Eventually(F done) {
  const uint64_t deadline = base::MonotonicMs() + kTimeoutMs;
  while (!done()) {
    if (base::MonotonicMs() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    n++;
  }
  return n;
}

class CustomDataSourceAppTest : public test::EndToEndFixture {};

TEST_F(CustomDataSourceAppTest, TwoSessionsRecordTheirOwnFrames) {
  const std::string consumer_socket = dir_ + "/consumer.sock";
  base::Subprocess service({bin_ + "/ringtraced", "--producer-socket", socket_,
                            "--consumer-socket", consumer_socket});
  std::string error = test::StartRingtraced(&service, socket_, kTimeoutMs);
  ASSERT_TRUE(error.empty()) << error;
  base::Subprocess app({bin_ + "/ringtrace_custom_data_source_app", "--socket",
                        socket_, "--threads", "2"});
  ASSERT_TRUE(app.Start(&error)) << error;
  ASSERT_TRUE(Eventually([&] {
    return app.output().find("connected;") != std::string::npos;
  })) << app.output();

  TracingSessionOptions options;
  options.consumer_socket_path = consumer_socket;
  options.timeout_ms = kTimeoutMs;
  base::Status status;
  std::unique_ptr<TracingSession> all =
      TracingSession::Connect(options, &status);
  ASSERT_TRUE(all) << status.message();
  std::unique_ptr<TracingSession> slow =
      TracingSession::Connect(options, &status);
  ASSERT_TRUE(slow) << status.message();
  ASSERT_TRUE(all->Setup(FramesConfig("all", 0)).ok());
  ASSERT_TRUE(slow->Setup(FramesConfig("slow", 5000)).ok());
  ASSERT_TRUE(all->StartBlocking().ok());
  ASSERT_TRUE(slow->StartBlocking().ok());
  ASSERT_TRUE(Eventually([&] {
    return Count(app.output(), "custom_data_source_app: instance") == 2;
  })) << app.output();
  EXPECT_NE(app.output().find("min_duration_us=5000 label='slow'"),
            std::string::npos)
      << app.output();
  // A while of frames (a wait, not a timing assertion).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(all->FlushBlocking().ok());
  EXPECT_TRUE(Eventually([&] {
    return app.output().find("custom_data_source_app: flush") !=
           std::string::npos;
  })) << app.output();
  std::string all_trace, slow_trace;
  ASSERT_TRUE(all->StopBlocking().ok());
  ASSERT_TRUE(all->ReadTraceBlocking(&all_trace).ok());
  ASSERT_TRUE(slow->StopBlocking().ok());
  ASSERT_TRUE(slow->ReadTraceBlocking(&slow_trace).ok());
  // Both stops completed in time (the threads' last packets came first).
  EXPECT_EQ(all->summary().ended_by_service, "");

  for (const bool is_slow : {false, true}) {
    SCOPED_TRACE(is_slow ? "slow" : "all");
    const std::vector<Frame> frames =
        DecodeFrames(is_slow ? slow_trace : all_trace);
    ASSERT_GT(frames.size(), 2u);
    std::map<uint32_t, size_t> lasts;  // per sequence
    for (const Frame& f : frames) {
      EXPECT_EQ(f.label, is_slow ? "slow" : "all");
      EXPECT_FALSE(f.scene.empty());
      if (f.frames_total != 0) {
        EXPECT_EQ(f.frames_total, f.frame_number + 1);
        lasts[f.sequence_id]++;
      } else if (is_slow) {
        EXPECT_GE(f.duration_us, 5000u);
      }
    }
    // One last packet per render thread (the asynchronous stop), one
    // sequence per thread.
    EXPECT_EQ(lasts.size(), 2u);
    for (const auto& [sequence, n] : lasts)
      EXPECT_EQ(n, 1u) << sequence;
  }
  pb::Trace parsed;
  ASSERT_TRUE(parsed.ParseFromString(all_trace));
  for (const pb::TracePacket& p : parsed.packet()) {
    if (p.has_trace_stats()) {
      EXPECT_EQ(p.trace_stats().ringtrace_data_source_stop_timeouts(), 0u);
    }
  }

  app.Signal(SIGTERM);
  ASSERT_TRUE(app.Wait(kTimeoutMs)) << app.output();
  EXPECT_EQ(app.exit_code(), 0) << app.output();
  EXPECT_NE(app.output().find("2 instances started, 2 stopped"),
            std::string::npos)
      << app.output();
  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kTimeoutMs)) << service.output();
  EXPECT_EQ(service.exit_code(), 0) << service.output();
}

}  // namespace
}  // namespace ringtrace
