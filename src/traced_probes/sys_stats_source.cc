/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/sys_stats_source.h"

#include <algorithm>
#include <utility>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "src/base/checked_math.h"
#include "src/base/time.h"
#include "src/traced_probes/proc_parsers.h"

namespace ringtrace {
namespace probes {
namespace {

namespace rt = perfetto::protos::rtzero;

uint32_t Clamp(uint32_t period_ms) {
  return period_ms == 0 ? 0 : std::max(period_ms, kMinSysStatsPeriodMs);
}

uint64_t TicksToNs(uint64_t ticks, uint64_t ns_per_tick) {
  uint64_t ns = 0;
  if (!base::CheckedMul(ticks, ns_per_tick, &ns))
    return UINT64_MAX;  // not reachable in 584 years of uptime
  return ns;
}

bool Readable(ReadStatus r) {
  return r == ReadStatus::kOk || r == ReadStatus::kTruncated;
}

}  // namespace

SysStatsSource::SysStatsSource(const SysStatsOptions& options,
                               shm_ring::TraceWriterV2* writer,
                               std::string proc_root)
    : options_(options), writer_(writer), proc_(std::move(proc_root)) {}

SysStatsSource::~SysStatsSource() = default;

void SysStatsSource::UnknownKey(std::string_view key) {
  counters_.unknown_keys++;
  std::vector<std::string>& names = counters_.unknown_key_names;
  if (names.size() < kMaxUnknownKeyNames &&
      std::find(names.begin(), names.end(), key) == names.end()) {
    names.emplace_back(key.substr(0, kMaxNameBytes));
  }
}

uint64_t SysStatsSource::Run(uint64_t now_ms, const std::atomic<bool>& stop) {
  if (!started_) {
    started_ = true;
    meminfo_ = Schedule(Clamp(options_.meminfo_period_ms), now_ms);
    vmstat_ = Schedule(Clamp(options_.vmstat_period_ms), now_ms);
    stat_ = Schedule(Clamp(options_.stat_period_ms), now_ms);
  }
  const bool meminfo = meminfo_.Due(now_ms);
  const bool vmstat = vmstat_.Due(now_ms);
  const bool stat = stat_.Due(now_ms);
  // relaxed: probe_source.h.
  if ((meminfo || vmstat || stat) && !stop.load(std::memory_order_relaxed)) {
    ScanCounters* scan = &counters_.scan;
    const uint64_t ts = base::BootTimeNs();
    // Read everything first: the packet's timestamp and end time bracket
    // the reads.
    KeyValues meminfo_values;
    KeyValues vmstat_values;
    SystemStat stat_values;
    bool have_meminfo = false, have_vmstat = false, have_stat = false;
    if (meminfo) {
      counters_.meminfo_reads++;
      have_meminfo = Readable(
          proc_.ReadRootFile("meminfo", kMaxMeminfoBytes, &meminfo_buf_, scan));
      if (have_meminfo) {
        meminfo_values = ParseMeminfo(meminfo_buf_);
        scan->malformed += meminfo_values.malformed_lines != 0;
      }
    }
    if (vmstat) {
      counters_.vmstat_reads++;
      have_vmstat = Readable(
          proc_.ReadRootFile("vmstat", kMaxVmstatBytes, &vmstat_buf_, scan));
      if (have_vmstat) {
        vmstat_values = ParseVmstat(vmstat_buf_);
        scan->malformed += vmstat_values.malformed_lines != 0;
      }
    }
    if (stat) {
      counters_.stat_reads++;
      have_stat =
          Readable(proc_.ReadRootFile("stat", kMaxStatBytes, &stat_buf_, scan));
      if (have_stat) {
        stat_values = ParseSystemStat(stat_buf_);
        scan->malformed += stat_values.malformed_lines != 0;
        scan->over_limit += stat_values.entries_cut;
      }
    }

    if (have_meminfo || have_vmstat || have_stat) {
      auto handle = writer_->NewTracePacket();
      rt::TracePacket packet(handle);
      packet.set_timestamp(ts);
      rt::SysStats out = packet.set_sys_stats();
      for (const KeyValue& kv : meminfo_values.values) {
        MeminfoCounter counter;
        if (!MeminfoCounterForKey(kv.key, &counter)) {
          UnknownKey(kv.key);
          continue;
        }
        if (!options_.meminfo.test(static_cast<size_t>(counter)))
          continue;
        rt::SysStats_MeminfoValue v = out.add_meminfo();
        v.set_key(counter);
        v.set_value(kv.value);
        counters_.values++;
      }
      for (const KeyValue& kv : vmstat_values.values) {
        VmstatCounter counter;
        if (!VmstatCounterForKey(kv.key, &counter)) {
          UnknownKey(kv.key);
          continue;
        }
        if (!options_.vmstat.test(static_cast<size_t>(counter)))
          continue;
        rt::SysStats_VmstatValue v = out.add_vmstat();
        v.set_key(counter);
        v.set_value(kv.value);
        counters_.values++;
      }
      if (have_stat) {
        const uint64_t tick = options_.ns_per_tick;
        if (options_.cpu_times) {
          for (const CpuTimesTicks& cpu : stat_values.cpus) {
            rt::SysStats_CpuTimes c = out.add_cpu_stat();
            c.set_cpu_id(cpu.cpu);
            // The columns in /proc/stat's order; the first four are always
            // there.
            c.set_user_ns(TicksToNs(cpu.ticks[0], tick));
            c.set_user_nice_ns(TicksToNs(cpu.ticks[1], tick));
            c.set_system_mode_ns(TicksToNs(cpu.ticks[2], tick));
            c.set_idle_ns(TicksToNs(cpu.ticks[3], tick));
            if (cpu.fields > 4)
              c.set_io_wait_ns(TicksToNs(cpu.ticks[4], tick));
            if (cpu.fields > 5)
              c.set_irq_ns(TicksToNs(cpu.ticks[5], tick));
            if (cpu.fields > 6)
              c.set_softirq_ns(TicksToNs(cpu.ticks[6], tick));
            if (cpu.fields > 7)
              c.set_steal_ns(TicksToNs(cpu.ticks[7], tick));
            counters_.values++;
          }
        }
        if (options_.irq_counts && stat_values.irq_total) {
          out.set_num_irq_total(*stat_values.irq_total);
          for (const Interrupt& irq : stat_values.irqs) {
            rt::SysStats_InterruptCount c = out.add_num_irq();
            c.set_irq(irq.index);
            c.set_count(irq.count);
          }
          counters_.values++;
        }
        if (options_.softirq_counts && stat_values.softirq_total) {
          out.set_num_softirq_total(*stat_values.softirq_total);
          for (const Interrupt& irq : stat_values.softirqs) {
            rt::SysStats_InterruptCount c = out.add_num_softirq();
            c.set_irq(irq.index);
            c.set_count(irq.count);
          }
          counters_.values++;
        }
        if (options_.fork_count && stat_values.forks) {
          out.set_num_forks(*stat_values.forks);
          counters_.values++;
        }
        if (options_.context_switches && stat_values.context_switches) {
          out.set_ringtrace_num_context_switches(*stat_values.context_switches);
          counters_.values++;
        }
      }
      out.set_collection_end_timestamp(base::BootTimeNs());
      handle.Finish();
      counters_.packets++;
      // Published already; this asks the service to drain it now.
      writer_->Flush();
    }
    if (meminfo)
      meminfo_.Advance(now_ms);
    if (vmstat)
      vmstat_.Advance(now_ms);
    if (stat)
      stat_.Advance(now_ms);
    counters_.periods_missed =
        meminfo_.missed() + vmstat_.missed() + stat_.missed();
  }
  return std::min({meminfo_.next_ms(), vmstat_.next_ms(), stat_.next_ms()});
}

}  // namespace probes
}  // namespace ringtrace
