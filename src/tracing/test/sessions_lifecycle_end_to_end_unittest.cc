/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Session lifecycles with the real processes: the ringtraced daemon,
// ringtrace_session_app processes (ringtrace::Tracing, the "track_event"
// data source, numbered counter events) and ConsumerClient in this process.
// Every trace is checked packet by packet against the bounds the apps print
// around each instance's start and stop (session_app.h): each thread's
// events form one run of consecutive numbers that starts and ends where the
// bounds say, so a lost, duplicated or foreign packet fails the test.

#include "src/tracing/test/sessions_lifecycle_fixture.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "src/base/scoped_fd.h"
#include "src/tracing/core/shm_ring/writer_loss_area.h"
#include "src/tracing/ipc/consumer_protocol.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/ipc/wire_protocol.h"

namespace ringtrace {
namespace test {
namespace {

using perfetto::protos::TraceConfig;
constexpr auto kDiscard = TraceConfig::BufferConfig::DISCARD;

class SessionsLifecycleEndToEndTest : public SessionsLifecycleFixture {};

// Three sessions one after the other on one daemon while two apps write
// all along: each trace holds, per app thread, exactly the run of events
// its instance's bounds allow, nothing lost and nothing of another window.
TEST_F(SessionsLifecycleEndToEndTest, StartStopRepeatedlyWhileAppsWrite) {
  std::unique_ptr<base::Subprocess> service = StartService({});
  ASSERT_TRUE(service);
  SessionApp apps[2];
  for (SessionApp& app : apps)
    ASSERT_TRUE(StartApp(&app, 2, {"--pause-us", "1000"}));
  std::unique_ptr<consumer::ConsumerClient> consumer = ConnectConsumer();
  ASSERT_TRUE(consumer);
  std::vector<uint64_t> prev_after(2, 0);
  for (size_t round = 1; round <= 3; round++) {
    const std::string path = dir_ + "/round" + std::to_string(round);
    base::ScopedFd fd = CreateTraceFile(path);
    uint64_t session = 0;
    ASSERT_TRUE(
        consumer->EnableTracing(AppConfig(8192, kDiscard), fd.get(), &session)
            .ok());
    InstanceBounds bounds[2];
    for (int i = 0; i < 2; i++) {
      ASSERT_TRUE(apps[i].WaitStart(round, kTimeoutMs, &bounds[i]));
      ASSERT_TRUE(apps[i].WaitProgress(Plus(bounds[i].first, 100), kTimeoutMs));
    }
    protos::SessionSummary summary;
    ASSERT_TRUE(consumer->DisableTracing(session, kTimeoutMs, &summary).ok());
    EXPECT_EQ(summary.packets_lost(), 0u);
    for (int i = 0; i < 2; i++) {
      ASSERT_TRUE(apps[i].WaitStop(kTimeoutMs, &bounds[i]));
      const DecodedTrace trace = DecodeTrace(path, apps[i].pid());
      EXPECT_TRUE(HoldsInstance(trace, bounds[i], /*lossless=*/true))
          << "round " << round << " app " << i;
      EXPECT_TRUE(NoLossInStats(trace));
      // The windows of consecutive sessions do not overlap.
      EXPECT_GE(bounds[i].before[0], prev_after[i]);
      prev_after[i] = bounds[i].after[0];
    }
  }
  StopService(service.get(), "3 started, 3 written");
}

// A clone taken while the session runs holds, per thread, a prefix of what
// the session's own file holds at the end; that file is complete.
TEST_F(SessionsLifecycleEndToEndTest, CloneDuringSessionIsPrefixOfFinalTrace) {
  std::unique_ptr<base::Subprocess> service = StartService({});
  ASSERT_TRUE(service);
  SessionApp app;
  ASSERT_TRUE(StartApp(&app, 2, {"--pause-us", "500"}));
  std::unique_ptr<consumer::ConsumerClient> consumer = ConnectConsumer();
  ASSERT_TRUE(consumer);
  const std::string path = dir_ + "/session", clone_path = dir_ + "/clone";
  base::ScopedFd fd = CreateTraceFile(path);
  base::ScopedFd clone_fd = CreateTraceFile(clone_path);
  uint64_t session = 0;
  ASSERT_TRUE(
      consumer->EnableTracing(AppConfig(8192, kDiscard), fd.get(), &session)
          .ok());
  InstanceBounds bounds;
  ASSERT_TRUE(app.WaitStart(1, kTimeoutMs, &bounds));
  ASSERT_TRUE(app.WaitProgress(Plus(bounds.first, 2000), kTimeoutMs));
  base::Status status = consumer->CloneSession(session, clone_fd.get());
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<uint64_t> at_clone;
  ASSERT_TRUE(app.Mark(kTimeoutMs, &at_clone));
  ASSERT_TRUE(app.WaitProgress(Plus(at_clone, 500), kTimeoutMs));
  ASSERT_TRUE(consumer->DisableTracing(session, kTimeoutMs, nullptr).ok());
  ASSERT_TRUE(app.WaitStop(kTimeoutMs, &bounds));

  const DecodedTrace final_trace = DecodeTrace(path, app.pid());
  EXPECT_TRUE(HoldsInstance(final_trace, bounds, /*lossless=*/true));
  EXPECT_TRUE(NoLossInStats(final_trace));
  const DecodedTrace clone = DecodeTrace(clone_path, app.pid());
  ASSERT_TRUE(clone.parsed);
  EXPECT_TRUE(NoLossInStats(clone));
  for (uint32_t k = 0; k < app.threads(); k++) {
    const std::vector<const AppSequence*> c = SequencesOf(clone, k);
    const std::vector<const AppSequence*> f = SequencesOf(final_trace, k);
    ASSERT_EQ(c.size(), 1u) << "thread " << k;
    ASSERT_EQ(f.size(), 1u) << "thread " << k;
    // A prefix: the clone's numbers are the first ones of the final run,
    // and it holds none written after the clone was answered.
    ASSERT_LE(c[0]->numbers.size(), f[0]->numbers.size());
    EXPECT_TRUE(std::equal(c[0]->numbers.begin(), c[0]->numbers.end(),
                           f[0]->numbers.begin()))
        << "thread " << k;
    EXPECT_LT(c[0]->numbers.back(), at_clone[k]);
    EXPECT_EQ(c[0]->other_packets, kDescriptorsPerSequence);
  }
  StopService(service.get(), "1 started, 1 written");
}

// SIGTERM writes the running session whole and tells its consumer; the apps
// stay up, reconnect to the restarted daemon on the same sockets, and a
// session there gets their packets.
TEST_F(SessionsLifecycleEndToEndTest, RestartedDaemonGetsTheReconnectedApps) {
  std::unique_ptr<base::Subprocess> old_service = StartService({});
  ASSERT_TRUE(old_service);
  SessionApp app;
  ASSERT_TRUE(StartApp(&app, 2, {"--pause-us", "1000"}));
  std::unique_ptr<consumer::ConsumerClient> consumer = ConnectConsumer();
  ASSERT_TRUE(consumer);
  const std::string old_path = dir_ + "/old", new_path = dir_ + "/new";
  base::ScopedFd old_fd = CreateTraceFile(old_path);
  uint64_t session = 0;
  ASSERT_TRUE(
      consumer->EnableTracing(AppConfig(8192, kDiscard), old_fd.get(), &session)
          .ok());
  InstanceBounds old_bounds;
  ASSERT_TRUE(app.WaitStart(1, kTimeoutMs, &old_bounds));
  ASSERT_TRUE(app.WaitProgress(Plus(old_bounds.first, 200), kTimeoutMs));
  // Every event ended before this mark is in the ring before SIGTERM.
  std::vector<uint64_t> ended;
  ASSERT_TRUE(app.Mark(kTimeoutMs, &ended));
  StopService(old_service.get(), "1 started, 1 written");
  bool got_event = false;
  ASSERT_TRUE(consumer->WaitForEvent(kTimeoutMs, &got_event).ok() || got_event);
  protos::ConsumerResponse event;
  ASSERT_TRUE(consumer->TakeEvent(&event));
  EXPECT_TRUE(event.tracing_ended());
  EXPECT_EQ(event.session_id(), session);
  ASSERT_TRUE(app.WaitStop(kTimeoutMs, &old_bounds));
  // The stop the service did not wait for: what ended before the mark is
  // the lower bound of the end.
  old_bounds.last = ended;
  const DecodedTrace old_trace = DecodeTrace(old_path, app.pid());
  EXPECT_TRUE(HoldsInstance(old_trace, old_bounds, /*lossless=*/true));
  EXPECT_TRUE(NoLossInStats(old_trace));

  std::unique_ptr<base::Subprocess> new_service = StartService({});
  ASSERT_TRUE(new_service);
  std::vector<std::string> fields;
  ASSERT_TRUE(app.WaitLine("CONNECTED", 2, kTimeoutMs, &fields));
  consumer = ConnectConsumer();
  ASSERT_TRUE(consumer);
  base::ScopedFd new_fd = CreateTraceFile(new_path);
  ASSERT_TRUE(
      consumer->EnableTracing(AppConfig(8192, kDiscard), new_fd.get(), &session)
          .ok());
  InstanceBounds new_bounds;
  ASSERT_TRUE(app.WaitStart(2, kTimeoutMs, &new_bounds));
  EXPECT_EQ(new_bounds.generation, 2u);
  ASSERT_TRUE(app.WaitProgress(Plus(new_bounds.first, 200), kTimeoutMs));
  ASSERT_TRUE(consumer->DisableTracing(session, kTimeoutMs, nullptr).ok());
  ASSERT_TRUE(app.WaitStop(kTimeoutMs, &new_bounds));
  const DecodedTrace new_trace = DecodeTrace(new_path, app.pid());
  EXPECT_TRUE(HoldsInstance(new_trace, new_bounds, /*lossless=*/true));
  EXPECT_TRUE(NoLossInStats(new_trace));
  StopService(new_service.get(), "1 started, 1 written");
}

// Consumers that break the rules against the real daemon, each refused or
// dropped with a clear reason, while a well-behaved session beside them
// gets every packet.
TEST_F(SessionsLifecycleEndToEndTest, HostileConsumersBesideAGoodSession) {
  std::unique_ptr<base::Subprocess> service =
      StartService({"--max-sessions", "3", "--max-buffer-mb", "64"});
  ASSERT_TRUE(service);
  SessionApp app;
  ASSERT_TRUE(StartApp(&app, 2, {"--pause-us", "1000"}));
  std::unique_ptr<consumer::ConsumerClient> good = ConnectConsumer();
  ASSERT_TRUE(good);
  const std::string path = dir_ + "/good";
  base::ScopedFd fd = CreateTraceFile(path);
  uint64_t session = 0;
  ASSERT_TRUE(
      good->EnableTracing(AppConfig(8192, kDiscard), fd.get(), &session).ok());
  InstanceBounds bounds;
  ASSERT_TRUE(app.WaitStart(1, kTimeoutMs, &bounds));

  ExpectMalformedDatagramCloses();
  ExpectInvalidConfigRefused();
  ExpectLimitsRefused();
  ExpectNonReaderDropped();

  ASSERT_TRUE(app.WaitProgress(Plus(bounds.first, 200), kTimeoutMs));
  protos::SessionSummary summary;
  ASSERT_TRUE(good->DisableTracing(session, kTimeoutMs, &summary).ok());
  EXPECT_EQ(summary.packets_lost(), 0u);
  ASSERT_TRUE(app.WaitStop(kTimeoutMs, &bounds));
  const DecodedTrace trace = DecodeTrace(path, app.pid());
  EXPECT_TRUE(HoldsInstance(trace, bounds, /*lossless=*/true));
  EXPECT_TRUE(NoLossInStats(trace));
  StopService(service.get(),
              "1 dropped for not reading, 1 protocol violations");
}

// A hostile producer, run as another user (nobody) when the test is root,
// claims 2 x 10^12 lost packets for the buffer the next session will get,
// both in a final loss report and in its ring's writer loss area, and
// leaves. The next session (another user's, with a real app) reports no
// loss at all: the claims were counted as unattributed, in no session.
TEST_F(SessionsLifecycleEndToEndTest, ForgedLossReportsReachNoSession) {
  // Other users reach the producer socket as on a shared machine.
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  std::unique_ptr<base::Subprocess> service = StartService({});
  ASSERT_TRUE(service);
  const pid_t forger = ForkHostileProducer(
      "forger", [](ipc::UnixSocket* socket, producer::HandshakeResult* hello) {
        // Session buffers are numbered from 1: the next session's is 1.
        auto* slot = reinterpret_cast<shm_ring::WriterLossSlot*>(
            hello->region->trailer());
        if (!slot)
          return 13;
        slot->ids.store(shm_ring::PackLossSlotIds(1, 1),
                        std::memory_order_relaxed);
        slot->packets_dropped_before_end.store(2000000000000ull,
                                               std::memory_order_relaxed);
        ipc::DrainRequestMsg report;
        report.flags = ipc::kLossReportFinal;
        report.num_entries = 1;
        report.entries[0].writer_id = 2;
        report.entries[0].target_buffer = 1;
        report.entries[0].packets_dropped_before_end = 2000000000000ull;
        uint8_t buf[ipc::kMaxProducerMessageSize];
        const size_t n = ipc::EncodeLossReport(report, buf, sizeof(buf));
        if (n == 0 || !socket->Send(buf, n).ok())
          return 14;
        return 0;
      });
  ASSERT_GE(forger, 0);
  ASSERT_TRUE(ExitedWith0(forger));

  SessionApp app;
  ASSERT_TRUE(StartApp(&app, 1, {"--pause-us", "1000"}));
  std::unique_ptr<consumer::ConsumerClient> consumer = ConnectConsumer();
  ASSERT_TRUE(consumer);
  const std::string path = dir_ + "/session";
  base::ScopedFd fd = CreateTraceFile(path);
  uint64_t session = 0;
  ASSERT_TRUE(
      consumer->EnableTracing(AppConfig(8192, kDiscard), fd.get(), &session)
          .ok());
  InstanceBounds bounds;
  ASSERT_TRUE(app.WaitStart(1, kTimeoutMs, &bounds));
  ASSERT_TRUE(app.WaitProgress(Plus(bounds.first, 200), kTimeoutMs));
  protos::SessionSummary summary;
  ASSERT_TRUE(consumer->DisableTracing(session, kTimeoutMs, &summary).ok());
  EXPECT_EQ(summary.packets_lost(), 0u);
  ASSERT_TRUE(app.WaitStop(kTimeoutMs, &bounds));
  const DecodedTrace trace = DecodeTrace(path, app.pid());
  EXPECT_TRUE(HoldsInstance(trace, bounds, /*lossless=*/true));
  EXPECT_TRUE(NoLossInStats(trace));
  ASSERT_TRUE(trace.has_stats);
  EXPECT_EQ(trace.stats.ringtrace_producer_loss_size(), 0);
  // The claims are counted, as claims nobody owns.
  EXPECT_EQ(trace.stats.ringtrace_loss_entries_unattributed(), 2u);
  StopService(service.get(), "1 started, 1 written");
}

// A producer of another user registers track_event and then never reads
// its socket: it answers no stop. The first session waits its stop timeout
// (1 s) for it and counts it; the next ones, whose stop timeout is ten
// minutes, end as soon as the real app answered (their DisableTracing
// would otherwise outlast its 120 s deadline), each counting the stuck
// producer's instance as a timeout, with every app event in its trace.
TEST_F(SessionsLifecycleEndToEndTest, AStuckProducerDelaysOnlyOneStop) {
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  std::unique_ptr<base::Subprocess> service = StartService({});
  ASSERT_TRUE(service);
  int registered[2];
  ASSERT_EQ(pipe(registered), 0);
  const pid_t stuck = ForkHostileProducer(
      "stuck", [&](ipc::UnixSocket* socket, producer::HandshakeResult*) {
        ipc::RegisterDataSourceMsg msg;
        msg.name = "track_event";
        uint8_t buf[ipc::kMaxProducerMessageSize];
        const size_t n = ipc::EncodeRegisterDataSource(msg, buf, sizeof(buf));
        if (n == 0 || !socket->Send(buf, n).ok())
          return 15;
        if (write(registered[1], "r", 1) != 1)
          return 16;
        for (;;)
          pause();  // reads nothing, answers nothing, until killed
      });
  ASSERT_GE(stuck, 0);
  close(registered[1]);
  char ready = 0;
  ASSERT_EQ(read(registered[0], &ready, 1), 1);
  close(registered[0]);

  SessionApp app;
  ASSERT_TRUE(StartApp(&app, 1, {"--pause-us", "1000"}));
  std::unique_ptr<consumer::ConsumerClient> consumer = ConnectConsumer();
  ASSERT_TRUE(consumer);
  InstanceBounds bounds;
  for (uint32_t i = 1; i <= 3; ++i) {
    TraceConfig config = AppConfig(8192, kDiscard);
    config.set_data_source_stop_timeout_ms(i == 1 ? 1000 : 600000);
    const std::string path = dir_ + "/session" + std::to_string(i);
    base::ScopedFd fd = CreateTraceFile(path);
    uint64_t session = 0;
    ASSERT_TRUE(consumer->EnableTracing(config, fd.get(), &session).ok());
    ASSERT_TRUE(app.WaitStart(i, kTimeoutMs, &bounds));
    ASSERT_TRUE(app.WaitProgress(Plus(bounds.first, 100), kTimeoutMs));
    protos::SessionSummary summary;
    const base::Status status =
        consumer->DisableTracing(session, kTimeoutMs, &summary);
    ASSERT_TRUE(status.ok()) << "session " << i << ": " << status.message();
    ASSERT_TRUE(app.WaitStop(kTimeoutMs, &bounds));
    const DecodedTrace trace = DecodeTrace(path, app.pid());
    EXPECT_TRUE(HoldsInstance(trace, bounds, /*lossless=*/true)) << i;
    ASSERT_TRUE(trace.has_stats);
    EXPECT_EQ(trace.stats.ringtrace_data_source_stop_timeouts(), 1u) << i;
  }
  kill(stuck, SIGKILL);
  int wstatus = 0;
  ASSERT_EQ(waitpid(stuck, &wstatus, 0), stuck);
  EXPECT_TRUE(WIFSIGNALED(wstatus)) << wstatus;
  StopService(service.get(), "3 started, 3 written");
}

}  // namespace
}  // namespace test
}  // namespace ringtrace
