/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. The fixture of ServiceCore's consumer-session tests
// (service_core_sessions_unittest.cc, service_core_stuck_producer_unittest.cc):
// a core in sessions mode, producers admitted with their data sources,
// sessions started into files of a temp dir, stops acked.

#ifndef SRC_TRACING_SERVICE_TRACED_TEST_SESSIONS_FIXTURE_H_
#define SRC_TRACING_SERVICE_TRACED_TEST_SESSIONS_FIXTURE_H_

#include <fcntl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/perfetto/trace/trace.pb.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/service/traced/service_core.h"
#include "src/tracing/service/traced/test/core_fixture.h"
#include "src/tracing/service/traced/test/test_client.h"

namespace ringtrace {
namespace traced {
namespace test {

using perfetto::protos::TraceConfig;
using trace_buffer::ProducerID;

inline ServiceCore::Options SessionOptions() {
  ServiceCore::Options options;
  // Only the sessions' own drains read the rings.
  options.drain_tick_ns = 3'600'000'000'000;
  return options;
}

inline TraceConfig::DataSource* AddDataSource(TraceConfig* config,
                                              const std::string& name,
                                              uint32_t target_buffer) {
  TraceConfig::DataSource* ds = config->add_data_sources();
  ds->mutable_config()->set_name(name);
  ds->mutable_config()->set_target_buffer(target_buffer);
  return ds;
}

inline TraceConfig OneBufferConfig(uint32_t size_kb = 256) {
  TraceConfig config;
  config.add_buffers()->set_size_kb(size_kb);
  AddDataSource(&config, "track_event", 0);
  return config;
}

inline base::ScopedFd OpenOut(const std::string& path) {
  return base::ScopedFd(
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
}

class SessionsFixture : public testing::Test {
 protected:
  void SetUp() override { core_ = MakeCore(SessionOptions()); }

  // Admits a producer named |name| that registered |data_sources|.
  ProducerID AddProducer(const std::string& name,
                         const std::vector<std::string>& data_sources,
                         std::unique_ptr<ProducerSide>* side) {
    ipc::HelloMsg hello = MakeHello();
    hello.name = name;
    const ServiceCore::Admission a = core_->Admit(hello, Identity(100, 200));
    EXPECT_EQ(a.reply.status, ipc::HelloStatus::kOk);
    side->reset(new ProducerSide(a));
    const ProducerID id = static_cast<ProducerID>(a.reply.producer_id);
    for (const std::string& ds : data_sources)
      EXPECT_TRUE(core_->RegisterDataSource(id, ds, now_).ok());
    return id;
  }

  SessionId Start(const TraceConfig& config, const std::string& file) {
    SessionId id = 0;
    const base::Status status = core_->sessions()->StartSession(
        config, OpenOut(dir_.File(file)), /*consumer_uid=*/200,
        /*consumer_id=*/7, now_, &id);
    EXPECT_TRUE(status.ok()) << status.message();
    return id;
  }

  base::Status TryStart(const TraceConfig& config) {
    SessionId id = 0;
    return core_->sessions()->StartSession(
        config, OpenOut(dir_.File("refused")), 200, 7, now_, &id);
  }

  // Acks every StopDataSource among |cmds|.
  void AckStops(const std::vector<ProducerCommand>& cmds) {
    for (const ProducerCommand& c : cmds) {
      if (c.type == ProducerCommand::Type::kStopDataSource) {
        const base::Status status =
            core_->sessions()->OnDataSourceStopped(c.producer_id, c.id, now_);
        EXPECT_TRUE(status.ok()) << status.message();
      }
    }
  }

  // Stops |id| with every ack; returns its kEnded event.
  SessionEvent StopAndAck(SessionId id) {
    EXPECT_TRUE(core_->sessions()->StopSession(id, /*tag=*/99, now_).ok());
    AckStops(core_->sessions()->TakeCommands());
    std::vector<SessionEvent> events = core_->sessions()->TakeEvents();
    EXPECT_EQ(events.size(), 1u);
    if (events.empty())
      return SessionEvent();
    return events[0];
  }

  perfetto::protos::Trace ReadTrace(const std::string& file) {
    perfetto::protos::Trace trace;
    EXPECT_TRUE(ReadTraceFile(dir_.File(file), &trace)) << file;
    return trace;
  }

  static const perfetto::protos::TraceStats& StatsOf(
      const perfetto::protos::Trace& trace) {
    return trace.packet(trace.packet_size() - 2).trace_stats();
  }

  base::TempDir dir_;
  std::unique_ptr<ServiceCore> core_;
  ServiceCore::Clock::time_point now_ = ServiceCore::Clock::now();
};

}  // namespace test
}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_TEST_SESSIONS_FIXTURE_H_
