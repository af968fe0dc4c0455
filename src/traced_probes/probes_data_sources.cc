/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/probes_data_sources.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include <memory>
#include <utility>

#include "protos/perfetto/config/trace_config.pb.h"
#include "ringtrace/logging.h"

namespace ringtrace {
namespace probes {
namespace {

using perfetto::protos::FtraceConfig;
using perfetto::protos::ProcessStatsConfig;
using perfetto::protos::SysStatsConfig;

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  return buf;
}

void NotImplemented(const char* field, std::vector<std::string>* notes) {
  notes->push_back(std::string(field) + ": not implemented, ignored");
}

uint32_t RaisedPeriod(const char* field,
                      uint32_t period_ms,
                      uint32_t min_ms,
                      std::vector<std::string>* notes) {
  if (period_ms == 0 || period_ms >= min_ms)
    return period_ms;
  notes->push_back(Format("%s: %u ms raised to the minimum, %u ms", field,
                          period_ms, min_ms));
  return min_ms;
}

std::string ScanSummary(const ScanCounters& s) {
  return Format("%" PRIu64 " files read, %" PRIu64 " vanished, %" PRIu64
                " unreadable, %" PRIu64 " malformed, %" PRIu64
                " truncated, %" PRIu64 " over a bound",
                s.files_read, s.vanished, s.unreadable, s.malformed,
                s.truncated, s.over_limit);
}

}  // namespace

ProcessStatsOptions ProcessStatsOptionsFromConfig(
    const ProcessStatsConfig& config,
    std::vector<std::string>* notes) {
  ProcessStatsOptions o;
  o.scan_all_processes_on_start = config.scan_all_processes_on_start();
  o.record_thread_names = config.record_thread_names();
  o.proc_stats_poll_ms =
      RaisedPeriod("proc_stats_poll_ms", config.proc_stats_poll_ms(),
                   kMinProcStatsPollMs, notes);
  o.record_process_age = config.record_process_age();
  o.record_process_runtime = config.record_process_runtime();
  o.skip_main_thread_message = config.skip_main_thread_message();
  // On-demand descriptions go with the scan, as in Perfetto, unless a
  // quirk turns them off.
  o.on_demand = o.scan_all_processes_on_start;
  for (int quirk : config.quirks()) {
    if (quirk == ProcessStatsConfig::DISABLE_ON_DEMAND)
      o.on_demand = false;
    else
      notes->push_back(Format("quirks: %d not implemented, ignored", quirk));
  }
  if (config.has_proc_stats_cache_ttl_ms()) {
    notes->push_back(
        "proc_stats_cache_ttl_ms: not implemented, ignored (every poll "
        "writes every process's counters)");
  }
  if (config.scan_smaps_rollup())
    NotImplemented("scan_smaps_rollup", notes);
  if (config.record_process_dmabuf_rss())
    NotImplemented("record_process_dmabuf_rss", notes);
  if (config.resolve_process_fds())
    NotImplemented("resolve_process_fds", notes);
  if (o.record_thread_names && !o.scan_all_processes_on_start) {
    notes->push_back(
        "record_thread_names: without scan_all_processes_on_start no "
        "threads are described");
  }
  if (!o.scan_all_processes_on_start && o.proc_stats_poll_ms == 0) {
    notes->push_back(
        "neither scan_all_processes_on_start nor proc_stats_poll_ms: this "
        "instance records nothing");
  }
  return o;
}

SysStatsOptions SysStatsOptionsFromConfig(const SysStatsConfig& config,
                                          std::vector<std::string>* notes) {
  SysStatsOptions o;
  o.meminfo_period_ms =
      RaisedPeriod("meminfo_period_ms", config.meminfo_period_ms(),
                   kMinSysStatsPeriodMs, notes);
  o.vmstat_period_ms =
      RaisedPeriod("vmstat_period_ms", config.vmstat_period_ms(),
                   kMinSysStatsPeriodMs, notes);
  o.stat_period_ms = RaisedPeriod("stat_period_ms", config.stat_period_ms(),
                                  kMinSysStatsPeriodMs, notes);
  // An empty list means every counter; UNSPECIFIED (0) names none.
  for (int c : config.meminfo_counters()) {
    if (c > 0 && static_cast<uint32_t>(c) < kMeminfoCounterLimit)
      o.meminfo.set(static_cast<size_t>(c));
    else
      notes->push_back(Format("meminfo_counters: %d names no counter", c));
  }
  if (config.meminfo_counters_size() == 0)
    o.meminfo.set();
  for (int c : config.vmstat_counters()) {
    if (c > 0 && static_cast<uint32_t>(c) < kVmstatCounterLimit)
      o.vmstat.set(static_cast<size_t>(c));
    else
      notes->push_back(Format("vmstat_counters: %d names no counter", c));
  }
  if (config.vmstat_counters_size() == 0)
    o.vmstat.set();
  const bool all = config.stat_counters_size() == 0;
  o.cpu_times = o.irq_counts = o.softirq_counts = o.fork_count =
      o.context_switches = all;
  for (int c : config.stat_counters()) {
    switch (c) {
      case SysStatsConfig::STAT_CPU_TIMES:
        o.cpu_times = true;
        break;
      case SysStatsConfig::STAT_IRQ_COUNTS:
        o.irq_counts = true;
        break;
      case SysStatsConfig::STAT_SOFTIRQ_COUNTS:
        o.softirq_counts = true;
        break;
      case SysStatsConfig::STAT_FORK_COUNT:
        o.fork_count = true;
        break;
      case SysStatsConfig::STAT_RINGTRACE_CONTEXT_SWITCHES:
        o.context_switches = true;
        break;
      default:
        notes->push_back(Format("stat_counters: %d names no counter", c));
        break;
    }
  }
  if (config.cpufreq_period_ms())
    NotImplemented("cpufreq_period_ms", notes);
  if (config.buddyinfo_period_ms())
    NotImplemented("buddyinfo_period_ms", notes);
  if (config.diskstat_period_ms())
    NotImplemented("diskstat_period_ms", notes);
  if (config.cpuidle_period_ms())
    NotImplemented("cpuidle_period_ms", notes);
  if (config.gpufreq_period_ms())
    NotImplemented("gpufreq_period_ms", notes);
  if (config.slab_period_ms())
    NotImplemented("slab_period_ms", notes);
  if (!o.meminfo_period_ms && !o.vmstat_period_ms && !o.stat_period_ms) {
    notes->push_back(
        "no meminfo_period_ms, vmstat_period_ms or stat_period_ms: this "
        "instance records nothing");
  }
  return o;
}

FtraceOptions FtraceOptionsFromConfig(const FtraceConfig& config,
                                      std::vector<std::string>* notes) {
  FtraceOptions o;
  o.events.assign(config.ftrace_events().begin(), config.ftrace_events().end());
  if (config.has_buffer_size_kb()) {
    o.buffer_size_kb = config.buffer_size_kb();
    if (o.buffer_size_kb == 0) {
      o.buffer_size_kb = kDefaultFtraceBufferSizeKb;
    } else if (o.buffer_size_kb > kMaxFtraceBufferSizeKb) {
      notes->push_back(
          Format("buffer_size_kb: %u KiB lowered to the "
                 "maximum, %u KiB per CPU",
                 o.buffer_size_kb, kMaxFtraceBufferSizeKb));
      o.buffer_size_kb = kMaxFtraceBufferSizeKb;
    }
  }
  if (config.drain_period_ms()) {
    o.drain_period_ms =
        RaisedPeriod("drain_period_ms", config.drain_period_ms(),
                     kMinFtraceDrainPeriodMs, notes);
    if (o.drain_period_ms > kMaxFtraceDrainPeriodMs) {
      notes->push_back(
          Format("drain_period_ms: %u ms lowered to the "
                 "maximum, %u ms",
                 o.drain_period_ms, kMaxFtraceDrainPeriodMs));
      o.drain_period_ms = kMaxFtraceDrainPeriodMs;
    }
  }
  o.compact_sched = config.compact_sched().enabled();
  if (o.events.empty()) {
    notes->push_back(
        "no ftrace_events: this instance records only the kernel's "
        "counters (FtraceStats)");
  }
  return o;
}

uint64_t NsPerClockTick() {
  const long hz = sysconf(_SC_CLK_TCK);
  // Linux's USER_HZ is 100 everywhere; sysconf cannot fail for it.
  return hz > 0 ? 1000000000u / static_cast<uint64_t>(hz) : 10000000u;
}

// One instance on the loop: its writer and its source, and what it did.
class ProbesDataSource::Instance : public ProbeSource {
 public:
  Instance(std::string label,
           std::unique_ptr<shm_ring::TraceWriterV2> writer,
           const ProcessStatsOptions& options,
           const std::string& proc_root,
           SeenPids* seen)
      : label_(std::move(label)), writer_(std::move(writer)) {
    process_ =
        std::make_unique<ProcessStatsSource>(options, writer_.get(), proc_root);
    if (seen && options.on_demand) {
      seen_ = seen;
      subscriber_ = seen->Subscribe(nullptr);
    }
  }
  Instance(std::string label,
           std::unique_ptr<shm_ring::TraceWriterV2> writer,
           const SysStatsOptions& options,
           const std::string& proc_root)
      : label_(std::move(label)), writer_(std::move(writer)) {
    sys_ = std::make_unique<SysStatsSource>(options, writer_.get(), proc_root);
  }
  Instance(std::string label,
           std::unique_ptr<shm_ring::TraceWriterV2> writer,
           std::unique_ptr<FtraceSource> ftrace)
      : label_(std::move(label)),
        writer_(std::move(writer)),
        ftrace_(std::move(ftrace)) {}
  // The sources before the writer they write through.
  ~Instance() override {
    if (seen_)
      seen_->Unsubscribe(subscriber_);
    process_.reset();
    sys_.reset();
    ftrace_.reset();
  }

  // On demand: the loop runs this instance when SeenPids gives it a tid.
  void WakeOnSeenPids(ProbesLoop* loop, ProbesLoop::Handle handle) {
    if (seen_)
      seen_->SetWaker(subscriber_, [loop, handle] { loop->Wake(handle); });
  }

  uint64_t Run(uint64_t now_ms, const std::atomic<bool>& stop) override {
    if (ftrace_)
      return ftrace_->Run(now_ms, stop);
    if (process_) {
      TakeSeenPids();
      return process_->Run(now_ms, stop);
    }
    return sys_->Run(now_ms, stop);
  }

  void Flush(const std::atomic<bool>& stop) override {
    if (ftrace_) {
      ftrace_->Flush(stop);
    } else if (process_) {
      TakeSeenPids();
      process_->Flush(stop);
    } else {
      writer_->Flush();  // nothing pending: every Run() ended with one
    }
  }

  // After the last Run(): what an instance writes when it stops.
  void Finish() {
    if (ftrace_)
      ftrace_->Finish();
  }

  std::string Summary() const {
    const shm_ring::TraceWriterV2Stats w = writer_->stats();
    std::string s = label_ + " stopped: ";
    if (ftrace_) {
      s += FtraceSummary();
    } else if (process_) {
      const ProcessStatsCounters& c = process_->counters();
      s += Format("%" PRIu64 " packets: %" PRIu64 " processes and %" PRIu64
                  " threads described, %" PRIu64 " process counters in %" PRIu64
                  " polls (%" PRIu64 " periods missed, %" PRIu64
                  " runs cut short); ",
                  c.packets, c.processes_described, c.threads_described,
                  c.process_stats, c.polls, c.polls_missed, c.runs_cut_short);
      s += Format(
          "on demand: %" PRIu64 " tids looked up, %" PRIu64
          " processes and %" PRIu64 " threads described, %" PRIu64
          " renamed tids and %" PRIu64 " processes described again, %" PRIu64
          " deferred by the rate, %" PRIu64 " dropped; ",
          c.on_demand_lookups, c.on_demand_processes, c.on_demand_threads,
          c.on_demand_renamed, c.on_demand_redescribed, c.on_demand_deferred,
          c.on_demand_dropped);
      s += ScanSummary(c.scan);
    } else {
      const SysStatsCounters& c = sys_->counters();
      s += Format("%" PRIu64 " packets, %" PRIu64 " values from %" PRIu64
                  " meminfo, %" PRIu64 " vmstat and %" PRIu64
                  " stat reads (%" PRIu64 " periods missed); %" PRIu64
                  " keys that no counter names",
                  c.packets, c.values, c.meminfo_reads, c.vmstat_reads,
                  c.stat_reads, c.periods_missed, c.unknown_keys);
      for (size_t i = 0; i < c.unknown_key_names.size(); i++)
        s += (i ? "," : " (") + c.unknown_key_names[i];
      if (!c.unknown_key_names.empty())
        s += c.unknown_key_names.size() < kMaxUnknownKeyNames ? ")" : ",...)";
      s += "; " + ScanSummary(c.scan);
    }
    s += Format("; writer: %" PRIu64 " packets committed, %" PRIu64 " dropped",
                w.packets_committed, w.packets_dropped);
    return s;
  }

 private:
  std::string FtraceSummary() const {
    const FtraceCounters& c = ftrace_->counters();
    const ftrace::TranslatorStats& t = ftrace_->translator_stats();
    return Format(
        "tracefs instance %s, %zu events enabled; %" PRIu64
        " bundles from %" PRIu64 " pages in %" PRIu64 " drains (%" PRIu64
        " at a flush, %" PRIu64 " periods missed): %" PRIu64 " events, %" PRIu64
        " compact switches, %" PRIu64 " compact wakings; lost: %" PRIu64
        " bundles after a loss, kernel overrun %" PRIu64
        ", commit overrun %" PRIu64 ", dropped %" PRIu64 "; %" PRIu64
        " corrupt pages, %" PRIu64 " unknown events, %" PRIu64
        " short records, %" PRIu64 " unreadable fields, %" PRIu64
        " read errors",
        ftrace_->instance_name().c_str(), ftrace_->enabled_events().size(),
        c.bundles, t.pages, c.drains, c.flush_drains, c.drains_missed, t.events,
        t.compact_switches, t.compact_wakings, c.bundles_lost, c.overrun,
        c.commit_overrun, c.dropped_events, t.corrupt_pages, t.unknown_events,
        t.short_records, t.unreadable_fields, c.read_errors);
  }

  void TakeSeenPids() {
    if (!seen_)
      return;
    uint64_t dropped = 0;
    seen_->Take(subscriber_, &tids_, &renamed_, &dropped);
    process_->AddPending(tids_, dropped);
    process_->AddRenamed(renamed_);
  }

  const std::string label_;
  SeenPids* seen_ = nullptr;  // on demand only
  SeenPids::Subscriber subscriber_ = 0;
  std::vector<int32_t> tids_;
  std::vector<int32_t> renamed_;
  // Declared first, destroyed last (after the sources, see ~Instance).
  std::unique_ptr<shm_ring::TraceWriterV2> writer_;
  std::unique_ptr<ProcessStatsSource> process_;
  std::unique_ptr<SysStatsSource> sys_;
  std::unique_ptr<FtraceSource> ftrace_;
};

ProbesDataSource::ProbesDataSource(Kind kind,
                                   ProbesLoop* loop,
                                   std::string proc_root,
                                   FtraceEnvironment ftrace,
                                   SeenPids* seen_pids)
    : kind_(kind),
      loop_(loop),
      proc_root_(std::move(proc_root)),
      ftrace_(std::move(ftrace)),
      seen_pids_(seen_pids),
      ns_per_tick_(NsPerClockTick()) {}

ProbesDataSource::~ProbesDataSource() {
  std::map<uint32_t, ProbesLoop::Handle> left;
  {
    base::MutexLock lock(&mutex_);
    left.swap(instances_);
  }
  for (const auto& [id, handle] : left)
    StopInstance(handle);
}

void ProbesDataSource::StopInstance(ProbesLoop::Handle handle) {
  std::unique_ptr<ProbeSource> source = loop_->Remove(handle);
  if (!source)
    return;
  // Every source this data source adds to the loop is an Instance.
  auto* instance = static_cast<Instance*>(source.get());
  instance->Finish();
  RT_LOG("%s", instance->Summary().c_str());
  // Destroying it flushes and releases the writer.
}

const char* ProbesDataSource::name() const {
  switch (kind_) {
    case Kind::kFtrace:
      return kFtraceDataSource;
    case Kind::kProcessStats:
      return kProcessStatsDataSource;
    case Kind::kSysStats:
      return kSysStatsDataSource;
  }
  return kSysStatsDataSource;
}

void ProbesDataSource::OnStart(const DataSourceInstanceConfig& config) {
  const std::string label =
      std::string(name()) + " instance " + std::to_string(config.instance_id);
  auto fail = [&](const std::string& why) {
    RT_ELOG("%s: not started: %s", label.c_str(), why.c_str());
    base::MutexLock lock(&mutex_);
    start_failures_++;
  };
  bool running = false;
  {
    base::MutexLock lock(&mutex_);
    running = instances_.count(config.instance_id) != 0;
  }
  if (running) {
    fail("an instance of this id is running already");
    return;
  }
  perfetto::protos::DataSourceConfig ds;
  if (!ds.ParseFromString(config.config)) {
    fail("its DataSourceConfig does not parse");
    return;
  }
  if (!config.producer) {
    fail("no producer");
    return;
  }
  base::Status status;
  std::unique_ptr<shm_ring::TraceWriterV2> writer =
      config.producer->NewTraceWriter(config.target_buffer, &status);
  if (!writer) {
    fail(status.message());
    return;
  }
  std::vector<std::string> notes;
  std::unique_ptr<Instance> instance;
  if (kind_ == Kind::kFtrace) {
    const FtraceOptions options =
        FtraceOptionsFromConfig(ds.ftrace_config(), &notes);
    std::string root = ftrace_.tracefs_root;
    base::Status s;
    if (root.empty())
      s = ftrace::FindOrMountTracefs(&root);
    std::unique_ptr<FtraceSource> source;
    if (s.ok()) {
      s = FtraceSource::Create(options, writer.get(), root,
                               ftrace_.instance_prefix, &source, &notes);
    }
    for (const std::string& note : notes)
      RT_LOG("%s: config: %s", label.c_str(), note.c_str());
    if (!s.ok()) {
      fail(s.message());
      return;
    }
    notes.clear();
    if (seen_pids_)
      source->SetSeenPids(seen_pids_);
    instance =
        std::make_unique<Instance>(label, std::move(writer), std::move(source));
  } else if (kind_ == Kind::kProcessStats) {
    ProcessStatsOptions options =
        ProcessStatsOptionsFromConfig(ds.process_stats_config(), &notes);
    options.ns_per_tick = ns_per_tick_;
    instance = std::make_unique<Instance>(label, std::move(writer), options,
                                          proc_root_, seen_pids_);
  } else {
    SysStatsOptions options =
        SysStatsOptionsFromConfig(ds.sys_stats_config(), &notes);
    options.ns_per_tick = ns_per_tick_;
    instance = std::make_unique<Instance>(label, std::move(writer), options,
                                          proc_root_);
  }
  RT_LOG("%s: started (buffer %u)", label.c_str(),
         static_cast<unsigned>(config.target_buffer));
  for (const std::string& note : notes)
    RT_LOG("%s: config: %s", label.c_str(), note.c_str());
  Instance* added = instance.get();
  const ProbesLoop::Handle handle = loop_->Add(std::move(instance));
  // Until it is removed (by this thread) the loop owns it.
  added->WakeOnSeenPids(loop_, handle);
  base::MutexLock lock(&mutex_);
  instances_[config.instance_id] = handle;
}

void ProbesDataSource::OnStop(uint32_t instance_id) {
  ProbesLoop::Handle handle = 0;
  {
    base::MutexLock lock(&mutex_);
    auto it = instances_.find(instance_id);
    if (it == instances_.end())
      return;  // its start failed
    handle = it->second;
    instances_.erase(it);
  }
  StopInstance(handle);
}

void ProbesDataSource::OnFlush(uint32_t) {
  // The service names no instance: every running one is flushed (the
  // instances of other sessions too, which only drains them early).
  std::vector<ProbesLoop::Handle> handles;
  {
    base::MutexLock lock(&mutex_);
    for (const auto& [id, handle] : instances_)
      handles.push_back(handle);
  }
  for (ProbesLoop::Handle handle : handles)
    loop_->Flush(handle);
}

size_t ProbesDataSource::running_instances() const {
  base::MutexLock lock(&mutex_);
  return instances_.size();
}

uint64_t ProbesDataSource::start_failures() const {
  base::MutexLock lock(&mutex_);
  return start_failures_;
}

}  // namespace probes
}  // namespace ringtrace
