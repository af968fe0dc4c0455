/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/producer_loss_table.h"

#include <gtest/gtest.h>

#include <stdint.h>

#include <string>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"

namespace ringtrace {
namespace traced {
namespace {

ipc::DrainRequestMsg Report(std::vector<ipc::WriterLossEntry> entries,
                            bool final_report = false) {
  ipc::DrainRequestMsg msg;
  msg.has_loss_report = true;
  msg.flags = final_report ? ipc::kLossReportFinal : 0;
  for (const ipc::WriterLossEntry& e : entries)
    msg.entries[msg.num_entries++] = e;
  return msg;
}

ipc::WriterLossEntry Entry(uint32_t writer,
                           uint64_t before,
                           uint64_t after = 0,
                           uint64_t bytes = 0,
                           uint64_t stalls = 0) {
  ipc::WriterLossEntry e;
  e.writer_id = writer;
  e.packets_dropped_before_end = before;
  e.packets_dropped_after_end = after;
  e.bytes_dropped = bytes;
  e.stall_timeouts = stalls;
  return e;
}

perfetto::protos::TraceStats Decode(const ProducerLossTable& table) {
  const std::string fields = table.EncodeTraceStatsFields(
      [](trace_buffer::ProducerID p, uint32_t w, bool) { return p * 100 + w; });
  perfetto::protos::TraceStats stats;
  EXPECT_TRUE(stats.ParseFromString(fields));
  return stats;
}

const trace_buffer::ClientIdentity kApp{1000, 4242};

TEST(ProducerLossTableTest, KeepsTheLatestMonotonicEntryPerWriter) {
  ProducerLossTable table;
  table.OnReport(3, "app", kApp, Report({Entry(1, 5, 1, 500, 2)}));
  // Lower in one counter: ignored, counted.
  table.OnReport(3, "app", kApp, Report({Entry(1, 6, 0, 600, 2)}));
  // Higher (or equal) in all: taken.
  table.OnReport(3, "app", kApp,
                 Report({Entry(1, 7, 1, 700, 2), Entry(2, 1)}, true));
  const perfetto::protos::TraceStats stats = Decode(table);
  ASSERT_EQ(stats.ringtrace_producer_loss_size(), 1);
  const auto& p = stats.ringtrace_producer_loss(0);
  EXPECT_EQ(p.producer_id(), 3u);
  EXPECT_EQ(p.producer_name(), "app");
  EXPECT_EQ(p.pid(), 4242);
  EXPECT_EQ(p.uid(), 1000);
  EXPECT_TRUE(p.final_report());
  EXPECT_TRUE(p.connected());
  EXPECT_EQ(p.entries_ignored(), 1u);
  ASSERT_EQ(p.writers_size(), 2);
  EXPECT_EQ(p.writers(0).writer_id(), 1u);
  EXPECT_EQ(p.writers(0).trusted_packet_sequence_id(), 301u);
  EXPECT_EQ(p.writers(0).packets_dropped_before_end(), 7u);
  EXPECT_EQ(p.writers(0).packets_dropped_after_end(), 1u);
  EXPECT_EQ(p.writers(0).bytes_dropped(), 700u);
  EXPECT_EQ(p.writers(0).stall_timeouts(), 2u);
  EXPECT_EQ(stats.ringtrace_packets_dropped_by_producers(), 7u + 1u + 1u);
  EXPECT_EQ(stats.ringtrace_bytes_dropped_by_producers(), 700u);
  EXPECT_EQ(stats.ringtrace_stall_timeouts(), 2u);
  EXPECT_EQ(stats.ringtrace_loss_entries_ignored(), 1u);
}

TEST(ProducerLossTableTest, DepartedProducersWithoutFinalReportAreListed) {
  ProducerLossTable table;
  // Orderly, lost nothing: not listed once gone.
  table.OnReport(1, "clean", kApp, Report({}, true));
  table.OnProducerRemoved(1, "clean", kApp);
  // Never reported (killed): listed, final_report false.
  table.OnProducerRemoved(2, "killed", kApp);
  // Orderly with a loss: listed.
  table.OnReport(4, "lossy", kApp, Report({Entry(9, 3)}, true));
  table.OnProducerRemoved(4, "lossy", kApp);
  // Connected, no report: not listed.
  table.OnReport(5, "live", kApp, Report({Entry(1, 0)}));
  const perfetto::protos::TraceStats stats = Decode(table);
  ASSERT_EQ(stats.ringtrace_producer_loss_size(), 2);
  EXPECT_EQ(stats.ringtrace_producer_loss(0).producer_name(), "killed");
  EXPECT_FALSE(stats.ringtrace_producer_loss(0).final_report());
  EXPECT_FALSE(stats.ringtrace_producer_loss(0).connected());
  EXPECT_EQ(stats.ringtrace_producer_loss(1).producer_name(), "lossy");
  EXPECT_TRUE(stats.ringtrace_producer_loss(1).final_report());
  EXPECT_EQ(stats.ringtrace_packets_dropped_by_producers(), 3u);
}

// A ProducerID is reused once the buffer holds nothing of its departed
// owner: only the id's latest record names the sequences of that id.
TEST(ProducerLossTableTest, OnlyTheLatestOwnerOfAReusedIdNamesSequences) {
  ProducerLossTable table;
  table.OnReport(7, "first", kApp, Report({Entry(2, 4)}, true));
  table.OnProducerRemoved(7, "first", kApp);
  table.OnReport(7, "second", kApp, Report({Entry(2, 1)}));
  const perfetto::protos::TraceStats stats = Decode(table);
  ASSERT_EQ(stats.ringtrace_producer_loss_size(), 2);
  EXPECT_EQ(stats.ringtrace_producer_loss(0).producer_name(), "first");
  EXPECT_EQ(
      stats.ringtrace_producer_loss(0).writers(0).trusted_packet_sequence_id(),
      0u);
  EXPECT_EQ(stats.ringtrace_producer_loss(1).producer_name(), "second");
  EXPECT_EQ(
      stats.ringtrace_producer_loss(1).writers(0).trusted_packet_sequence_id(),
      702u);
  EXPECT_EQ(stats.ringtrace_packets_dropped_by_producers(), 5u);
}

TEST(ProducerLossTableTest, HostileReportsStayBounded) {
  ProducerLossTable table;
  // More writers than a producer may have.
  for (uint32_t w = 1; w <= ProducerLossTable::kMaxWritersPerProducer + 5;
       w++) {
    table.OnReport(1, "many", kApp, Report({Entry(w, 1)}));
  }
  // Counters near the top: the sum saturates instead of wrapping.
  table.OnReport(
      2, "huge", kApp,
      Report({Entry(1, UINT64_MAX - 1, 0, UINT64_MAX), Entry(2, 5, 0, 5)}));
  ProducerLossTable::Totals t = table.totals();
  EXPECT_EQ(t.packets_dropped, UINT64_MAX);
  EXPECT_EQ(t.bytes_dropped, UINT64_MAX);
  perfetto::protos::TraceStats stats = Decode(table);
  ASSERT_EQ(stats.ringtrace_producer_loss_size(), 2);
  EXPECT_EQ(
      static_cast<size_t>(stats.ringtrace_producer_loss(0).writers_size()),
      ProducerLossTable::kMaxWritersPerProducer);
  EXPECT_EQ(stats.ringtrace_producer_loss(0).writers_over_limit(), 5u);

  // Departed producers are remembered up to a bound, oldest evicted first.
  ProducerLossTable departed;
  const uint32_t n = ProducerLossTable::kMaxDepartedProducers + 3;
  for (uint32_t i = 0; i < n; i++) {
    const auto id = static_cast<trace_buffer::ProducerID>(i % 60000 + 1);
    departed.OnProducerRemoved(id, "gone", kApp);
  }
  stats = Decode(departed);
  EXPECT_EQ(static_cast<size_t>(stats.ringtrace_producer_loss_size()),
            ProducerLossTable::kMaxDepartedProducers);
  EXPECT_EQ(stats.ringtrace_loss_records_evicted(), 3u);
  EXPECT_EQ(stats.ringtrace_producer_loss(0).producer_id(), 4u);
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
