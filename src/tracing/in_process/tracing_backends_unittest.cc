/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TracingBackends with both backends: a ringtraced child (the system
// service) and the in-process backend, this process's TrackEvent macros
// registered with both. A system session and an in-process session run at
// once, each enabling its own category and a shared one: each trace holds
// exactly the events its session enabled. Then the choices that are wrong.

// Categories for this test only (see RT_TRACK_EVENT_NAMESPACE).
#define RT_TRACK_EVENT_NAMESPACE rt_tracing_backends_unittest_categories

#include "ringtrace/tracing_backends.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "ringtrace/track_event.h"
#include "src/base/test/subprocess.h"
#include "src/tracing/in_process/test/trace_checks.h"
#include "src/tracing/test/ringtraced_process.h"

RT_DEFINE_CATEGORIES("both.system", "both.inproc", "both.shared");

namespace ringtrace {
namespace {

constexpr int kTimeoutMs = 60000;

std::string ConfigEnabling(const std::string& category) {
  return "buffers { size_kb: 2048 }\n"
         "data_sources { config { name: \"track_event\"\n"
         "  track_event_config { disabled_categories: \"*\"\n"
         "    enabled_categories: \"" +
         category +
         "\"\n"
         "    enabled_categories: \"both.shared\" } } }\n";
}

class TracingBackendsTest : public test::EndToEndFixture {
 protected:
  TracingBackendsTest() : consumer_socket_(dir_ + "/consumer.sock") {}

  void TearDown() override {
    if (service_ && service_->running()) {
      service_->Signal(SIGTERM);
      ASSERT_TRUE(service_->Wait(kTimeoutMs)) << service_->output();
      EXPECT_EQ(service_->exit_code(), 0) << service_->output();
    }
  }

  const std::string consumer_socket_;
  std::unique_ptr<base::Subprocess> service_;
};

TEST_F(TracingBackendsTest, EachBackendsSessionGetsItsEvents) {
  service_.reset(
      new base::Subprocess({bin_ + "/ringtraced", "--producer-socket", socket_,
                            "--consumer-socket", consumer_socket_}));
  const std::string error =
      test::StartRingtraced(service_.get(), socket_, kTimeoutMs);
  ASSERT_TRUE(error.empty()) << error;

  TracingInitArgs args;
  args.backends = kSystemBackend | kInProcessBackend;
  args.system.producer.socket_path = socket_;
  args.system.producer.name = "both_system";
  args.system_consumer_socket_path = consumer_socket_;
  args.in_process.producer.name = "both_in_process";
  base::Status status;
  std::unique_ptr<TracingBackends> backends =
      TracingBackends::Initialize(args, &status);
  ASSERT_TRUE(backends) << status.message();
  EXPECT_EQ(backends->backends(), kAllBackends);
  ASSERT_TRUE(backends->in_process());
  Tracing* system = backends->tracing(kSystemBackend);
  ASSERT_TRUE(system);
  EXPECT_EQ(backends->tracing(kInProcessBackend),
            backends->in_process()->tracing());
  ASSERT_NE(system->WaitForConnection(0, kTimeoutMs), 0u);

  TracingSessionOptions options;
  options.timeout_ms = kTimeoutMs;
  options.wait_for_data_source_start = true;
  std::unique_ptr<TracingSession> sys =
      backends->NewSession(kSystemBackend, options, &status);
  ASSERT_TRUE(sys) << status.message();
  std::unique_ptr<TracingSession> inproc =
      backends->NewSession(kInProcessBackend, options, &status);
  ASSERT_TRUE(inproc) << status.message();
  ASSERT_TRUE(sys->SetupFromText(ConfigEnabling("both.system")).ok());
  ASSERT_TRUE(inproc->SetupFromText(ConfigEnabling("both.inproc")).ok());
  status = sys->StartBlocking();
  ASSERT_TRUE(status.ok()) << status.message();
  status = inproc->StartBlocking();
  ASSERT_TRUE(status.ok()) << status.message();
  // The in-process backend had the data source before its session: the
  // start barrier covers it.
  ASSERT_TRUE(RT_TRACE_EVENT_CATEGORY_ENABLED("both.inproc"));
  // The system connection registers its data sources just after it is in
  // place: ringtraced may get the registration after the session's start,
  // and then starts the instance at the registration, which the barrier
  // does not wait for.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
  while (!RT_TRACE_EVENT_CATEGORY_ENABLED("both.system") &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(RT_TRACE_EVENT_CATEGORY_ENABLED("both.system"));

  constexpr int kEvents = 100;
  std::thread other([] {
    for (int i = 0; i < kEvents; i++) {
      RT_TRACE_EVENT("both.system", "SystemOnly", "i", i);
      RT_TRACE_EVENT("both.inproc", "InProcessOnly", "i", i);
      RT_TRACE_EVENT("both.shared", "Shared", "i", i);
    }
  });
  other.join();
  ASSERT_TRUE(sys->StopBlocking().ok());
  ASSERT_TRUE(inproc->StopBlocking().ok());
  std::string sys_trace, inproc_trace;
  ASSERT_TRUE(sys->ReadTraceBlocking(&sys_trace).ok());
  ASSERT_TRUE(inproc->ReadTraceBlocking(&inproc_trace).ok());
  const test::DecodedEvents s = test::DecodeEvents(sys_trace, getpid());
  const test::DecodedEvents p = test::DecodeEvents(inproc_trace, getpid());
  ASSERT_TRUE(s.parsed && p.parsed);
  EXPECT_EQ(s.begins("SystemOnly"), uint64_t{kEvents});
  EXPECT_EQ(s.begins("InProcessOnly"), 0u);
  EXPECT_EQ(s.begins("Shared"), uint64_t{kEvents});
  EXPECT_EQ(p.begins("SystemOnly"), 0u);
  EXPECT_EQ(p.begins("InProcessOnly"), uint64_t{kEvents});
  EXPECT_EQ(p.begins("Shared"), uint64_t{kEvents});
  EXPECT_EQ(s.slice_ends, 2u * kEvents);
  EXPECT_EQ(p.slice_ends, 2u * kEvents);
  EXPECT_EQ(sys->summary().packets_lost, 0u);
  EXPECT_EQ(inproc->summary().packets_lost, 0u);
}

TEST(TracingBackendsArgsTest, RefusesWhatItCannotDo) {
  base::Status status;
  TracingInitArgs args;
  args.backends = 0;
  EXPECT_FALSE(TracingBackends::Initialize(args, &status));
  EXPECT_NE(status.message().find("backends 0x0"), std::string::npos)
      << status.message();
  args.backends = 4;
  EXPECT_FALSE(TracingBackends::Initialize(args, &status));
  // The in-process backend alone: no system connection, no system session.
  args.backends = kInProcessBackend;
  std::unique_ptr<TracingBackends> backends =
      TracingBackends::Initialize(args, &status);
  ASSERT_TRUE(backends) << status.message();
  EXPECT_EQ(backends->tracing(kSystemBackend), nullptr);
  EXPECT_FALSE(backends->NewSession(kSystemBackend, &status));
  EXPECT_NE(status.message().find("not one of this object's backends"),
            std::string::npos)
      << status.message();
  std::unique_ptr<TracingSession> session =
      backends->NewSession(kInProcessBackend, &status);
  EXPECT_TRUE(session) << status.message();
}

}  // namespace
}  // namespace ringtrace
