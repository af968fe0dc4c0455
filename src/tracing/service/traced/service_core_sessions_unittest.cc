/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ServiceCore's consumer sessions: routing by BufferID, stop with acks,
// flush, clone, limits, hostile producer answers.

#include "src/tracing/service/traced/service_core.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/ipc/consumer_protocol.h"
#include "src/tracing/service/traced/session_start_warnings.h"
#include "src/tracing/service/traced/test/core_fixture.h"
#include "src/tracing/service/traced/test/sessions_fixture.h"
#include "src/tracing/service/traced/test/test_client.h"

namespace ringtrace {
namespace traced {
namespace {

using base::TempDir;
using perfetto::protos::TraceConfig;
using test::AddDataSource;
using test::CollectTestPackets;
using test::Identity;
using test::MakeCore;
using test::MakeHello;
using test::OneBufferConfig;
using test::OpenOut;
using test::ProducerSide;
using test::ReadTraceFile;
using test::Seqs;
using test::SessionOptions;
using test::WriteTestPackets;
using trace_buffer::ProducerID;
using Clock = ServiceCore::Clock;
using Cmd = ProducerCommand::Type;

class SessionsTest : public test::SessionsFixture {};

// The StartDataSource commands of |cmds| for |producer|.
std::vector<ProducerCommand> StartsFor(const std::vector<ProducerCommand>& cmds,
                                       ProducerID producer) {
  std::vector<ProducerCommand> out;
  for (const ProducerCommand& c : cmds) {
    if (c.type == Cmd::kStartDataSource && c.producer_id == producer)
      out.push_back(c);
  }
  return out;
}

TEST_F(SessionsTest, StartWarnsOfDataSourcesNoProducerServes) {
  std::unique_ptr<ProducerSide> side;
  AddProducer("app1", {"track_event"}, &side);
  TraceConfig config = OneBufferConfig();
  AddDataSource(&config, "linux.ftrace", 0);
  TraceConfig::DataSource* filtered = AddDataSource(&config, "track_event", 0);
  filtered->add_producer_name_filter("app2");
  const SessionId id = Start(config, "w");
  const std::vector<std::string> warnings =
      core_->sessions()->StartWarnings(id);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("\"linux.ftrace\": no connected producer"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[1].find("excludes the producer that provides it "
                             "(\"app1\")"),
            std::string::npos)
      << warnings[1];
  EXPECT_TRUE(core_->sessions()->StartWarnings(id + 100).empty());

  // Every data source served: nothing to say.
  const SessionId quiet = Start(OneBufferConfig(), "q");
  EXPECT_TRUE(core_->sessions()->StartWarnings(quiet).empty());
}

TEST_F(SessionsTest, StartWarnsOfOnDemandProcessesWithoutTaskRename) {
  std::unique_ptr<ProducerSide> app, probes;
  AddProducer("app", {"track_event"}, &app);
  AddProducer("probes", {"linux.ftrace", "linux.process_stats"}, &probes);
  TraceConfig config = OneBufferConfig();
  AddDataSource(&config, "linux.process_stats", 0)
      ->mutable_config()
      ->mutable_process_stats_config()
      ->set_scan_all_processes_on_start(true);
  perfetto::protos::FtraceConfig* ftrace =
      AddDataSource(&config, "linux.ftrace", 0)
          ->mutable_config()
          ->mutable_ftrace_config();
  ftrace->add_ftrace_events("sched/sched_switch");
  const SessionId id = Start(config, "w");
  const std::vector<std::string> warnings =
      core_->sessions()->StartWarnings(id);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("\"linux.process_stats\": it describes "
                             "processes on demand, but no linux.ftrace data "
                             "source of this session records "
                             "task/task_rename"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("add \"task/task_rename\" to ftrace_events"),
            std::string::npos)
      << warnings[0];

  // Counted under the same bound as the others: the unstarted data
  // sources fill it, their summary last.
  TraceConfig crowded = config;
  for (size_t i = 0; i < kMaxStartWarnings; ++i)
    AddDataSource(&crowded, "nobody" + std::to_string(i), 0);
  const std::vector<std::string> full =
      core_->sessions()->StartWarnings(Start(crowded, "c"));
  ASSERT_EQ(full.size(), kMaxStartWarnings);
  EXPECT_NE(full.back().find("more data sources"), std::string::npos)
      << full.back();

  // The session records the renames: nothing to say.
  ftrace->add_ftrace_events("task/task_rename");
  const SessionId quiet = Start(config, "q");
  EXPECT_TRUE(core_->sessions()->StartWarnings(quiet).empty());
}

TEST_F(SessionsTest, TwoSessionsGetOnlyTheChunksOfTheirBuffers) {
  std::unique_ptr<ProducerSide> side1, side2;
  const ProducerID p1 = AddProducer("app1", {"track_event"}, &side1);
  const ProducerID p2 = AddProducer("app2", {"track_event", "other"}, &side2);

  // A: one buffer, track_event of app1 only.
  TraceConfig config_a = OneBufferConfig();
  config_a.mutable_data_sources(0)->add_producer_name_filter("app1");
  config_a.mutable_data_sources(0)
      ->mutable_config()
      ->mutable_track_event_config()
      ->add_enabled_categories("cat*");
  const SessionId a = Start(config_a, "a");
  std::vector<ProducerCommand> cmds = core_->sessions()->TakeCommands();
  ASSERT_EQ(cmds.size(), 1u);
  EXPECT_EQ(cmds[0].producer_id, p1);
  EXPECT_EQ(cmds[0].data_source_name, "track_event");
  EXPECT_EQ(cmds[0].enabled_categories, std::vector<std::string>{"cat*"});
  const trace_buffer::BufferID buf_a = cmds[0].target_buffer;
  EXPECT_NE(buf_a, 0);

  // B: two buffers, track_event into the first, other into the second.
  TraceConfig config_b;
  config_b.add_buffers()->set_size_kb(256);
  config_b.add_buffers()->set_size_kb(128);
  AddDataSource(&config_b, "track_event", 0);
  AddDataSource(&config_b, "other", 1);
  const SessionId b = Start(config_b, "b");
  cmds = core_->sessions()->TakeCommands();
  ASSERT_EQ(cmds.size(), 3u);
  const std::vector<ProducerCommand> b_on_p1 = StartsFor(cmds, p1);
  const std::vector<ProducerCommand> b_on_p2 = StartsFor(cmds, p2);
  ASSERT_EQ(b_on_p1.size(), 1u);
  ASSERT_EQ(b_on_p2.size(), 2u);
  const trace_buffer::BufferID buf_b0 = b_on_p1[0].target_buffer;
  EXPECT_EQ(b_on_p2[0].target_buffer, buf_b0);
  const trace_buffer::BufferID buf_b1 = b_on_p2[1].target_buffer;
  EXPECT_NE(buf_b0, buf_a);
  EXPECT_NE(buf_b1, buf_a);
  EXPECT_NE(buf_b1, buf_b0);

  auto wa = side1->NewWriter(buf_a);
  auto wb1 = side1->NewWriter(buf_b0);
  auto wb2 = side2->NewWriter(buf_b0);
  auto wb3 = side2->NewWriter(buf_b1);
  WriteTestPackets(wa.get(), "a", 0, 100);
  WriteTestPackets(wb1.get(), "b1", 0, 50);
  WriteTestPackets(wb2.get(), "b2", 0, 30);
  WriteTestPackets(wb3.get(), "b3", 0, 20);
  wa->Flush();
  wb1->Flush();
  wb2->Flush();
  wb3->Flush();

  // A ends while B goes on.
  const SessionEvent ended_a = StopAndAck(a);
  EXPECT_EQ(ended_a.type, SessionEvent::Type::kEnded);
  EXPECT_EQ(ended_a.session_id, a);
  EXPECT_EQ(ended_a.consumer_id, 7u);
  EXPECT_EQ(ended_a.tag, 99u);
  EXPECT_FALSE(ended_a.by_service);
  EXPECT_TRUE(ended_a.status.ok()) << ended_a.status.message();
  EXPECT_EQ(ended_a.summary.export_stats.packets_exported, 100u);
  EXPECT_TRUE(core_->session_table()->has_session(b));
  EXPECT_FALSE(core_->session_table()->has_session(a));

  auto trace_a = ReadTrace("a");
  auto tagged_a = CollectTestPackets(trace_a);
  ASSERT_EQ(tagged_a.size(), 1u);
  EXPECT_EQ(tagged_a["a"].seqs, Seqs(0, 100));
  EXPECT_TRUE(trace_a.packet(0).has_trace_config());
  EXPECT_EQ(trace_a.packet(0).trace_config().buffers_size(), 1);
  EXPECT_EQ(StatsOf(trace_a).buffer_stats_size(), 1);

  // A chunk for A's buffer after A ended: unroutable, counted. One packet
  // and a flush: exactly one chunk.
  WriteTestPackets(wa.get(), "a", 100, 1);
  wa->Flush();
  WriteTestPackets(wb1.get(), "b1", 50, 50);
  wb1->Flush();

  const SessionEvent ended_b = StopAndAck(b);
  EXPECT_TRUE(ended_b.status.ok()) << ended_b.status.message();
  auto trace_b = ReadTrace("b");
  auto tagged_b = CollectTestPackets(trace_b);
  ASSERT_EQ(tagged_b.size(), 3u);
  EXPECT_EQ(tagged_b["b1"].seqs, Seqs(0, 100));
  EXPECT_EQ(tagged_b["b2"].seqs, Seqs(0, 30));
  EXPECT_EQ(tagged_b["b3"].seqs, Seqs(0, 20));
  EXPECT_EQ(StatsOf(trace_b).buffer_stats_size(), 2);
  EXPECT_EQ(ended_b.summary.drainer_stats.chunks_unroutable, 1u);
  EXPECT_EQ(StatsOf(trace_b).chunks_discarded(), 1u);
  EXPECT_EQ(core_->sessions()->session_stats().sessions_written, 2u);
  EXPECT_EQ(core_->session_table()->num_sessions(), 0u);
}

ipc::DrainRequestMsg LossReport(uint32_t writer,
                                uint32_t buffer,
                                uint64_t packets,
                                bool final_report = false) {
  ipc::DrainRequestMsg msg;
  msg.has_loss_report = true;
  msg.flags = final_report ? ipc::kLossReportFinal : 0;
  msg.num_entries = 1;
  msg.entries[0].writer_id = writer;
  msg.entries[0].target_buffer = buffer;
  msg.entries[0].packets_dropped_before_end = packets;
  return msg;
}

// A producer's loss report counts only in the session that owns the
// entry's buffer and that the producer serves; a claim for a buffer it does
// not serve, or a loss of an earlier session, is in no session's figures.
TEST_F(SessionsTest, LossReportsBelongToTheSessionOfTheirBuffer) {
  std::unique_ptr<ProducerSide> side1, side2;
  const ProducerID app = AddProducer("app", {"track_event"}, &side1);
  const ProducerID peer = AddProducer("peer", {"other"}, &side2);
  const SessionId a = Start(OneBufferConfig(), "a.pftrace");
  const std::vector<ProducerCommand> starts =
      StartsFor(core_->sessions()->TakeCommands(), app);
  ASSERT_EQ(starts.size(), 1u);
  const uint32_t buffer = starts[0].target_buffer;

  core_->OnLossReport(app, LossReport(3, buffer, 5));
  // |peer| serves no instance of session a: its claims are refused.
  core_->OnLossReport(peer, LossReport(1, buffer, 2000000000000ull, true));
  core_->OnLossReport(app, LossReport(4, buffer + 1, 7));  // not a's buffer
  EXPECT_EQ(core_->producers()->stats().loss_entries_unattributed, 2u);
  ASSERT_NE(core_->session_table()->session_loss_table(a), nullptr);
  EXPECT_EQ(
      core_->session_table()->session_loss_table(a)->totals().packets_dropped,
      5u);

  // The app reports more, finally, and leaves.
  core_->OnLossReport(app, LossReport(3, buffer, 9, true));
  core_->RemoveProducer(app);
  const SessionEvent ended = StopAndAck(a);
  EXPECT_EQ(ended.packets_lost, 9u);
  const perfetto::protos::TraceStats stats_a = StatsOf(ReadTrace("a.pftrace"));
  ASSERT_EQ(stats_a.ringtrace_producer_loss_size(), 1);
  EXPECT_EQ(stats_a.ringtrace_producer_loss(0).producer_name(), "app");
  EXPECT_TRUE(stats_a.ringtrace_producer_loss(0).final_report());
  EXPECT_EQ(stats_a.ringtrace_producer_loss(0).writers(0).target_buffer(),
            buffer);
  EXPECT_EQ(stats_a.ringtrace_packets_dropped_by_producers(), 9u);
  EXPECT_EQ(stats_a.ringtrace_loss_entries_unattributed(), 2u);

  // A later session sees none of it.
  const SessionId b = Start(OneBufferConfig(), "b.pftrace");
  core_->sessions()->TakeCommands();
  const SessionEvent ended_b = StopAndAck(b);
  EXPECT_EQ(ended_b.packets_lost, 0u);
  const perfetto::protos::TraceStats stats_b = StatsOf(ReadTrace("b.pftrace"));
  EXPECT_EQ(stats_b.ringtrace_producer_loss_size(), 0);
  EXPECT_EQ(stats_b.ringtrace_packets_dropped_by_producers(), 0u);
}

// The producers' reported losses go into the BufferStats of the buffer
// their writers wrote (Perfetto's trace_writer_packet_loss, per buffer):
// a session with two buffers, one data source on each.
TEST_F(SessionsTest, ReportedLossIsInTheBufferStatsOfItsBuffer) {
  std::unique_ptr<ProducerSide> side;
  const ProducerID app = AddProducer("app", {"track_event", "other"}, &side);
  TraceConfig config;
  config.add_buffers()->set_size_kb(256);
  config.add_buffers()->set_size_kb(256);
  AddDataSource(&config, "other", 1);
  AddDataSource(&config, "track_event", 0);
  const SessionId a = Start(config, "a.pftrace");
  const std::vector<ProducerCommand> starts =
      StartsFor(core_->sessions()->TakeCommands(), app);
  ASSERT_EQ(starts.size(), 2u);
  uint32_t buffer0 = 0, buffer1 = 0;
  for (const ProducerCommand& c : starts)
    (c.data_source_name == "track_event" ? buffer0 : buffer1) = c.target_buffer;
  ASSERT_NE(buffer0, buffer1);

  ipc::DrainRequestMsg report = LossReport(3, buffer0, 5);
  report.num_entries = 2;
  report.entries[1].writer_id = 4;
  report.entries[1].target_buffer = buffer1;
  report.entries[1].packets_dropped_before_end = 70;
  report.entries[1].packets_dropped_after_end = 2;
  core_->OnLossReport(app, report);
  // A later report of writer 3 replaces its earlier one (no double count).
  core_->OnLossReport(app, LossReport(3, buffer0, 9));
  perfetto::protos::TraceStats live;
  std::string bytes;
  ASSERT_TRUE(core_->sessions()->GetSessionTraceStats(a, &bytes).ok());
  ASSERT_TRUE(live.ParseFromString(bytes));
  ASSERT_EQ(live.buffer_stats_size(), 2);
  EXPECT_EQ(live.buffer_stats(0).trace_writer_packet_loss(), 9u);
  EXPECT_EQ(live.buffer_stats(1).trace_writer_packet_loss(), 72u);

  const SessionEvent ended = StopAndAck(a);
  EXPECT_EQ(ended.packets_lost, 81u);
  const perfetto::protos::TraceStats stats = StatsOf(ReadTrace("a.pftrace"));
  ASSERT_EQ(stats.buffer_stats_size(), 2);
  EXPECT_EQ(stats.buffer_stats(0).trace_writer_packet_loss(), 9u);
  EXPECT_EQ(stats.buffer_stats(1).trace_writer_packet_loss(), 72u);
  EXPECT_EQ(stats.ringtrace_packets_dropped_by_producers(), 81u);
}

// A streamed session without flush_period_ms flushes once per file write,
// and the TraceConfig its trace carries says so (trace_processor reports a
// write_into_file config without flushes as an error).
TEST(SessionConfigTest, WriteIntoFileGetsADefaultFlushPeriod) {
  TraceConfig config = OneBufferConfig();
  config.set_write_into_file(true);
  config.set_file_write_period_ms(2500);
  SessionConfig sc;
  ASSERT_TRUE(MakeSessionConfig(config, &sc).ok());
  EXPECT_EQ(sc.flush_period_ms, 2500u);
  TraceConfig recorded;
  ASSERT_TRUE(recorded.ParseFromString(sc.serialized));
  EXPECT_EQ(recorded.flush_period_ms(), 2500u);
  // A period the user chose is kept; a session in memory gets none.
  config.set_flush_period_ms(700);
  ASSERT_TRUE(MakeSessionConfig(config, &sc).ok());
  EXPECT_EQ(sc.flush_period_ms, 700u);
  config.clear_flush_period_ms();
  config.clear_write_into_file();
  config.clear_file_write_period_ms();
  ASSERT_TRUE(MakeSessionConfig(config, &sc).ok());
  EXPECT_EQ(sc.flush_period_ms, 0u);
  ASSERT_TRUE(recorded.ParseFromString(sc.serialized));
  EXPECT_FALSE(recorded.has_flush_period_ms());
}

TEST_F(SessionsTest, StopWaitsForTheAcksThenTimesOutAndCountsIt) {
  std::unique_ptr<ProducerSide> side1, side2;
  const ProducerID p1 = AddProducer("app1", {"track_event"}, &side1);
  AddProducer("app2", {"track_event"}, &side2);
  TraceConfig config = OneBufferConfig();
  config.set_data_source_stop_timeout_ms(2000);
  const SessionId s = Start(config, "s");
  std::vector<ProducerCommand> starts = core_->sessions()->TakeCommands();
  ASSERT_EQ(starts.size(), 2u);
  auto w = side1->NewWriter(starts[0].target_buffer);
  WriteTestPackets(w.get(), "x", 0, 10);
  // Not flushed: the stop's kFlush drain scrapes the open chunk.

  ASSERT_TRUE(core_->sessions()->StopSession(s, 1, now_).ok());
  EXPECT_FALSE(
      core_->sessions()->StopSession(s, 1, now_).ok());  // already stopping
  std::vector<ProducerCommand> stops = core_->sessions()->TakeCommands();
  ASSERT_EQ(stops.size(), 2u);
  // p1 answers, the other does not.
  const ProducerCommand& stop1 =
      stops[0].producer_id == p1 ? stops[0] : stops[1];
  const ProducerCommand& stop2 =
      stops[0].producer_id == p1 ? stops[1] : stops[0];
  ASSERT_TRUE(core_->sessions()->OnDataSourceStopped(p1, stop1.id, now_).ok());
  // A second ack of the same instance is a violation.
  EXPECT_FALSE(core_->sessions()->OnDataSourceStopped(p1, stop1.id, now_).ok());
  EXPECT_TRUE(core_->sessions()->TakeEvents().empty());
  EXPECT_EQ(core_->sessions()->NextDeadline(),
            now_ + std::chrono::milliseconds(2000));
  core_->sessions()->AdvanceSessions(now_ + std::chrono::milliseconds(1999));
  EXPECT_TRUE(core_->sessions()->TakeEvents().empty());
  core_->sessions()->AdvanceSessions(now_ + std::chrono::milliseconds(2000));
  std::vector<SessionEvent> events = core_->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].status.ok());
  EXPECT_EQ(core_->sessions()->session_stats().data_source_stop_timeouts, 1u);
  EXPECT_EQ(CollectTestPackets(ReadTrace("s"))["x"].seqs, Seqs(0, 10));
  // The trace's TraceStats carry the session's own counters.
  EXPECT_EQ(StatsOf(ReadTrace("s")).ringtrace_data_source_stop_timeouts(), 1u);
  EXPECT_EQ(StatsOf(ReadTrace("s")).ringtrace_late_acks(), 0u);
  // An instance did not ack its stop: no all_data_sources_flushed.
  EXPECT_EQ(test::ExpectServiceMetadata(ReadTrace("s")).events,
            (std::vector<test::ServiceEventCase>{
                test::kEvStarted, test::kEvAllStarted, test::kEvDisabled,
                test::kEvReadDone}));

  // The late answer is accepted once; again, or for an unknown instance, it
  // is a violation.
  EXPECT_TRUE(core_->sessions()
                  ->OnDataSourceStopped(stop2.producer_id, stop2.id, now_)
                  .ok());
  EXPECT_EQ(core_->sessions()->session_stats().late_acks, 1u);
  EXPECT_FALSE(core_->sessions()
                   ->OnDataSourceStopped(stop2.producer_id, stop2.id, now_)
                   .ok());
  EXPECT_FALSE(core_->sessions()->OnDataSourceStopped(p1, 12345, now_).ok());
}

TEST_F(SessionsTest, AckBeforeStopAndUnknownFlushAckAreViolations) {
  std::unique_ptr<ProducerSide> side;
  const ProducerID p = AddProducer("app", {"track_event"}, &side);
  Start(OneBufferConfig(), "s");
  std::vector<ProducerCommand> starts = core_->sessions()->TakeCommands();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_FALSE(
      core_->sessions()->OnDataSourceStopped(p, starts[0].id, now_).ok());
  EXPECT_FALSE(core_->sessions()->OnFlushAck(p, 1, now_).ok());
  // Registration: a name twice, an invalid name, more than 32.
  EXPECT_FALSE(core_->RegisterDataSource(p, "track_event", now_).ok());
  EXPECT_FALSE(core_->RegisterDataSource(p, "", now_).ok());
  EXPECT_FALSE(core_->RegisterDataSource(p, "a\nb", now_).ok());
  for (int i = 1; i < 32; ++i) {
    EXPECT_TRUE(
        core_->RegisterDataSource(p, "ds" + std::to_string(i), now_).ok());
  }
  EXPECT_FALSE(core_->RegisterDataSource(p, "ds32", now_).ok());
}

TEST_F(SessionsTest, LateRegistrationStartsAnInstance) {
  std::unique_ptr<ProducerSide> side;
  const ProducerID p = AddProducer("app", {}, &side);
  const SessionId s = Start(OneBufferConfig(), "s");
  EXPECT_TRUE(core_->sessions()->TakeCommands().empty());
  ASSERT_TRUE(core_->RegisterDataSource(p, "track_event", now_).ok());
  std::vector<ProducerCommand> starts = core_->sessions()->TakeCommands();
  ASSERT_EQ(starts.size(), 1u);
  auto w = side->NewWriter(starts[0].target_buffer);
  WriteTestPackets(w.get(), "late", 0, 25);
  w->Flush();
  const SessionEvent ended = StopAndAck(s);
  EXPECT_EQ(ended.summary.export_stats.packets_exported, 25u);
  EXPECT_EQ(ended.summary.drainer_stats.chunks_unroutable, 0u);
}

TEST_F(SessionsTest, FlushWaitsForAcksAndTimesOut) {
  std::unique_ptr<ProducerSide> side;
  const ProducerID p = AddProducer("app", {"track_event"}, &side);
  TraceConfig config = OneBufferConfig();
  config.set_flush_timeout_ms(1000);
  const SessionId s = Start(config, "s");
  (void)core_->sessions()->TakeCommands();

  ASSERT_TRUE(core_->sessions()->FlushSession(s, 0, /*tag=*/5, now_).ok());
  std::vector<ProducerCommand> flushes = core_->sessions()->TakeCommands();
  ASSERT_EQ(flushes.size(), 1u);
  EXPECT_EQ(flushes[0].type, Cmd::kFlush);
  EXPECT_TRUE(core_->sessions()->TakeEvents().empty());
  ASSERT_TRUE(core_->sessions()->OnFlushAck(p, flushes[0].id, now_).ok());
  std::vector<SessionEvent> events = core_->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, SessionEvent::Type::kFlushed);
  EXPECT_EQ(events[0].tag, 5u);
  EXPECT_TRUE(events[0].status.ok());
  EXPECT_FALSE(
      core_->sessions()->OnFlushAck(p, flushes[0].id, now_).ok());  // twice

  // Unanswered: the config's timeout.
  ASSERT_TRUE(core_->sessions()->FlushSession(s, 0, 6, now_).ok());
  flushes = core_->sessions()->TakeCommands();
  ASSERT_EQ(flushes.size(), 1u);
  core_->sessions()->AdvanceSessions(now_ + std::chrono::milliseconds(999));
  EXPECT_TRUE(core_->sessions()->TakeEvents().empty());
  core_->sessions()->AdvanceSessions(now_ + std::chrono::milliseconds(1000));
  events = core_->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].status.ok());
  EXPECT_EQ(core_->sessions()->session_stats().flush_timeouts, 1u);
  EXPECT_TRUE(
      core_->sessions()->OnFlushAck(p, flushes[0].id, now_).ok());  // late
  EXPECT_EQ(core_->sessions()->session_stats().late_acks, 1u);
  std::string stats_bytes;
  ASSERT_TRUE(core_->sessions()->GetSessionTraceStats(s, &stats_bytes).ok());
  perfetto::protos::TraceStats stats;
  ASSERT_TRUE(stats.ParseFromString(stats_bytes));
  EXPECT_EQ(stats.ringtrace_flush_timeouts(), 1u);
  EXPECT_EQ(stats.ringtrace_late_acks(), 1u);
  EXPECT_EQ(stats.ringtrace_data_source_stop_timeouts(), 0u);
  EXPECT_FALSE(core_->sessions()->OnFlushAck(p, flushes[0].id, now_).ok());

  // A consumer cannot pile up flushes: 64 wait at most.
  for (int i = 0; i < 64; ++i)
    EXPECT_TRUE(core_->sessions()->FlushSession(s, 0, 100 + i, now_).ok());
  EXPECT_FALSE(core_->sessions()->FlushSession(s, 0, 200, now_).ok());
}

// The TraceStats GetSessionTraceStats returns for |id|.
perfetto::protos::TraceStats LiveStats(ServiceCore* core, SessionId id) {
  std::string bytes;
  EXPECT_TRUE(core->sessions()->GetSessionTraceStats(id, &bytes).ok());
  perfetto::protos::TraceStats stats;
  EXPECT_TRUE(stats.ParseFromString(bytes));
  return stats;
}

// Two sessions at once on two producers: each session's TraceStats count
// its own flush timeout, late ack and stop timeout, never the other's; the
// service's counters sum them.
TEST_F(SessionsTest, TimeoutsAndLateAcksAreCountedPerSession) {
  std::unique_ptr<ProducerSide> side1, side2;
  const ProducerID p1 = AddProducer("app1", {"track_event"}, &side1);
  const ProducerID p2 = AddProducer("app2", {"track_event"}, &side2);
  TraceConfig config_a = OneBufferConfig();
  config_a.set_flush_timeout_ms(1000);
  config_a.mutable_data_sources(0)->add_producer_name_filter("app1");
  TraceConfig config_b = OneBufferConfig();
  config_b.set_flush_timeout_ms(1000);
  config_b.set_data_source_stop_timeout_ms(1000);
  config_b.mutable_data_sources(0)->add_producer_name_filter("app2");
  const SessionId a = Start(config_a, "a");
  const SessionId b = Start(config_b, "b");
  ASSERT_EQ(core_->sessions()->TakeCommands().size(), 2u);  // one start each

  // Both flush: app2 answers B's, app1 never answers A's.
  ASSERT_TRUE(core_->sessions()->FlushSession(a, 0, /*tag=*/1, now_).ok());
  ASSERT_TRUE(core_->sessions()->FlushSession(b, 0, /*tag=*/2, now_).ok());
  const std::vector<ProducerCommand> flushes =
      core_->sessions()->TakeCommands();
  ASSERT_EQ(flushes.size(), 2u);
  const bool a_first = flushes[0].producer_id == p1;
  const ProducerCommand& flush_a = flushes[a_first ? 0 : 1];
  const ProducerCommand& flush_b = flushes[a_first ? 1 : 0];
  ASSERT_EQ(flush_a.producer_id, p1);
  ASSERT_EQ(flush_b.producer_id, p2);
  ASSERT_TRUE(core_->sessions()->OnFlushAck(p2, flush_b.id, now_).ok());
  core_->sessions()->AdvanceSessions(now_ + std::chrono::milliseconds(1000));
  std::vector<SessionEvent> events = core_->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 2u);
  for (const SessionEvent& ev : events)
    EXPECT_EQ(ev.status.ok(), ev.session_id == b) << ev.session_id;
  EXPECT_EQ(LiveStats(core_.get(), a).ringtrace_flush_timeouts(), 1u);
  EXPECT_EQ(LiveStats(core_.get(), b).ringtrace_flush_timeouts(), 0u);
  // Before the stop: the flushes so far, no final flush yet.
  EXPECT_EQ(LiveStats(core_.get(), a).flushes_requested(), 1u);
  EXPECT_EQ(LiveStats(core_.get(), a).flushes_failed(), 1u);
  EXPECT_EQ(LiveStats(core_.get(), b).flushes_succeeded(), 1u);
  EXPECT_FALSE(LiveStats(core_.get(), a).has_final_flush_outcome());
  // The service's state: two producers with one data source each, two
  // sessions of one buffer each.
  EXPECT_EQ(LiveStats(core_.get(), a).data_sources_registered(), 2u);
  EXPECT_EQ(LiveStats(core_.get(), a).data_sources_seen(), 2u);
  EXPECT_EQ(LiveStats(core_.get(), a).tracing_sessions(), 2u);
  EXPECT_EQ(LiveStats(core_.get(), a).total_buffers(), 2u);

  // app1's answer comes late: A's late ack, not B's.
  ASSERT_TRUE(core_->sessions()->OnFlushAck(p1, flush_a.id, now_).ok());
  EXPECT_EQ(LiveStats(core_.get(), a).ringtrace_late_acks(), 1u);
  EXPECT_EQ(LiveStats(core_.get(), b).ringtrace_late_acks(), 0u);

  // B's producer never acks its stop; A's does.
  const Clock::time_point later = now_ + std::chrono::milliseconds(1000);
  ASSERT_TRUE(core_->sessions()->StopSession(b, 3, later).ok());
  ASSERT_EQ(core_->sessions()->TakeCommands().size(), 1u);
  core_->sessions()->AdvanceSessions(later + std::chrono::milliseconds(1000));
  ASSERT_EQ(core_->sessions()->TakeEvents().size(), 1u);
  EXPECT_TRUE(StopAndAck(a).status.ok());

  const perfetto::protos::TraceStats stats_a = StatsOf(ReadTrace("a"));
  EXPECT_EQ(stats_a.ringtrace_flush_timeouts(), 1u);
  EXPECT_EQ(stats_a.ringtrace_late_acks(), 1u);
  EXPECT_EQ(stats_a.ringtrace_data_source_stop_timeouts(), 0u);
  const perfetto::protos::TraceStats stats_b = StatsOf(ReadTrace("b"));
  EXPECT_EQ(stats_b.ringtrace_flush_timeouts(), 0u);
  EXPECT_EQ(stats_b.ringtrace_late_acks(), 0u);
  EXPECT_EQ(stats_b.ringtrace_data_source_stop_timeouts(), 1u);
  // Perfetto's flush fields, the stop (the final flush) included: A's flush
  // timed out and its stop was acked; B's flush was acked and its stop
  // timed out.
  using perfetto::protos::TraceStats;
  EXPECT_EQ(stats_a.flushes_requested(), 2u);
  EXPECT_EQ(stats_a.flushes_succeeded(), 1u);
  EXPECT_EQ(stats_a.flushes_failed(), 1u);
  EXPECT_EQ(stats_a.final_flush_outcome(), TraceStats::FINAL_FLUSH_SUCCEEDED);
  EXPECT_EQ(stats_b.flushes_requested(), 2u);
  EXPECT_EQ(stats_b.flushes_succeeded(), 1u);
  EXPECT_EQ(stats_b.flushes_failed(), 1u);
  EXPECT_EQ(stats_b.final_flush_outcome(), TraceStats::FINAL_FLUSH_FAILED);
  EXPECT_EQ(core_->sessions()->session_stats().flush_timeouts, 1u);
  EXPECT_EQ(core_->sessions()->session_stats().late_acks, 1u);
  EXPECT_EQ(core_->sessions()->session_stats().data_source_stop_timeouts, 1u);
}

// A flush asked for by another consumer than the session's is answered to
// that consumer; errors name the session.
TEST_F(SessionsTest, FlushEventGoesToTheRequester) {
  std::unique_ptr<ProducerSide> side;
  const ProducerID p = AddProducer("app", {"track_event"}, &side);
  const SessionId s = Start(OneBufferConfig(), "s");  // consumer 7
  (void)core_->sessions()->TakeCommands();
  ASSERT_TRUE(core_->sessions()
                  ->FlushSession(s, 0, /*tag=*/4, now_, /*requester=*/9)
                  .ok());
  const std::vector<ProducerCommand> flushes =
      core_->sessions()->TakeCommands();
  ASSERT_EQ(flushes.size(), 1u);
  ASSERT_TRUE(core_->sessions()->OnFlushAck(p, flushes[0].id, now_).ok());
  std::vector<SessionEvent> events = core_->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].consumer_id, 9u);
  EXPECT_EQ(events[0].tag, 4u);

  const base::Status missing =
      core_->sessions()->FlushSession(s + 1, 0, 5, now_);
  EXPECT_EQ(missing.message(), "no session " + std::to_string(s + 1));
  ASSERT_TRUE(core_->sessions()->StopSession(s, 6, now_).ok());
  const base::Status stopping = core_->sessions()->FlushSession(s, 0, 7, now_);
  EXPECT_EQ(stopping.message(),
            "session " + std::to_string(s) + " is stopping");
  EXPECT_EQ(core_->sessions()->StopSession(s, 8, now_).message(),
            stopping.message());
}

TEST_F(SessionsTest, DurationEndsTheSessionAndTheEventSaysSo) {
  std::unique_ptr<ProducerSide> side;
  AddProducer("app", {"track_event"}, &side);
  TraceConfig config = OneBufferConfig();
  config.set_duration_ms(1500);
  Start(config, "s");
  (void)core_->sessions()->TakeCommands();
  EXPECT_EQ(core_->sessions()->NextDeadline(),
            now_ + std::chrono::milliseconds(1500));
  core_->sessions()->AdvanceSessions(now_ + std::chrono::milliseconds(1499));
  EXPECT_TRUE(core_->sessions()->TakeCommands().empty());
  core_->sessions()->AdvanceSessions(now_ + std::chrono::milliseconds(1500));
  AckStops(core_->sessions()->TakeCommands());
  std::vector<SessionEvent> events = core_->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].by_service);
  EXPECT_EQ(events[0].tag, 0u);
}

TEST_F(SessionsTest, ProducerLeavingCompletesAStop) {
  std::unique_ptr<ProducerSide> side;
  const ProducerID p = AddProducer("app", {"track_event"}, &side);
  const SessionId s = Start(OneBufferConfig(), "s");
  std::vector<ProducerCommand> starts = core_->sessions()->TakeCommands();
  ASSERT_EQ(starts.size(), 1u);
  auto w = side->NewWriter(starts[0].target_buffer);
  WriteTestPackets(w.get(), "x", 0, 40);
  ASSERT_TRUE(core_->sessions()->StopSession(s, 1, now_).ok());
  (void)core_->sessions()->TakeCommands();
  EXPECT_TRUE(core_->sessions()->TakeEvents().empty());
  core_->RemoveProducer(p);  // its final drain keeps what it wrote
  std::vector<SessionEvent> events = core_->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(CollectTestPackets(ReadTrace("s"))["x"].seqs, Seqs(0, 40));
  EXPECT_EQ(core_->sessions()->session_stats().data_source_stop_timeouts, 0u);
}

TEST_F(SessionsTest, CloneWritesWhatTheSessionHoldsAndItGoesOn) {
  std::unique_ptr<ProducerSide> side;
  AddProducer("app", {"track_event"}, &side);
  const SessionId s = Start(OneBufferConfig(), "s");
  std::vector<ProducerCommand> starts = core_->sessions()->TakeCommands();
  ASSERT_EQ(starts.size(), 1u);
  std::vector<SessionInfo> infos = core_->session_table()->ListSessions(now_);
  ASSERT_EQ(infos.size(), 1u);
  ASSERT_EQ(infos[0].buffers.size(), 1u);
  EXPECT_EQ(infos[0].buffers[0].used_bytes, 0u);
  auto w = side->NewWriter(starts[0].target_buffer);
  WriteTestPackets(w.get(), "x", 0, 60);
  w->Flush();
  base::ScopedFd clone_fd = OpenOut(dir_.File("clone"));
  ExportSummary summary;
  const base::Status status =
      core_->sessions()->CloneSession(s, clone_fd.get(), &summary);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(CollectTestPackets(ReadTrace("clone"))["x"].seqs, Seqs(0, 60));
  EXPECT_FALSE(
      core_->sessions()->CloneSession(s + 1, clone_fd.get(), &summary).ok());
  // No final flush in a clone: tracing goes on.
  EXPECT_FALSE(StatsOf(ReadTrace("clone")).has_final_flush_outcome());
  EXPECT_EQ(StatsOf(ReadTrace("clone")).flushes_requested(), 0u);

  std::string stats_bytes;
  ASSERT_TRUE(core_->sessions()->GetSessionTraceStats(s, &stats_bytes).ok());
  perfetto::protos::TraceStats stats;
  ASSERT_TRUE(stats.ParseFromString(stats_bytes));
  EXPECT_EQ(stats.buffer_stats_size(), 1);
  EXPECT_GT(stats.buffer_stats(0).bytes_written(), 0u);
  // Not wrapped, nothing erased: the fill is exactly what was written.
  infos = core_->session_table()->ListSessions(now_);
  ASSERT_EQ(infos.size(), 1u);
  EXPECT_EQ(infos[0].buffers[0].used_bytes,
            stats.buffer_stats(0).bytes_written());

  WriteTestPackets(w.get(), "x", 60, 40);
  w->Flush();
  StopAndAck(s);
  EXPECT_EQ(CollectTestPackets(ReadTrace("s"))["x"].seqs, Seqs(0, 100));
}

TEST_F(SessionsTest, AbortWritesNothingAndFreesTheBuffers) {
  ServiceCore::Options options = SessionOptions();
  options.max_total_buffer_bytes = 1 << 20;
  core_ = MakeCore(options);
  std::unique_ptr<ProducerSide> side;
  const ProducerID p = AddProducer("app", {"track_event"}, &side);
  const SessionId s = Start(OneBufferConfig(1024), "s");
  std::vector<ProducerCommand> starts = core_->sessions()->TakeCommands();
  auto w = side->NewWriter(starts[0].target_buffer);
  WriteTestPackets(w.get(), "x", 0, 10);
  w->Flush();
  EXPECT_FALSE(TryStart(OneBufferConfig(1)).ok());  // the limit is taken
  core_->sessions()->AbortSession(s);
  EXPECT_FALSE(core_->session_table()->has_session(s));
  EXPECT_TRUE(core_->sessions()->TakeEvents().empty());
  std::vector<ProducerCommand> stops = core_->sessions()->TakeCommands();
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].type, Cmd::kStopDataSource);
  struct stat st = {};
  ASSERT_EQ(stat(dir_.File("s").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
  EXPECT_EQ(core_->sessions()->session_stats().sessions_aborted, 1u);
  // The ack may still come.
  EXPECT_TRUE(
      core_->sessions()->OnDataSourceStopped(p, stops[0].id, now_).ok());
  // The bytes are free again.
  Start(OneBufferConfig(1024), "s2");
}

TEST_F(SessionsTest, LimitsAndInvalidConfigsAreRefusedWithTheirReason) {
  ServiceCore::Options options = SessionOptions();
  options.max_sessions = 2;
  options.max_total_buffer_bytes = 4 << 20;
  core_ = MakeCore(options);
  struct Case {
    const char* what;
    TraceConfig config;
  };
  std::vector<Case> cases;
  cases.push_back({"buffers: 0 entries", TraceConfig()});
  {
    TraceConfig c;
    for (int i = 0; i < 9; ++i)
      c.add_buffers()->set_size_kb(4);
    cases.push_back({"buffers: 9 entries", c});
  }
  {
    TraceConfig c = OneBufferConfig();
    c.mutable_buffers(0)->set_size_kb(0);
    cases.push_back({"buffers[0].size_kb", c});
  }
  {
    TraceConfig c = OneBufferConfig();
    c.mutable_data_sources(0)->mutable_config()->set_target_buffer(1);
    cases.push_back({"target_buffer", c});
  }
  {
    TraceConfig c = OneBufferConfig();
    c.mutable_data_sources(0)->mutable_config()->set_name("");
    cases.push_back({"config.name", c});
  }
  {
    TraceConfig c = OneBufferConfig();
    c.set_max_file_size_bytes(1 << 20);  // without write_into_file
    cases.push_back({"max_file_size_bytes", c});
  }
  {
    TraceConfig c = OneBufferConfig();
    c.set_flush_timeout_ms(ipc::kMaxTimeoutMs + 1);
    cases.push_back({"flush_timeout_ms", c});
  }
  {
    TraceConfig c = OneBufferConfig();
    c.mutable_unknown_fields()->AddVarint(111, 1);
    cases.push_back({"unknown field", c});
  }
  cases.push_back({"max-buffer-mb", OneBufferConfig(5 * 1024)});
  for (const Case& c : cases) {
    const base::Status status = TryStart(c.config);
    ASSERT_FALSE(status.ok()) << c.what;
    EXPECT_NE(status.message().find(c.what), std::string::npos)
        << c.what << ": " << status.message();
  }
  EXPECT_EQ(core_->sessions()->session_stats().sessions_refused, cases.size());

  TraceConfig named = OneBufferConfig(1024);
  named.set_unique_session_name("boot");
  Start(named, "s1");
  base::Status status = TryStart(named);
  EXPECT_NE(status.message().find("unique_session_name"), std::string::npos)
      << status.message();
  Start(OneBufferConfig(1024), "s2");
  status = TryStart(OneBufferConfig(4));
  EXPECT_NE(status.message().find("max sessions"), std::string::npos)
      << status.message();
  EXPECT_EQ(core_->session_table()->num_sessions(), 2u);
}

TEST_F(SessionsTest, BufferIdsAreReusedOnlyAfterTheCounterWrapped) {
  core_->session_table()->set_next_buffer_id_for_testing(kMaxSessionBufferId);
  std::unique_ptr<ProducerSide> side;
  AddProducer("app", {"track_event"}, &side);
  const auto target_of_next = [&](const std::string& file) {
    Start(OneBufferConfig(4), file);
    std::vector<ProducerCommand> cmds = core_->sessions()->TakeCommands();
    EXPECT_EQ(cmds.size(), 1u);
    return cmds.empty() ? 0 : cmds[0].target_buffer;
  };
  EXPECT_EQ(target_of_next("s1"), kMaxSessionBufferId);
  EXPECT_EQ(target_of_next("s2"), 1);  // wrapped
  core_->session_table()->set_next_buffer_id_for_testing(kMaxSessionBufferId);
  // 65535 and 1 are held by live sessions.
  EXPECT_EQ(target_of_next("s3"), 2);
}

TEST_F(SessionsTest, WriteIntoFileKeepsMoreThanTheBufferHolds) {
  std::unique_ptr<ProducerSide> side;
  AddProducer("app", {"track_event"}, &side);
  // 32 KiB of RING_BUFFER; 3 periods of ~24 KiB of packets each (each fits,
  // all three do not).
  TraceConfig config = OneBufferConfig(32);
  config.set_write_into_file(true);
  config.set_file_write_period_ms(1000);
  const SessionId s = Start(config, "s");
  std::vector<ProducerCommand> starts = core_->sessions()->TakeCommands();
  ASSERT_EQ(starts.size(), 1u);
  auto w = side->NewWriter(starts[0].target_buffer);
  constexpr uint32_t kPerPeriod = 1200;
  for (uint32_t period = 1; period <= 3; ++period) {
    WriteTestPackets(w.get(), "x", (period - 1) * kPerPeriod, kPerPeriod);
    w->Flush();
    EXPECT_EQ(core_->sessions()->NextDeadline(),
              now_ + std::chrono::milliseconds(1000 * period));
    core_->sessions()->AdvanceSessions(
        now_ + std::chrono::milliseconds(1000 * period));
    // The file holds every packet so far, as a valid (unfinished) trace.
    EXPECT_EQ(CollectTestPackets(ReadTrace("s"))["x"].seqs,
              Seqs(0, period * kPerPeriod));
  }
  const SessionEvent ended = StopAndAck(s);
  EXPECT_TRUE(ended.status.ok()) << ended.status.message();
  EXPECT_EQ(ended.summary.packets_overwritten, 0u);
  const perfetto::protos::Trace trace = ReadTrace("s");
  EXPECT_EQ(CollectTestPackets(trace)["x"].seqs, Seqs(0, 3 * kPerPeriod));
  // One header (config, system info, uuid, clock snapshot) at the start,
  // the service events as they happened, the stats and a clock snapshot at
  // the end.
  EXPECT_EQ(test::ExpectServiceMetadata(trace).events,
            (std::vector<test::ServiceEventCase>{
                test::kEvStarted, test::kEvAllStarted, test::kEvFlushed,
                test::kEvDisabled, test::kEvReadDone}));
  int configs = 0;
  for (const auto& p : trace.packet())
    configs += p.has_trace_config() ? 1 : 0;
  EXPECT_EQ(configs, 1);
  EXPECT_TRUE(trace.packet(0).has_trace_config());
  EXPECT_TRUE(trace.packet(trace.packet_size() - 2).has_trace_stats());
  // More than twice the buffer went through it, nothing overwritten.
  EXPECT_GT(ended.summary.bytes_written, 2u * 32 * 1024);
}

TEST_F(SessionsTest, ServiceEventsFollowTheSessionAndClonesGetTheirOwnUuid) {
  using test::ServiceEventCase;
  using test::ServiceMetadata;
  std::unique_ptr<ProducerSide> side;
  const ProducerID p = AddProducer("app", {"track_event"}, &side);
  TraceConfig config = OneBufferConfig();
  config.set_flush_timeout_ms(1000);
  const SessionId s = Start(config, "s");
  (void)core_->sessions()->TakeCommands();
  auto clone = [&](const std::string& file) {
    base::ScopedFd fd = OpenOut(dir_.File(file));
    ExportSummary summary;
    const base::Status status =
        core_->sessions()->CloneSession(s, fd.get(), &summary);
    EXPECT_TRUE(status.ok()) << status.message();
    return test::ExpectServiceMetadata(ReadTrace(file));
  };
  const std::vector<ServiceEventCase> started = {
      test::kEvStarted, test::kEvAllStarted, test::kEvReadDone};

  const ServiceMetadata c1 = clone("c1");
  EXPECT_EQ(c1.events, started);

  // A flush that timed out is no all_data_sources_flushed.
  ASSERT_TRUE(core_->sessions()->FlushSession(s, 0, 1, now_).ok());
  std::vector<ProducerCommand> late = core_->sessions()->TakeCommands();
  ASSERT_EQ(late.size(), 1u);
  core_->sessions()->AdvanceSessions(now_ + std::chrono::milliseconds(1000));
  ASSERT_EQ(core_->sessions()->TakeEvents().size(), 1u);
  const ServiceMetadata c2 = clone("c2");
  EXPECT_EQ(c2.events, started);
  // Its late answer makes the producer one later flushes wait for again.
  ASSERT_TRUE(core_->sessions()->OnFlushAck(p, late[0].id, now_).ok());

  // One every producer acked is.
  ASSERT_TRUE(core_->sessions()->FlushSession(s, 0, 2, now_).ok());
  std::vector<ProducerCommand> flushes = core_->sessions()->TakeCommands();
  ASSERT_EQ(flushes.size(), 1u);
  ASSERT_TRUE(core_->sessions()->OnFlushAck(p, flushes[0].id, now_).ok());
  ASSERT_EQ(core_->sessions()->TakeEvents().size(), 1u);
  const ServiceMetadata c3 = clone("c3");
  EXPECT_EQ(c3.events, (std::vector<ServiceEventCase>{
                           test::kEvStarted, test::kEvAllStarted,
                           test::kEvFlushed, test::kEvReadDone}));

  StopAndAck(s);
  const ServiceMetadata fin = test::ExpectServiceMetadata(ReadTrace("s"));
  EXPECT_EQ(fin.events,
            (std::vector<ServiceEventCase>{
                test::kEvStarted, test::kEvAllStarted, test::kEvFlushed,
                test::kEvDisabled, test::kEvReadDone}));
  // The start is the same in every file: the session's.
  for (const ServiceMetadata* md : {&c1, &c2, &c3}) {
    ASSERT_EQ(md->event_timestamps.size(), md->events.size());
    ASSERT_EQ(fin.event_timestamps.size(), 5u);
    EXPECT_EQ(md->event_timestamps[0], fin.event_timestamps[0]);
    EXPECT_EQ(md->event_timestamps[1], fin.event_timestamps[1]);
    EXPECT_EQ(md->first_clock_boottime, fin.first_clock_boottime);
  }
  EXPECT_EQ(fin.event_timestamps[0], fin.first_clock_boottime);
  // The stop's flush is later than the acked flush the clone saw.
  EXPECT_GE(fin.event_timestamps[2], c3.event_timestamps[2]);
  // Four files, four uuids.
  const ServiceMetadata* all[] = {&c1, &c2, &c3, &fin};
  for (size_t i = 0; i < 4; ++i) {
    for (size_t j = i + 1; j < 4; ++j) {
      EXPECT_TRUE(all[i]->uuid_msb != all[j]->uuid_msb ||
                  all[i]->uuid_lsb != all[j]->uuid_lsb)
          << i << " " << j;
    }
  }
}

TEST_F(SessionsTest, WriteIntoFileWritesTheServiceEventsAsTheyHappen) {
  std::unique_ptr<ProducerSide> side;
  const ProducerID p = AddProducer("app", {"track_event"}, &side);
  TraceConfig config = OneBufferConfig();
  config.set_write_into_file(true);
  config.set_file_write_period_ms(1000);
  const SessionId s = Start(config, "s");
  (void)core_->sessions()->TakeCommands();
  ASSERT_TRUE(core_->sessions()->FlushSession(s, 0, 1, now_).ok());
  std::vector<ProducerCommand> flushes = core_->sessions()->TakeCommands();
  ASSERT_EQ(flushes.size(), 1u);
  ASSERT_TRUE(core_->sessions()->OnFlushAck(p, flushes[0].id, now_).ok());
  ASSERT_EQ(core_->sessions()->TakeEvents().size(), 1u);  // kFlushed
  core_->sessions()->AdvanceSessions(now_ + std::chrono::milliseconds(1000));

  // The file so far: the header and the events up to the flush.
  std::vector<test::ServiceEventCase> events;
  int headers = 0;
  const perfetto::protos::Trace so_far = ReadTrace("s");
  for (const auto& packet : so_far.packet()) {
    if (packet.has_service_event())
      events.push_back(packet.service_event().event_type_case());
    headers += packet.has_system_info() || packet.has_trace_uuid();
  }
  EXPECT_EQ(headers, 2);
  EXPECT_EQ(events,
            (std::vector<test::ServiceEventCase>{
                test::kEvStarted, test::kEvAllStarted, test::kEvFlushed}));

  StopAndAck(s);
  EXPECT_EQ(test::ExpectServiceMetadata(ReadTrace("s")).events,
            (std::vector<test::ServiceEventCase>{
                test::kEvStarted, test::kEvAllStarted, test::kEvFlushed,
                test::kEvFlushed, test::kEvDisabled, test::kEvReadDone}));
}

TEST_F(SessionsTest, MaxFileSizeEndsAStreamedSession) {
  std::unique_ptr<ProducerSide> side;
  AddProducer("app", {"track_event"}, &side);
  TraceConfig config = OneBufferConfig(64);
  config.set_write_into_file(true);
  config.set_file_write_period_ms(100);
  config.set_max_file_size_bytes(4096);
  Start(config, "s");
  std::vector<ProducerCommand> starts = core_->sessions()->TakeCommands();
  auto w = side->NewWriter(starts[0].target_buffer);
  WriteTestPackets(w.get(), "x", 0, 50);  // well below 4 KiB
  w->Flush();
  core_->sessions()->AdvanceSessions(now_ + std::chrono::milliseconds(100));
  // Only the periodic flush a streamed session gets by default.
  for (const ProducerCommand& c : core_->sessions()->TakeCommands())
    EXPECT_EQ(c.type, Cmd::kFlush);
  WriteTestPackets(w.get(), "x", 50, 500);  // beyond it
  w->Flush();
  core_->sessions()->AdvanceSessions(now_ + std::chrono::milliseconds(200));
  AckStops(core_->sessions()->TakeCommands());
  std::vector<SessionEvent> events = core_->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].by_service);
  EXPECT_TRUE(events[0].status.ok()) << events[0].status.message();
  EXPECT_EQ(CollectTestPackets(ReadTrace("s"))["x"].seqs, Seqs(0, 550));
}

// A periodic write goes in slices, each after a pass over the session's
// rings: with 1 KiB slices, the 550 packets of a period take several, and
// the file holds every packet once, in order.
TEST_F(SessionsTest, StreamedWritesGoInSlices) {
  ServiceCore::Options options = SessionOptions();
  options.file_write_slice_bytes = 1024;
  core_ = MakeCore(options);
  std::unique_ptr<ProducerSide> side;
  AddProducer("app", {"track_event"}, &side);
  TraceConfig config = OneBufferConfig(256);
  config.set_write_into_file(true);
  config.set_file_write_period_ms(100);
  const SessionId s = Start(config, "s");
  std::vector<ProducerCommand> starts = core_->sessions()->TakeCommands();
  auto w = side->NewWriter(starts[0].target_buffer);
  WriteTestPackets(w.get(), "x", 0, 550);
  w->Flush();
  const uint64_t before = core_->session_writer()->file_write_slices();
  core_->sessions()->AdvanceSessions(now_ + std::chrono::milliseconds(100));
  const uint64_t slices = core_->session_writer()->file_write_slices() - before;
  // Only the periodic flush a streamed session gets by default.
  for (const ProducerCommand& c : core_->sessions()->TakeCommands())
    EXPECT_EQ(c.type, Cmd::kFlush);
  EXPECT_GT(slices, 3u);
  // The buffer's bytes / the slice, plus two: the bound on one write.
  EXPECT_LE(slices, 256u + 2u);
  WriteTestPackets(w.get(), "x", 550, 50);
  w->Flush();
  StopAndAck(s);
  EXPECT_EQ(CollectTestPackets(ReadTrace("s"))["x"].seqs, Seqs(0, 600));
}

// The default session (`ringtraced --out`) beside a consumer's: the
// producer's own writers write the default session's first buffer, its
// track_event data source is started in both, and the service's stop writes
// both traces.
TEST(DefaultSessionTest, BesideAConsumerSession) {
  TempDir dir;
  test::DefaultSessionCore core(SessionOptions(), DefaultOutConfig(512));
  const ServiceCore::Admission a = core->Admit(MakeHello(), Identity(1, 2));
  ASSERT_EQ(a.reply.status, ipc::HelloStatus::kOk);
  ASSERT_NE(core->session_table()->default_buffer(), kNoDefaultBuffer);
  EXPECT_EQ(a.reply.target_buffer, core->session_table()->default_buffer());
  const ProducerID p = static_cast<ProducerID>(a.reply.producer_id);
  ProducerSide side(a);
  ASSERT_TRUE(core->RegisterDataSource(p, "track_event", Clock::now()).ok());
  // The default session's instance: no category lists (Perfetto's default
  // rule), into its buffer.
  std::vector<ProducerCommand> in_default = core->sessions()->TakeCommands();
  ASSERT_EQ(in_default.size(), 1u);
  EXPECT_EQ(in_default[0].type, Cmd::kStartDataSource);
  EXPECT_EQ(in_default[0].target_buffer,
            core->session_table()->default_buffer());
  EXPECT_EQ(in_default[0].data_source_name, "track_event");
  EXPECT_TRUE(in_default[0].enabled_categories.empty());
  EXPECT_TRUE(in_default[0].disabled_categories.empty());
  // A data source its config does not name is not started there.
  ASSERT_TRUE(core->RegisterDataSource(p, "other", Clock::now()).ok());
  EXPECT_TRUE(core->sessions()->TakeCommands().empty());
  SessionId s = 0;
  ASSERT_TRUE(core->sessions()
                  ->StartSession(OneBufferConfig(), OpenOut(dir.File("s")), 2,
                                 1, Clock::now(), &s)
                  .ok());
  std::vector<ProducerCommand> starts = core->sessions()->TakeCommands();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_NE(starts[0].id, in_default[0].id);
  EXPECT_NE(starts[0].target_buffer, core->session_table()->default_buffer());
  auto own = side.NewWriter();  // the HelloReply's target_buffer
  auto ws = side.NewWriter(starts[0].target_buffer);
  WriteTestPackets(own.get(), "own", 0, 70);
  WriteTestPackets(ws.get(), "session", 0, 30);
  own->Flush();
  ws->Flush();
  base::ScopedFd out = OpenOut(dir.File("out"));
  ExportSummary summary;
  ASSERT_TRUE(core.Finish(out.get(), &summary).ok());
  EXPECT_EQ(summary.export_stats.packets_exported, 70u);
  perfetto::protos::Trace t_out, t_s;
  ASSERT_TRUE(ReadTraceFile(dir.File("out"), &t_out));
  ASSERT_TRUE(ReadTraceFile(dir.File("s"), &t_s));
  auto tagged_out = CollectTestPackets(t_out);
  auto tagged_s = CollectTestPackets(t_s);
  ASSERT_EQ(tagged_out.size(), 1u);
  ASSERT_EQ(tagged_s.size(), 1u);
  EXPECT_EQ(tagged_out["own"].seqs, Seqs(0, 70));
  EXPECT_EQ(tagged_s["session"].seqs, Seqs(0, 30));
  // Both were ended by the service's stop without waiting for their
  // instances' stop acks: their final flushes failed, as Perfetto says.
  for (const perfetto::protos::Trace* t : {&t_out, &t_s}) {
    const auto& stats = t->packet(t->packet_size() - 2).trace_stats();
    EXPECT_EQ(stats.final_flush_outcome(),
              perfetto::protos::TraceStats::FINAL_FLUSH_FAILED);
    EXPECT_EQ(stats.flushes_failed(), 1u);
  }
}

// Every producer serves the default session: a loss entry for its buffer
// counts there even from a producer with no data source instance in it,
// and a final report marks that producer's record there.
TEST(DefaultSessionTest, TakesTheLossesOfEveryProducersOwnWriters) {
  test::DefaultSessionCore core(SessionOptions());
  const ServiceCore::Admission a = core->Admit(MakeHello(), Identity(1, 2));
  ASSERT_EQ(a.reply.status, ipc::HelloStatus::kOk);
  const ProducerID p = static_cast<ProducerID>(a.reply.producer_id);
  core->OnLossReport(
      p, LossReport(3, core->session_table()->default_buffer(), 11));
  core->OnLossReport(
      p, LossReport(4, core->session_table()->default_buffer() + 1, 7));
  EXPECT_EQ(core->producers()->stats().loss_entries_unattributed, 1u);
  const ProducerLossTable* table =
      core->session_table()->session_loss_table(core.id());
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->totals().packets_dropped, 11u);
}

// Once the default session ended (here a stop, as a consumer of the
// service's uid may ask for), new producers are told there is no buffer
// for their own writers, and the end is what the service's summary reads.
TEST(DefaultSessionTest, AfterItEndsNewProducersGetNoBuffer) {
  test::DefaultSessionCore core(SessionOptions());
  const SessionId id = core.id();
  ASSERT_NE(id, 0u);
  const ServiceCore::Admission before =
      core->Admit(MakeHello(), Identity(1, 2));
  EXPECT_EQ(before.reply.target_buffer,
            core->session_table()->default_buffer());
  EXPECT_FALSE(core->sessions()->default_session_end().ended);
  ASSERT_TRUE(core->sessions()->StopSession(id, /*tag=*/5, Clock::now()).ok());
  core->sessions()->AdvanceSessions(Clock::now());
  const std::vector<SessionEvent> events = core->sessions()->TakeEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].session_id, id);
  EXPECT_TRUE(core->sessions()->default_session_end().ended);
  EXPECT_TRUE(core->sessions()->default_session_end().status.ok());
  EXPECT_EQ(core->session_table()->default_session(), 0u);
  EXPECT_EQ(core->session_table()->default_buffer(), kNoDefaultBuffer);
  const ServiceCore::Admission after = core->Admit(MakeHello(), Identity(3, 4));
  ASSERT_EQ(after.reply.status, ipc::HelloStatus::kOk);
  EXPECT_EQ(after.reply.target_buffer, kNoDefaultBuffer);
  // A second default session may start now; not while one runs.
  base::ScopedFd fd(memfd_create("second", MFD_CLOEXEC));
  SessionId second = 0;
  ASSERT_TRUE(core->sessions()
                  ->StartDefaultSession(DefaultOutConfig(64),
                                        base::ScopedFd(dup(fd.get())),
                                        Clock::now(), &second)
                  .ok());
  EXPECT_FALSE(core->sessions()
                   ->StartDefaultSession(DefaultOutConfig(64),
                                         base::ScopedFd(dup(fd.get())),
                                         Clock::now(), &second)
                   .ok());
}

// Without a default session (a daemon with consumer sessions only), a
// producer's own writers have no buffer: their chunks are unroutable and
// counted, never silently kept or lost.
TEST(DefaultSessionTest, WithoutOneOwnWritersChunksAreCountedUnroutable) {
  std::unique_ptr<ServiceCore> core = MakeCore(SessionOptions());
  const ServiceCore::Admission a = core->Admit(MakeHello(), Identity(1, 2));
  ASSERT_EQ(a.reply.status, ipc::HelloStatus::kOk);
  EXPECT_EQ(a.reply.target_buffer, kNoDefaultBuffer);
  ProducerSide side(a);
  auto own = side.NewWriter();
  WriteTestPackets(own.get(), "own", 0, 20);
  own->Flush();
  core->RemoveProducer(static_cast<ProducerID>(a.reply.producer_id));
  EXPECT_GT(core->DrainerStats().chunks_unroutable, 0u);
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
