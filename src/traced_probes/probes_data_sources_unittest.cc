/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/probes_data_sources.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"

namespace ringtrace {
namespace probes {
namespace {

using perfetto::protos::FtraceConfig;
using perfetto::protos::ProcessStatsConfig;
using perfetto::protos::SysStatsConfig;

bool Mentions(const std::vector<std::string>& notes, const std::string& s) {
  for (const std::string& n : notes) {
    if (n.find(s) != std::string::npos)
      return true;
  }
  return false;
}

TEST(ProbesDataSourcesTest, ProcessStatsConfigHonouredFields) {
  ProcessStatsConfig config;
  config.set_scan_all_processes_on_start(true);
  config.set_record_thread_names(true);
  config.set_proc_stats_poll_ms(500);
  config.set_record_process_age(true);
  config.set_record_process_runtime(true);
  config.set_skip_main_thread_message(true);
  std::vector<std::string> notes;
  const ProcessStatsOptions o = ProcessStatsOptionsFromConfig(config, &notes);
  EXPECT_TRUE(notes.empty()) << notes[0];
  EXPECT_TRUE(o.scan_all_processes_on_start);
  EXPECT_TRUE(o.record_thread_names);
  EXPECT_EQ(o.proc_stats_poll_ms, 500u);
  EXPECT_TRUE(o.record_process_age);
  EXPECT_TRUE(o.record_process_runtime);
  EXPECT_TRUE(o.skip_main_thread_message);
  EXPECT_TRUE(o.on_demand);  // with the scan, as in Perfetto

  // DISABLE_ON_DEMAND is honoured (no note); without the scan there are no
  // descriptions, on demand neither.
  config.add_quirks(ProcessStatsConfig::DISABLE_ON_DEMAND);
  EXPECT_FALSE(ProcessStatsOptionsFromConfig(config, &notes).on_demand);
  EXPECT_TRUE(notes.empty()) << notes[0];
  ProcessStatsConfig no_scan;
  no_scan.set_proc_stats_poll_ms(500);
  EXPECT_FALSE(ProcessStatsOptionsFromConfig(no_scan, &notes).on_demand);
}

TEST(ProbesDataSourcesTest, ProcessStatsConfigNamesWhatItDoesNotDo) {
  ProcessStatsConfig config;
  config.set_proc_stats_poll_ms(10);
  config.add_quirks(ProcessStatsConfig::DISABLE_INITIAL_DUMP);
  config.set_proc_stats_cache_ttl_ms(1000);
  config.set_scan_smaps_rollup(true);
  config.set_record_process_dmabuf_rss(true);
  config.set_resolve_process_fds(true);
  config.set_record_thread_names(true);
  std::vector<std::string> notes;
  const ProcessStatsOptions o = ProcessStatsOptionsFromConfig(config, &notes);
  EXPECT_EQ(o.proc_stats_poll_ms, kMinProcStatsPollMs);
  EXPECT_EQ(notes.size(), 7u);
  for (const char* field : {"proc_stats_poll_ms: 10 ms raised", "quirks: 1",
                            "proc_stats_cache_ttl_ms", "scan_smaps_rollup",
                            "record_process_dmabuf_rss", "resolve_process_fds",
                            "record_thread_names: without"}) {
    EXPECT_TRUE(Mentions(notes, field)) << field;
  }

  notes.clear();
  ProcessStatsOptionsFromConfig(ProcessStatsConfig(), &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(Mentions(notes, "records nothing"));
}

TEST(ProbesDataSourcesTest, SysStatsConfigEmptyListsMeanEveryCounter) {
  SysStatsConfig config;
  config.set_meminfo_period_ms(100);
  config.set_vmstat_period_ms(200);
  config.set_stat_period_ms(300);
  std::vector<std::string> notes;
  const SysStatsOptions o = SysStatsOptionsFromConfig(config, &notes);
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(o.meminfo_period_ms, 100u);
  EXPECT_EQ(o.vmstat_period_ms, 200u);
  EXPECT_EQ(o.stat_period_ms, 300u);
  EXPECT_EQ(o.meminfo.count(), kMeminfoCounterLimit);
  EXPECT_EQ(o.vmstat.count(), kVmstatCounterLimit);
  EXPECT_TRUE(o.cpu_times && o.irq_counts && o.softirq_counts && o.fork_count &&
              o.context_switches);
}

TEST(ProbesDataSourcesTest, SysStatsConfigListsAndWhatItDoesNotDo) {
  SysStatsConfig config;
  config.set_meminfo_period_ms(5);
  config.add_meminfo_counters(perfetto::protos::MEMINFO_MEM_TOTAL);
  config.add_meminfo_counters(perfetto::protos::MEMINFO_UNSPECIFIED);
  config.add_vmstat_counters(perfetto::protos::VMSTAT_PGFAULT);
  config.add_stat_counters(SysStatsConfig::STAT_CPU_TIMES);
  config.add_stat_counters(SysStatsConfig::STAT_RINGTRACE_CONTEXT_SWITCHES);
  config.set_cpufreq_period_ms(100);
  config.set_buddyinfo_period_ms(100);
  config.set_diskstat_period_ms(100);
  config.set_cpuidle_period_ms(100);
  config.set_gpufreq_period_ms(100);
  config.set_slab_period_ms(100);
  std::vector<std::string> notes;
  const SysStatsOptions o = SysStatsOptionsFromConfig(config, &notes);
  EXPECT_EQ(o.meminfo_period_ms, kMinSysStatsPeriodMs);
  EXPECT_EQ(o.meminfo.count(), 1u);
  EXPECT_TRUE(o.meminfo.test(perfetto::protos::MEMINFO_MEM_TOTAL));
  EXPECT_EQ(o.vmstat.count(), 1u);
  EXPECT_TRUE(o.vmstat.test(perfetto::protos::VMSTAT_PGFAULT));
  EXPECT_TRUE(o.cpu_times);
  EXPECT_TRUE(o.context_switches);
  EXPECT_FALSE(o.irq_counts || o.softirq_counts || o.fork_count);
  EXPECT_EQ(notes.size(), 8u);
  for (const char* field :
       {"meminfo_period_ms: 5 ms raised", "meminfo_counters: 0 names no",
        "cpufreq_period_ms", "buddyinfo_period_ms", "diskstat_period_ms",
        "cpuidle_period_ms", "gpufreq_period_ms", "slab_period_ms"}) {
    EXPECT_TRUE(Mentions(notes, field)) << field;
  }

  notes.clear();
  SysStatsOptionsFromConfig(SysStatsConfig(), &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(Mentions(notes, "records nothing"));
}

TEST(ProbesDataSourcesTest, FtraceConfigHonouredFields) {
  FtraceConfig config;
  config.add_ftrace_events("sched/sched_switch");
  config.add_ftrace_events("sched/*");
  config.set_buffer_size_kb(512);
  config.set_drain_period_ms(250);
  config.mutable_compact_sched()->set_enabled(true);
  std::vector<std::string> notes;
  const FtraceOptions o = FtraceOptionsFromConfig(config, &notes);
  EXPECT_TRUE(notes.empty()) << notes[0];
  EXPECT_EQ(o.events,
            (std::vector<std::string>{"sched/sched_switch", "sched/*"}));
  EXPECT_EQ(o.buffer_size_kb, 512u);
  EXPECT_EQ(o.drain_period_ms, 250u);
  EXPECT_TRUE(o.compact_sched);
}

TEST(ProbesDataSourcesTest, FtraceConfigDefaultsAndBounds) {
  FtraceConfig config;
  config.add_ftrace_events("sched/sched_switch");
  std::vector<std::string> notes;
  FtraceOptions o = FtraceOptionsFromConfig(config, &notes);
  EXPECT_TRUE(notes.empty());
  // Perfetto's defaults.
  EXPECT_EQ(o.buffer_size_kb, kDefaultFtraceBufferSizeKb);
  EXPECT_EQ(o.drain_period_ms, 100u);
  EXPECT_FALSE(o.compact_sched);
  config.set_buffer_size_kb(0);
  o = FtraceOptionsFromConfig(config, &notes);
  EXPECT_EQ(o.buffer_size_kb, kDefaultFtraceBufferSizeKb);
  EXPECT_TRUE(notes.empty());

  config.set_buffer_size_kb(1u << 30);
  config.set_drain_period_ms(1);
  o = FtraceOptionsFromConfig(config, &notes);
  EXPECT_EQ(o.buffer_size_kb, kMaxFtraceBufferSizeKb);
  EXPECT_EQ(o.drain_period_ms, kMinFtraceDrainPeriodMs);
  EXPECT_TRUE(Mentions(notes, "buffer_size_kb: 1073741824 KiB lowered"));
  EXPECT_TRUE(Mentions(notes, "drain_period_ms: 1 ms raised"));
  notes.clear();
  config.set_drain_period_ms(3600 * 1000);
  o = FtraceOptionsFromConfig(config, &notes);
  EXPECT_EQ(o.drain_period_ms, kMaxFtraceDrainPeriodMs);
  EXPECT_TRUE(Mentions(notes, "drain_period_ms: 3600000 ms lowered"));

  notes.clear();
  FtraceOptionsFromConfig(FtraceConfig(), &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(Mentions(notes, "no ftrace_events"));
}

TEST(ProbesDataSourcesTest, AnInstanceThatCannotStartIsCountedNotStarted) {
  ProbesLoop loop;
  ProbesDataSource ds(ProbesDataSource::Kind::kSysStats, &loop, "/proc");
  EXPECT_STREQ(ds.name(), kSysStatsDataSource);
  DataSourceInstanceConfig config;
  config.instance_id = 1;
  config.name = kSysStatsDataSource;
  config.config = "\xff\xff\xff";  // not a DataSourceConfig
  ds.OnStart(config);
  EXPECT_EQ(ds.start_failures(), 1u);
  // A valid config, but no producer to write through.
  perfetto::protos::DataSourceConfig dsc;
  dsc.set_name(kSysStatsDataSource);
  dsc.mutable_sys_stats_config()->set_meminfo_period_ms(100);
  config.config = dsc.SerializeAsString();
  ds.OnStart(config);
  EXPECT_EQ(ds.start_failures(), 2u);
  EXPECT_EQ(ds.running_instances(), 0u);
  EXPECT_EQ(loop.size(), 0u);
  ds.OnStop(1);  // nothing to stop: no effect
  EXPECT_EQ(
      ProbesDataSource(ProbesDataSource::Kind::kProcessStats, &loop, "/proc")
          .name(),
      std::string(kProcessStatsDataSource));
  EXPECT_EQ(
      ProbesDataSource(ProbesDataSource::Kind::kFtrace, &loop, "/proc").name(),
      std::string(kFtraceDataSource));
}

TEST(ProbesDataSourcesTest, NsPerClockTick) {
  // USER_HZ is 100 on every Linux architecture.
  EXPECT_EQ(NsPerClockTick(), 10000000u);
}

}  // namespace
}  // namespace probes
}  // namespace ringtrace
