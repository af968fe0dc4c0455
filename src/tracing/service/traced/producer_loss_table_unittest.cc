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

// Every report below comes 1 s after the table's start (0): far inside the
// bound except where a test says otherwise.
constexpr uint64_t kOneSecondNs = 1000000000;

void Report(ProducerLossTable* table,
            trace_buffer::ProducerID id,
            const std::string& name,
            const trace_buffer::ClientIdentity& identity,
            const ipc::DrainRequestMsg& report) {
  table->OnReport(id, name, identity, report, kOneSecondNs);
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
  Report(&table, 3, "app", kApp, Report({Entry(1, 5, 1, 500, 2)}));
  // Lower in one counter: ignored, counted.
  Report(&table, 3, "app", kApp, Report({Entry(1, 6, 0, 600, 2)}));
  // Higher (or equal) in all: taken.
  Report(&table, 3, "app", kApp,
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
  Report(&table, 1, "clean", kApp, Report({}, true));
  table.OnProducerRemoved(1, "clean", kApp);
  // Never reported (killed): listed, final_report false.
  table.OnProducerRemoved(2, "killed", kApp);
  // Orderly with a loss: listed.
  Report(&table, 4, "lossy", kApp, Report({Entry(9, 3)}, true));
  table.OnProducerRemoved(4, "lossy", kApp);
  // Connected, no report: not listed.
  Report(&table, 5, "live", kApp, Report({Entry(1, 0)}));
  const perfetto::protos::TraceStats stats = Decode(table);
  ASSERT_EQ(stats.ringtrace_producer_loss_size(), 2);
  EXPECT_EQ(stats.ringtrace_producer_loss(0).producer_name(), "killed");
  EXPECT_FALSE(stats.ringtrace_producer_loss(0).final_report());
  EXPECT_FALSE(stats.ringtrace_producer_loss(0).connected());
  EXPECT_EQ(stats.ringtrace_producer_loss(1).producer_name(), "lossy");
  EXPECT_TRUE(stats.ringtrace_producer_loss(1).final_report());
  EXPECT_EQ(stats.ringtrace_packets_dropped_by_producers(), 3u);
}

// The per-buffer split of the packets dropped (BufferStats.
// trace_writer_packet_loss): by each entry's target buffer, over departed
// and connected producers, both packet counts, every writer once.
TEST(ProducerLossTableTest, PacketsDroppedPerTargetBuffer) {
  ProducerLossTable table;
  auto to = [](ipc::WriterLossEntry e, uint32_t buffer) {
    e.target_buffer = buffer;
    return e;
  };
  Report(&table, 1, "a", kApp,
         Report({to(Entry(1, 10, 1), 3), to(Entry(2, 5), 4)}, true));
  table.OnProducerRemoved(1, "a", kApp);
  Report(&table, 2, "b", kApp, Report({to(Entry(1, 7, 2), 3)}));
  // A later, higher entry replaces the writer's earlier one.
  Report(&table, 2, "b", kApp, Report({to(Entry(1, 8, 2), 3)}));
  EXPECT_EQ(table.PacketsDroppedFor(3), 11u + 10u);
  EXPECT_EQ(table.PacketsDroppedFor(4), 5u);
  EXPECT_EQ(table.PacketsDroppedFor(5), 0u);
  EXPECT_EQ(table.PacketsDroppedFor(3) + table.PacketsDroppedFor(4),
            table.totals().packets_dropped);
}

// A ProducerID is reused once the buffer holds nothing of its departed
// owner: only the id's latest record names the sequences of that id.
TEST(ProducerLossTableTest, OnlyTheLatestOwnerOfAReusedIdNamesSequences) {
  ProducerLossTable table;
  Report(&table, 7, "first", kApp, Report({Entry(2, 4)}, true));
  table.OnProducerRemoved(7, "first", kApp);
  Report(&table, 7, "second", kApp, Report({Entry(2, 1)}));
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
    Report(&table, 1, "many", kApp, Report({Entry(w, 1)}));
  }
  // Counters near the top: the sum saturates instead of wrapping.
  // (Reported at the end of time: the bound does not apply.)
  table.OnReport(
      2, "huge", kApp,
      Report({Entry(1, UINT64_MAX - 1, 0, UINT64_MAX), Entry(2, 5, 0, 5)}),
      UINT64_MAX);
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

// A producer's claim above what one writer could have lost since the
// session's start is clamped to that bound, and counted.
TEST(ProducerLossTableTest, ClaimsAreBoundedBySessionTime) {
  const uint64_t start = 5 * kOneSecondNs;
  ProducerLossTable table(start);
  const trace_buffer::ClientIdentity app{10, 1000};
  ipc::DrainRequestMsg forged =
      Report({Entry(1, 2000000000000ull, 0, UINT64_MAX, 2000000000000ull)});
  table.OnReport(2, "forger", app, forged, start + kOneSecondNs);
  const uint64_t packet_bound =
      kOneSecondNs + ProducerLossTable::kBoundSlackPackets;
  const perfetto::protos::TraceStats stats = Decode(table);
  ASSERT_EQ(stats.ringtrace_producer_loss_size(), 1);
  const auto& w = stats.ringtrace_producer_loss(0).writers(0);
  EXPECT_EQ(w.packets_dropped_before_end(), packet_bound);
  EXPECT_EQ(w.bytes_dropped(),
            kOneSecondNs * ProducerLossTable::kBoundBytesPerNs +
                ProducerLossTable::kBoundSlackBytes);
  EXPECT_EQ(w.stall_timeouts(), packet_bound);
  EXPECT_EQ(stats.ringtrace_producer_loss(0).claims_clamped(), 1u);
  EXPECT_EQ(stats.ringtrace_loss_claims_clamped(), 1u);
  EXPECT_EQ(stats.ringtrace_packets_dropped_by_producers(), packet_bound);
  // An honest report under the bound is taken whole.
  table.OnReport(2, "forger", app, Report({Entry(2, 7, 1)}),
                 start + kOneSecondNs);
  EXPECT_EQ(table.totals().packets_dropped, packet_bound + 8);
  EXPECT_EQ(table.totals().claims_clamped, 1u);
}

// Counters only the writer loss area showed are counted as such; a slot
// equal to what a report already said adds nothing.
TEST(ProducerLossTableTest, LossAreaEntriesRaiseCountersAndAreCounted) {
  ProducerLossTable table;
  const trace_buffer::ClientIdentity app{10, 1000};
  Report(&table, 4, "app", app, Report({Entry(1, 3), Entry(2, 5)}));
  table.OnEntry(4, "app", app, Entry(1, 3), kOneSecondNs,
                /*from_loss_area=*/true);
  table.OnEntry(4, "app", app, Entry(2, 9, 2), kOneSecondNs,
                /*from_loss_area=*/true);
  table.OnEntry(4, "app", app, Entry(3, 1), kOneSecondNs,
                /*from_loss_area=*/true);
  table.OnProducerRemoved(4, "app", app);
  const perfetto::protos::TraceStats stats = Decode(table);
  ASSERT_EQ(stats.ringtrace_producer_loss_size(), 1);
  EXPECT_FALSE(stats.ringtrace_producer_loss(0).final_report());
  EXPECT_EQ(stats.ringtrace_producer_loss(0).writers_from_loss_area(), 2u);
  EXPECT_EQ(stats.ringtrace_packets_dropped_by_producers(), 3u + 11u + 1u);
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
