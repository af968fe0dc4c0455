/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/sys_stats_source.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "src/traced_probes/test/fake_proc.h"

namespace ringtrace {
namespace probes {
namespace {

using perfetto::protos::SysStats;
using perfetto::protos::TracePacket;
using test::DrainPackets;
using test::FakeProc;

namespace pb = perfetto::protos;

constexpr uint64_t kNsPerTick = 10000000;

constexpr char kMeminfo[] =
    "MemTotal:       16303592 kB\n"
    "MemFree:         1234567 kB\n"
    "MemAvailable:    9876543 kB\n"
    "Active(anon):      98765 kB\n"
    "SReclaimable:       4321 kB\n"
    "Committed_AS:    7777777 kB\n"
    "Zswap:                 0 kB\n"  // a key no enum value names
    "HugePages_Total:       0\n";    // another

constexpr char kVmstat[] =
    "nr_free_pages 408149\n"
    "nr_inactive_anon 5000\n"
    "pgfault 12345678901\n"
    "nr_not_a_counter 1\n";

constexpr char kStat[] =
    "cpu  1000 20 300 40000 50 6 7 8 0 0\n"
    "cpu0 500 10 150 20000 25 3 4 5 0 0\n"
    "cpu1 500 10 150 20000 25 3 3 3 0 0\n"
    "intr 1000 0 900 0 0 100\n"
    "ctxt 987654\n"
    "btime 1700000000\n"
    "processes 4321\n"
    "softirq 600 0 500 0 100\n";

std::vector<SysStats> SysStatsOf(const std::vector<TracePacket>& packets) {
  std::vector<SysStats> out;
  for (const TracePacket& p : packets) {
    EXPECT_TRUE(p.has_sys_stats());
    EXPECT_GT(p.timestamp(), 0u);
    EXPECT_GE(p.sys_stats().collection_end_timestamp(), p.timestamp());
    out.push_back(p.sys_stats());
  }
  return out;
}

std::map<int, uint64_t> Meminfo(const SysStats& s) {
  std::map<int, uint64_t> out;
  for (const auto& v : s.meminfo())
    out[v.key()] = v.value();
  return out;
}

std::map<int, uint64_t> Vmstat(const SysStats& s) {
  std::map<int, uint64_t> out;
  for (const auto& v : s.vmstat())
    out[v.key()] = v.value();
  return out;
}

class SysStatsSourceTest : public ::testing::Test {
 protected:
  SysStatsSourceTest() {
    proc_.Write("meminfo", kMeminfo);
    proc_.Write("vmstat", kVmstat);
    proc_.Write("stat", kStat);
  }

  SysStatsOptions AllOf(uint32_t meminfo_ms,
                        uint32_t vmstat_ms,
                        uint32_t stat_ms) {
    SysStatsOptions o;
    o.meminfo_period_ms = meminfo_ms;
    o.vmstat_period_ms = vmstat_ms;
    o.stat_period_ms = stat_ms;
    o.meminfo.set();
    o.vmstat.set();
    o.cpu_times = o.irq_counts = o.softirq_counts = o.fork_count =
        o.context_switches = true;
    o.ns_per_tick = kNsPerTick;
    return o;
  }

  FakeProc proc_;
  encoding::PacketCapture capture_{4096, 64};
  std::atomic<bool> stop_{false};
};

TEST_F(SysStatsSourceTest, OnePacketWithEveryFileDueAtTheStart) {
  SysStatsSource source(AllOf(100, 100, 100), capture_.writer(), proc_.root());
  EXPECT_EQ(source.Run(1000, stop_), 1100u);
  const std::vector<SysStats> all = SysStatsOf(DrainPackets(&capture_));
  ASSERT_EQ(all.size(), 1u);
  const SysStats& s = all[0];

  const std::map<int, uint64_t> mem = Meminfo(s);
  EXPECT_EQ(mem.size(), 6u);
  EXPECT_EQ(mem.at(pb::MEMINFO_MEM_TOTAL), 16303592u);
  EXPECT_EQ(mem.at(pb::MEMINFO_MEM_FREE), 1234567u);
  EXPECT_EQ(mem.at(pb::MEMINFO_MEM_AVAILABLE), 9876543u);
  EXPECT_EQ(mem.at(pb::MEMINFO_ACTIVE_ANON), 98765u);
  EXPECT_EQ(mem.at(pb::MEMINFO_SLAB_RECLAIMABLE), 4321u);
  EXPECT_EQ(mem.at(pb::MEMINFO_COMMITED_AS), 7777777u);

  const std::map<int, uint64_t> vm = Vmstat(s);
  EXPECT_EQ(vm.size(), 3u);
  EXPECT_EQ(vm.at(pb::VMSTAT_NR_FREE_PAGES), 408149u);
  EXPECT_EQ(vm.at(pb::VMSTAT_NR_INACTIVE_ANON), 5000u);
  EXPECT_EQ(vm.at(pb::VMSTAT_PGFAULT), 12345678901u);

  ASSERT_EQ(s.cpu_stat_size(), 2);
  EXPECT_EQ(s.cpu_stat(0).cpu_id(), 0u);
  EXPECT_EQ(s.cpu_stat(0).user_ns(), 500 * kNsPerTick);
  EXPECT_EQ(s.cpu_stat(0).user_nice_ns(), 10 * kNsPerTick);
  EXPECT_EQ(s.cpu_stat(0).system_mode_ns(), 150 * kNsPerTick);
  EXPECT_EQ(s.cpu_stat(0).idle_ns(), 20000 * kNsPerTick);
  EXPECT_EQ(s.cpu_stat(0).io_wait_ns(), 25 * kNsPerTick);
  EXPECT_EQ(s.cpu_stat(0).irq_ns(), 3 * kNsPerTick);
  EXPECT_EQ(s.cpu_stat(0).softirq_ns(), 4 * kNsPerTick);
  EXPECT_EQ(s.cpu_stat(0).steal_ns(), 5 * kNsPerTick);
  EXPECT_EQ(s.cpu_stat(1).cpu_id(), 1u);
  EXPECT_EQ(s.num_irq_total(), 1000u);
  ASSERT_EQ(s.num_irq_size(), 2);
  EXPECT_EQ(s.num_irq(0).irq(), 1);
  EXPECT_EQ(s.num_irq(0).count(), 900u);
  EXPECT_EQ(s.num_softirq_total(), 600u);
  ASSERT_EQ(s.num_softirq_size(), 2);
  EXPECT_EQ(s.num_softirq(1).irq(), 3);
  EXPECT_EQ(s.num_forks(), 4321u);
  EXPECT_EQ(s.ringtrace_num_context_switches(), 987654u);

  const SysStatsCounters& c = source.counters();
  EXPECT_EQ(c.packets, 1u);
  EXPECT_EQ(c.unknown_keys, 3u);
  EXPECT_EQ(c.unknown_key_names,
            (std::vector<std::string>{"Zswap", "HugePages_Total",
                                      "nr_not_a_counter"}));
  EXPECT_EQ(c.scan.malformed, 0u);
}

TEST_F(SysStatsSourceTest, OnlyTheCountersChosen) {
  SysStatsOptions o = AllOf(100, 100, 100);
  o.meminfo.reset();
  o.meminfo.set(static_cast<size_t>(MeminfoCounter::MEMINFO_MEM_TOTAL));
  o.vmstat.reset();
  o.vmstat.set(static_cast<size_t>(VmstatCounter::VMSTAT_PGFAULT));
  o.irq_counts = o.softirq_counts = o.context_switches = false;
  SysStatsSource source(o, capture_.writer(), proc_.root());
  source.Run(1000, stop_);
  const std::vector<SysStats> all = SysStatsOf(DrainPackets(&capture_));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(Meminfo(all[0]),
            (std::map<int, uint64_t>{{pb::MEMINFO_MEM_TOTAL, 16303592}}));
  EXPECT_EQ(Vmstat(all[0]),
            (std::map<int, uint64_t>{{pb::VMSTAT_PGFAULT, 12345678901}}));
  EXPECT_EQ(all[0].cpu_stat_size(), 2);
  EXPECT_EQ(all[0].num_forks(), 4321u);
  EXPECT_FALSE(all[0].has_num_irq_total());
  EXPECT_FALSE(all[0].has_num_softirq_total());
  EXPECT_FALSE(all[0].has_ringtrace_num_context_switches());
}

TEST_F(SysStatsSourceTest, EachPeriodOnItsOwnSchedule) {
  SysStatsSource source(AllOf(100, 0, 300), capture_.writer(), proc_.root());
  EXPECT_EQ(source.Run(1000, stop_), 1100u);
  EXPECT_EQ(source.Run(1100, stop_), 1200u);
  EXPECT_EQ(source.Run(1200, stop_), 1300u);
  EXPECT_EQ(source.Run(1300, stop_), 1400u);
  const std::vector<SysStats> all = SysStatsOf(DrainPackets(&capture_));
  ASSERT_EQ(all.size(), 4u);
  for (size_t i = 0; i < all.size(); i++) {
    EXPECT_EQ(all[i].meminfo_size(), 6) << i;
    EXPECT_EQ(all[i].vmstat_size(), 0) << i;
    // /proc/stat at 1000 and 1300.
    EXPECT_EQ(all[i].cpu_stat_size(), i == 0 || i == 3 ? 2 : 0) << i;
  }
  EXPECT_EQ(source.counters().meminfo_reads, 4u);
  EXPECT_EQ(source.counters().stat_reads, 2u);
  EXPECT_EQ(source.counters().vmstat_reads, 0u);
  // Called early: nothing is due, nothing is written.
  EXPECT_EQ(source.Run(1350, stop_), 1400u);
  EXPECT_TRUE(DrainPackets(&capture_).empty());
}

TEST_F(SysStatsSourceTest, APeriodBelowTheMinimumIsRaised) {
  SysStatsSource source(AllOf(1, 0, 0), capture_.writer(), proc_.root());
  EXPECT_EQ(source.Run(1000, stop_), 1000u + kMinSysStatsPeriodMs);
}

TEST_F(SysStatsSourceTest, MissingAndMalformedFilesAreCounted) {
  proc_.Remove("vmstat");
  proc_.Write("meminfo", "MemTotal: 12 kB\nMemFree: lots\nCached: 5");
  proc_.Write("stat", std::string(kMaxStatBytes + 100, 'x'));
  SysStatsSource source(AllOf(100, 100, 100), capture_.writer(), proc_.root());
  source.Run(1000, stop_);
  const std::vector<SysStats> all = SysStatsOf(DrainPackets(&capture_));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(Meminfo(all[0]),
            (std::map<int, uint64_t>{{pb::MEMINFO_MEM_TOTAL, 12}}));
  EXPECT_EQ(all[0].vmstat_size(), 0);
  EXPECT_EQ(all[0].cpu_stat_size(), 0);
  const ScanCounters& s = source.counters().scan;
  EXPECT_EQ(s.vanished, 1u);   // vmstat
  EXPECT_EQ(s.truncated, 1u);  // stat
  EXPECT_EQ(s.malformed, 2u);  // meminfo and stat
}

TEST_F(SysStatsSourceTest, NothingReadableWritesNoPacket) {
  SysStatsSource source(AllOf(100, 100, 100), capture_.writer(),
                        proc_.root() + "/nothing");
  EXPECT_EQ(source.Run(1000, stop_), 1100u);
  EXPECT_TRUE(DrainPackets(&capture_).empty());
  EXPECT_EQ(source.counters().scan.vanished, 3u);
}

TEST_F(SysStatsSourceTest, NoPacketBeginsOnceStopIsSet) {
  SysStatsSource source(AllOf(100, 100, 100), capture_.writer(), proc_.root());
  stop_.store(true);
  source.Run(1000, stop_);
  EXPECT_TRUE(DrainPackets(&capture_).empty());
  EXPECT_EQ(source.counters().packets, 0u);
}

}  // namespace
}  // namespace probes
}  // namespace ringtrace
