/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// A producer that does not answer a stop or a flush delays that one stop or
// flush by its timeout, counted; later ones, and the ones waiting beside it,
// do not wait for it until it has answered (ServiceCore's Producer::overdue).

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "src/tracing/service/traced/service_core.h"
#include "src/tracing/service/traced/test/sessions_fixture.h"

namespace ringtrace {
namespace traced {
namespace {

using perfetto::protos::TraceConfig;
using test::OneBufferConfig;
using test::ProducerSide;
using trace_buffer::ProducerID;
using Cmd = ProducerCommand::Type;
using std::chrono::milliseconds;

class StuckProducerTest : public test::SessionsFixture {
 protected:
  void SetUp() override {
    SessionsFixture::SetUp();
    stuck_ = AddProducer("stuck", {"track_event"}, &stuck_side_);
    good_ = AddProducer("good", {"track_event"}, &good_side_);
  }

  // Starts a session whose stop waits |stop_timeout_ms|; drops the starts.
  SessionId StartWithTimeouts(const std::string& file,
                              uint32_t stop_timeout_ms,
                              uint32_t flush_timeout_ms = 1000) {
    TraceConfig config = OneBufferConfig();
    config.set_data_source_stop_timeout_ms(stop_timeout_ms);
    config.set_flush_timeout_ms(flush_timeout_ms);
    const SessionId id = Start(config, file);
    EXPECT_EQ(core_->sessions()->TakeCommands().size(), 2u);
    return id;
  }

  // The command of |type| to |producer| among |cmds| (its id; 0: none).
  static uint32_t CommandFor(const std::vector<ProducerCommand>& cmds,
                             Cmd type,
                             ProducerID producer) {
    for (const ProducerCommand& c : cmds) {
      if (c.type == type && c.producer_id == producer)
        return c.id;
    }
    return 0;
  }

  // Stops |id| at |when| and answers for the good producer only; returns
  // the stuck producer's instance id.
  uint32_t StopAnsweringForGoodOnly(SessionId id,
                                    ServiceCore::Clock::time_point when) {
    EXPECT_TRUE(core_->sessions()->StopSession(id, /*tag=*/1, when).ok());
    const std::vector<ProducerCommand> stops =
        core_->sessions()->TakeCommands();
    EXPECT_EQ(stops.size(), 2u);
    const uint32_t good = CommandFor(stops, Cmd::kStopDataSource, good_);
    EXPECT_TRUE(core_->sessions()->OnDataSourceStopped(good_, good, when).ok());
    return CommandFor(stops, Cmd::kStopDataSource, stuck_);
  }

  uint64_t StopTimeoutsIn(const std::string& file) {
    return StatsOf(ReadTrace(file)).ringtrace_data_source_stop_timeouts();
  }

  std::unique_ptr<ProducerSide> stuck_side_, good_side_;
  ProducerID stuck_ = 0;
  ProducerID good_ = 0;
};

// The first stop waits its timeout for the stuck producer; the next ends as
// soon as the good producer answers, the stuck one's instance counted as a
// timeout. Once the stuck producer answered both, stops wait for it again.
TEST_F(StuckProducerTest, DelaysOneStopNotTheNext) {
  const SessionId s1 = StartWithTimeouts("s1", 2000);
  const uint32_t late1 = StopAnsweringForGoodOnly(s1, now_);
  core_->sessions()->AdvanceSessions(now_ + milliseconds(1999));
  EXPECT_TRUE(core_->sessions()->TakeEvents().empty());  // waited for
  core_->sessions()->AdvanceSessions(now_ + milliseconds(2000));
  ASSERT_EQ(core_->sessions()->TakeEvents().size(), 1u);
  EXPECT_EQ(StopTimeoutsIn("s1"), 1u);

  const ServiceCore::Clock::time_point t2 = now_ + milliseconds(3000);
  const SessionId s2 = StartWithTimeouts("s2", 2000);
  const uint32_t late2 = StopAnsweringForGoodOnly(s2, t2);
  // Ended by the good producer's answer, with no time passing.
  std::vector<SessionEvent> events = core_->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].session_id, s2);
  EXPECT_TRUE(events[0].status.ok());
  EXPECT_EQ(StopTimeoutsIn("s2"), 1u);
  EXPECT_EQ(core_->sessions()->session_stats().data_source_stop_timeouts, 2u);

  // Its late answers are accepted; then it is waited for again.
  ASSERT_TRUE(core_->sessions()->OnDataSourceStopped(stuck_, late1, t2).ok());
  ASSERT_TRUE(core_->sessions()->OnDataSourceStopped(stuck_, late2, t2).ok());
  EXPECT_EQ(core_->sessions()->session_stats().late_acks, 2u);
  const SessionId s3 = StartWithTimeouts("s3", 2000);
  const uint32_t stuck3 = StopAnsweringForGoodOnly(s3, t2);
  EXPECT_TRUE(core_->sessions()->TakeEvents().empty());
  ASSERT_TRUE(core_->sessions()->OnDataSourceStopped(stuck_, stuck3, t2).ok());
  events = core_->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(StopTimeoutsIn("s3"), 0u);
  EXPECT_EQ(core_->sessions()->session_stats().data_source_stop_timeouts, 2u);
}

// One answer of two still owed keeps it overdue: stops do not wait for it.
TEST_F(StuckProducerTest, StaysOverdueWhileItOwesATimedOutAnswer) {
  const SessionId s1 = StartWithTimeouts("s1", 1000);
  StopAnsweringForGoodOnly(s1, now_);
  core_->sessions()->AdvanceSessions(now_ + milliseconds(1000));
  ASSERT_EQ(core_->sessions()->TakeEvents().size(), 1u);
  const SessionId s2 = StartWithTimeouts("s2", 1000);
  const uint32_t late2 = StopAnsweringForGoodOnly(s2, now_);
  ASSERT_EQ(core_->sessions()->TakeEvents().size(), 1u);
  // Answers s2's stop, not s1's.
  ASSERT_TRUE(core_->sessions()->OnDataSourceStopped(stuck_, late2, now_).ok());
  const SessionId s3 = StartWithTimeouts("s3", 1000);
  StopAnsweringForGoodOnly(s3, now_);
  ASSERT_EQ(core_->sessions()->TakeEvents().size(), 1u);
  EXPECT_EQ(StopTimeoutsIn("s3"), 1u);
}

// Two sessions stop together, with different timeouts: when the shorter
// one times out, the stuck producer is overdue and the other session,
// which waited only for it, ends in the same round, not at its own
// deadline.
TEST_F(StuckProducerTest, SessionsStoppingBesideItEndWhenTheFirstTimesOut) {
  const SessionId s1 = StartWithTimeouts("s1", 5000);
  const SessionId s2 = StartWithTimeouts("s2", 1000);
  StopAnsweringForGoodOnly(s1, now_);
  StopAnsweringForGoodOnly(s2, now_);
  EXPECT_EQ(core_->sessions()->NextDeadline(), now_ + milliseconds(1000));
  core_->sessions()->AdvanceSessions(now_ + milliseconds(999));
  EXPECT_TRUE(core_->sessions()->TakeEvents().empty());
  core_->sessions()->AdvanceSessions(now_ + milliseconds(1000));
  const std::vector<SessionEvent> events = core_->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(StopTimeoutsIn("s1"), 1u);
  EXPECT_EQ(StopTimeoutsIn("s2"), 1u);
}

// Flushes: the first waits its timeout; the next completes when the good
// producer answers, reporting the stuck one as not waited for; after its
// late answers it is waited for again.
TEST_F(StuckProducerTest, FlushesDoNotWaitForItOnceOverdue) {
  const SessionId s = StartWithTimeouts("s", 1000, /*flush_timeout_ms=*/1000);
  auto flush_answering_good = [&](uint64_t tag) {
    EXPECT_TRUE(core_->sessions()->FlushSession(s, 0, tag, now_).ok());
    const std::vector<ProducerCommand> flushes =
        core_->sessions()->TakeCommands();
    EXPECT_EQ(flushes.size(), 2u);  // both are sent the flush
    EXPECT_TRUE(
        core_->sessions()
            ->OnFlushAck(good_, CommandFor(flushes, Cmd::kFlush, good_), now_)
            .ok());
    return CommandFor(flushes, Cmd::kFlush, stuck_);
  };
  const uint32_t late1 = flush_answering_good(1);
  EXPECT_TRUE(core_->sessions()->TakeEvents().empty());
  core_->sessions()->AdvanceSessions(now_ + milliseconds(1000));
  std::vector<SessionEvent> events = core_->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].status.ok());

  const uint32_t late2 = flush_answering_good(2);
  events = core_->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, SessionEvent::Type::kFlushed);
  EXPECT_EQ(events[0].tag, 2u);
  ASSERT_FALSE(events[0].status.ok());
  EXPECT_NE(events[0].status.message().find("not waited for"),
            std::string::npos)
      << events[0].status.message();
  EXPECT_EQ(core_->sessions()->session_stats().flush_timeouts, 2u);

  ASSERT_TRUE(core_->sessions()->OnFlushAck(stuck_, late1, now_).ok());
  ASSERT_TRUE(core_->sessions()->OnFlushAck(stuck_, late2, now_).ok());
  const uint32_t waited = flush_answering_good(3);
  EXPECT_TRUE(core_->sessions()->TakeEvents().empty());
  ASSERT_TRUE(core_->sessions()->OnFlushAck(stuck_, waited, now_).ok());
  events = core_->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].status.ok()) << events[0].status.message();

  const SessionEvent ended = StopAndAck(s);
  EXPECT_TRUE(ended.status.ok());
  const perfetto::protos::Trace trace = ReadTrace("s");
  const perfetto::protos::TraceStats& stats = StatsOf(trace);
  EXPECT_EQ(stats.ringtrace_flush_timeouts(), 2u);
  EXPECT_EQ(stats.ringtrace_late_acks(), 2u);
}

// A flush waiting for the stuck producer completes once a stop's timeout
// made it overdue.
TEST_F(StuckProducerTest, APendingFlushEndsWhenAStopMadeItOverdue) {
  const SessionId stopping = StartWithTimeouts("stopping", 1000);
  const SessionId flushing =
      StartWithTimeouts("flushing", 1000, /*flush_timeout_ms=*/60000);
  ASSERT_TRUE(core_->sessions()->FlushSession(flushing, 0, 7, now_).ok());
  const std::vector<ProducerCommand> flushes =
      core_->sessions()->TakeCommands();
  ASSERT_TRUE(
      core_->sessions()
          ->OnFlushAck(good_, CommandFor(flushes, Cmd::kFlush, good_), now_)
          .ok());
  StopAnsweringForGoodOnly(stopping, now_);
  EXPECT_TRUE(core_->sessions()->TakeEvents().empty());
  core_->sessions()->AdvanceSessions(now_ + milliseconds(1000));
  const std::vector<SessionEvent> events = core_->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 2u);  // the stop's end and the flush
  int flushed = 0;
  for (const SessionEvent& ev : events) {
    if (ev.type == SessionEvent::Type::kFlushed) {
      ++flushed;
      EXPECT_EQ(ev.session_id, flushing);
      EXPECT_FALSE(ev.status.ok());
    }
  }
  EXPECT_EQ(flushed, 1);
}

// A session aborted (its consumer left) or ended by the service waited for
// nobody: its producers are not made overdue.
TEST_F(StuckProducerTest, AnAbortedSessionMakesNobodyOverdue) {
  const SessionId s1 = StartWithTimeouts("s1", 1000);
  core_->sessions()->AbortSession(s1);
  (void)core_->sessions()->TakeCommands();
  const SessionId s2 = StartWithTimeouts("s2", 1000);
  StopAnsweringForGoodOnly(s2, now_);
  EXPECT_TRUE(
      core_->sessions()->TakeEvents().empty());  // waits for the stuck one
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
