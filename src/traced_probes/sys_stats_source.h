/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The linux.sys_stats data source's work for one instance
// (docs/probes.md): SysStats packets with
//   - /proc/meminfo every meminfo_period_ms: the MeminfoCounters chosen
//     (all when none is), in kB;
//   - /proc/vmstat every vmstat_period_ms: the VmstatCounters chosen (all
//     when none is);
//   - /proc/stat every stat_period_ms, by the StatCounters chosen (all when
//     none is): cpu_stat (each CPU's times in ns), num_irq_total and
//     num_irq, num_softirq_total and num_softirq, num_forks, and
//     ringtrace_num_context_switches.
// Each period is due first when the instance starts. The files due at the
// same time go into one packet, whose timestamp (BOOTTIME) is taken before
// the first read and whose collection_end_timestamp after the last. A key
// of a file that no enum value names is skipped (counted).
//
// Thread model: a ProbeSource (probe_source.h).

#ifndef SRC_TRACED_PROBES_SYS_STATS_SOURCE_H_
#define SRC_TRACED_PROBES_SYS_STATS_SOURCE_H_

#include <stddef.h>
#include <stdint.h>

#include <bitset>
#include <string>
#include <vector>

#include "ringtrace/trace_writer_v2.h"
#include "src/traced_probes/probe_source.h"
#include "src/traced_probes/proc_fs.h"
#include "src/traced_probes/sys_stats_counters.h"

namespace ringtrace {
namespace probes {

// Read bounds: the files grow with the number of CPUs and interrupts.
constexpr size_t kMaxMeminfoBytes = 64 * 1024;
constexpr size_t kMaxVmstatBytes = 64 * 1024;
constexpr size_t kMaxStatBytes = 1024 * 1024;
// The shortest period honoured (a smaller one is raised to it).
constexpr uint32_t kMinSysStatsPeriodMs = 10;
constexpr size_t kMaxUnknownKeyNames = 16;

struct SysStatsOptions {
  // 0: not read.
  uint32_t meminfo_period_ms = 0;
  uint32_t vmstat_period_ms = 0;
  uint32_t stat_period_ms = 0;
  // The counters written (by enum value).
  std::bitset<kMeminfoCounterLimit> meminfo;
  std::bitset<kVmstatCounterLimit> vmstat;
  bool cpu_times = false;
  bool irq_counts = false;
  bool softirq_counts = false;
  bool fork_count = false;
  bool context_switches = false;
  // Clock ticks (/proc/stat) to ns: 1e9 / sysconf(_SC_CLK_TCK).
  uint64_t ns_per_tick = 10000000;
};

struct SysStatsCounters {
  uint64_t packets = 0;
  uint64_t meminfo_reads = 0;
  uint64_t vmstat_reads = 0;
  uint64_t stat_reads = 0;
  uint64_t values = 0;  // counters written
  // Keys of /proc/meminfo and /proc/vmstat that no enum value names.
  uint64_t unknown_keys = 0;
  // The first kMaxUnknownKeyNames of them, for the log.
  std::vector<std::string> unknown_key_names;
  uint64_t periods_missed = 0;  // skipped because a run was late
  ScanCounters scan;
};

class SysStatsSource : public ProbeSource {
 public:
  // |writer| (not owned) must outlive the source; |proc_root| is "/proc"
  // but in tests.
  SysStatsSource(const SysStatsOptions& options,
                 shm_ring::TraceWriterV2* writer,
                 std::string proc_root);
  ~SysStatsSource() override;

  uint64_t Run(uint64_t now_ms, const std::atomic<bool>& stop) override;

  const SysStatsCounters& counters() const { return counters_; }

 private:
  void UnknownKey(std::string_view key);

  const SysStatsOptions options_;
  shm_ring::TraceWriterV2* const writer_;
  const ProcFs proc_;
  bool started_ = false;
  Schedule meminfo_;
  Schedule vmstat_;
  Schedule stat_;
  SysStatsCounters counters_;
  std::string meminfo_buf_;
  std::string vmstat_buf_;
  std::string stat_buf_;
};

}  // namespace probes
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_SYS_STATS_SOURCE_H_
