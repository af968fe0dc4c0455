/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/process_stats_source.h"

#include <errno.h>
#include <fcntl.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "src/base/checked_math.h"
#include "src/base/time.h"

namespace ringtrace {
namespace probes {
namespace {

namespace rt = perfetto::protos::rtzero;

// kthreadd: the parent of every kernel thread (and pid 2 itself).
constexpr int32_t kKthreaddPid = 2;

// Processes read per ProcessStats packet (and per ProcessTree packet of a
// poll's newcomers): the poll writes as it reads.
constexpr size_t kPollBatch = kMaxEntriesPerPacket;

uint64_t TicksToNs(uint64_t ticks, uint64_t ns_per_tick) {
  uint64_t ns = 0;
  if (!base::CheckedMul(ticks, ns_per_tick, &ns))
    return UINT64_MAX;  // not reachable in 584 years of uptime
  return ns;
}

}  // namespace

struct ProcessStatsSource::Process {
  int32_t pid = 0;
  ProcStatus status;
  std::optional<ProcPidStat> stat;
  std::optional<int64_t> oom_score_adj;
  std::vector<std::string> cmdline;

  uint64_t start_time_ticks() const {
    return stat ? stat->start_time_ticks : 0;
  }
  bool has_memory_counters() const {
    return status.vm_size_kb || status.vm_rss_kb || status.rss_anon_kb ||
           status.rss_file_kb || status.rss_shmem_kb || status.vm_swap_kb ||
           status.vm_locked_kb || status.vm_hwm_kb;
  }
};

// The ProcessTree packet being written: begun at the first entry, ended
// (with its collection_end_timestamp) after kMaxEntriesPerPacket entries
// or by Finish().
class ProcessStatsSource::TreeWriter {
 public:
  TreeWriter(shm_ring::TraceWriterV2* writer, ProcessStatsCounters* counters)
      : writer_(writer), counters_(counters) {}
  ~TreeWriter() { Finish(); }

  void AddProcess(const Process& p, const ProcessStatsOptions& options) {
    rt::ProcessTree_Process out = Tree().add_processes();
    out.set_pid(p.pid);
    if (p.status.ppid)
      out.set_ppid(*p.status.ppid);
    if (p.status.uid)
      out.set_uid(*p.status.uid);
    if (!p.cmdline.empty()) {
      for (const std::string& arg : p.cmdline)
        out.add_cmdline(arg);
    } else if (p.status.name) {
      // A kernel thread or a zombie: no command line, only its name.
      out.add_cmdline(*p.status.name);
      out.set_cmdline_is_comm(true);
      if (p.pid == kKthreaddPid || p.status.ppid == kKthreaddPid)
        out.set_is_kthread(true);
    }
    if (options.record_process_age && p.stat) {
      out.set_process_start_from_boot(
          TicksToNs(p.stat->start_time_ticks, options.ns_per_tick));
    }
    counters_->processes_described++;
    Entered();
  }

  void AddThread(int32_t tid, int32_t tgid, const std::string* name) {
    rt::ProcessTree_Thread out = Tree().add_threads();
    out.set_tid(tid);
    out.set_tgid(tgid);
    if (name)
      out.set_name(*name);
    counters_->threads_described++;
    Entered();
  }

  void Finish() {
    if (!open_)
      return;
    Tree().set_collection_end_timestamp(base::BootTimeNs());
    handle_.Finish();
    open_ = false;
    counters_->packets++;
  }

 private:
  rt::ProcessTree Tree() {
    if (!open_) {
      handle_ = writer_->NewTracePacket();
      rt::TracePacket packet(handle_);
      packet.set_timestamp(base::BootTimeNs());
      tree_ = packet.set_process_tree().message();
      entries_ = 0;
      open_ = true;
    }
    return rt::ProcessTree(tree_);
  }

  void Entered() {
    if (++entries_ >= kMaxEntriesPerPacket)
      Finish();
  }

  shm_ring::TraceWriterV2* const writer_;
  ProcessStatsCounters* const counters_;
  shm_ring::TraceWriterV2::TracePacketHandle handle_;
  encoding::Message* tree_ = nullptr;
  size_t entries_ = 0;
  bool open_ = false;
};

// The same for ProcessStats.
class ProcessStatsSource::StatsWriter {
 public:
  StatsWriter(shm_ring::TraceWriterV2* writer, ProcessStatsCounters* counters)
      : writer_(writer), counters_(counters) {}
  ~StatsWriter() { Finish(); }

  void Add(const Process& p, const ProcessStatsOptions& options) {
    rt::ProcessStats_Process out = Stats().add_processes();
    const ProcStatus& s = p.status;
    out.set_pid(p.pid);
    if (s.vm_size_kb)
      out.set_vm_size_kb(*s.vm_size_kb);
    if (s.vm_rss_kb)
      out.set_vm_rss_kb(*s.vm_rss_kb);
    if (s.rss_anon_kb)
      out.set_rss_anon_kb(*s.rss_anon_kb);
    if (s.rss_file_kb)
      out.set_rss_file_kb(*s.rss_file_kb);
    if (s.rss_shmem_kb)
      out.set_rss_shmem_kb(*s.rss_shmem_kb);
    if (s.vm_swap_kb)
      out.set_vm_swap_kb(*s.vm_swap_kb);
    if (s.vm_locked_kb)
      out.set_vm_locked_kb(*s.vm_locked_kb);
    if (s.vm_hwm_kb)
      out.set_vm_hwm_kb(*s.vm_hwm_kb);
    if (p.oom_score_adj)
      out.set_oom_score_adj(*p.oom_score_adj);
    if (options.record_process_runtime && p.stat) {
      out.set_runtime_user_mode(
          TicksToNs(p.stat->utime_ticks, options.ns_per_tick));
      out.set_runtime_kernel_mode(
          TicksToNs(p.stat->stime_ticks, options.ns_per_tick));
    }
    counters_->process_stats++;
    if (++entries_ >= kMaxEntriesPerPacket)
      Finish();
  }

  void Finish() {
    if (!open_)
      return;
    Stats().set_collection_end_timestamp(base::BootTimeNs());
    handle_.Finish();
    open_ = false;
    counters_->packets++;
  }

 private:
  rt::ProcessStats Stats() {
    if (!open_) {
      handle_ = writer_->NewTracePacket();
      rt::TracePacket packet(handle_);
      packet.set_timestamp(base::BootTimeNs());
      stats_ = packet.set_process_stats().message();
      entries_ = 0;
      open_ = true;
    }
    return rt::ProcessStats(stats_);
  }

  shm_ring::TraceWriterV2* const writer_;
  ProcessStatsCounters* const counters_;
  shm_ring::TraceWriterV2::TracePacketHandle handle_;
  encoding::Message* stats_ = nullptr;
  size_t entries_ = 0;
  bool open_ = false;
};

ProcessStatsSource::ProcessStatsSource(const ProcessStatsOptions& options,
                                       shm_ring::TraceWriterV2* writer,
                                       std::string proc_root)
    : options_(options), writer_(writer), proc_(std::move(proc_root)) {}

ProcessStatsSource::~ProcessStatsSource() = default;

bool ProcessStatsSource::NeedsPidStat() const {
  // The start time tells a reused pid from the process described before.
  return options_.record_process_runtime ||
         options_.scan_all_processes_on_start;
}

bool ProcessStatsSource::ReadProcess(int dir_fd,
                                     int32_t pid,
                                     bool for_tree,
                                     Process* p) {
  ScanCounters* scan = &counters_.scan;
  *p = Process();
  p->pid = pid;
  const ReadStatus status =
      ProcFs::Read(dir_fd, "status", kMaxStatusBytes, &buf_, scan);
  if (status != ReadStatus::kOk && status != ReadStatus::kTruncated)
    return false;
  p->status = ParseProcStatus(buf_);
  if (p->status.malformed_lines)
    scan->malformed++;
  if (!p->status.pid || *p->status.pid != pid) {
    // Not this process's status (or none): nothing of it can be trusted.
    scan->malformed++;
    return false;
  }
  if (NeedsPidStat() || (for_tree && options_.record_process_age)) {
    const ReadStatus r =
        ProcFs::Read(dir_fd, "stat", kMaxPidStatBytes, &buf_, scan);
    ProcPidStat stat;
    if (r == ReadStatus::kOk && ParseProcPidStat(buf_, &stat) &&
        stat.pid == pid) {
      p->stat = stat;
    } else if (r == ReadStatus::kOk || r == ReadStatus::kTruncated) {
      scan->malformed++;
    }
  }
  if (for_tree) {
    const ReadStatus r =
        ProcFs::Read(dir_fd, "cmdline", kMaxCmdlineBytes, &buf_, scan);
    if (r == ReadStatus::kOk || r == ReadStatus::kTruncated) {
      size_t args_cut = 0;
      p->cmdline = SplitCmdline(buf_, &args_cut);
      if (args_cut)
        scan->over_limit++;
    }
  } else {
    int64_t adj = 0;
    const ReadStatus r =
        ProcFs::Read(dir_fd, "oom_score_adj", kMaxSmallFileBytes, &buf_, scan);
    if (r == ReadStatus::kOk && ParseOomScoreAdj(buf_, &adj))
      p->oom_score_adj = adj;
    else if (r == ReadStatus::kOk || r == ReadStatus::kTruncated)
      scan->malformed++;
  }
  return true;
}

void ProcessStatsSource::DescribeThreads(int dir_fd,
                                         int32_t pid,
                                         TreeWriter* tree) {
  ScanCounters* scan = &counters_.scan;
  base::ScopedFd task(
      openat(dir_fd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!task.valid()) {
    if (errno == ENOENT || errno == ESRCH)
      scan->vanished++;
    else
      scan->unreadable++;
    return;
  }
  if (!ProcFs::ListPidsIn(task.get(), &tids_, scan, kMaxThreadsPerProcess))
    return;
  for (int32_t tid : tids_) {
    if (options_.on_demand)
      RememberThread(tid);
    if (options_.skip_main_thread_message && tid == pid)
      continue;
    if (!options_.record_thread_names) {
      tree->AddThread(tid, pid, nullptr);
      continue;
    }
    const std::string comm = std::to_string(tid) + "/comm";
    const ReadStatus r =
        ProcFs::Read(task.get(), comm.c_str(), kMaxSmallFileBytes, &buf_, scan);
    if (r != ReadStatus::kOk && r != ReadStatus::kTruncated)
      continue;  // the thread ended: nothing to describe
    const std::string name = ParseComm(buf_);
    tree->AddThread(tid, pid, &name);
  }
}

bool ProcessStatsSource::ScanAll(const std::atomic<bool>& stop) {
  described_.clear();
  if (!proc_.ListPids(&pids_, &counters_.scan))
    return true;  // counted; nothing to describe
  TreeWriter tree(writer_, &counters_);
  Process p;
  for (int32_t pid : pids_) {
    // relaxed: probe_source.h.
    if (stop.load(std::memory_order_relaxed))
      return false;
    base::ScopedFd dir = proc_.OpenProcess(pid, &counters_.scan);
    if (!dir.valid() || !ReadProcess(dir.get(), pid, /*for_tree=*/true, &p))
      continue;
    tree.AddProcess(p, options_);
    DescribeThreads(dir.get(), pid, &tree);
    described_[pid] = p.start_time_ticks();
  }
  return true;
}

bool ProcessStatsSource::Poll(const std::atomic<bool>& stop) {
  counters_.polls++;
  if (!proc_.ListPids(&pids_, &counters_.scan))
    return true;
  const std::vector<int32_t>& pids = pids_;
  std::map<int32_t, uint64_t> described;
  std::vector<Process> batch;
  batch.reserve(kPollBatch);
  size_t next = 0;
  while (next < pids.size()) {
    batch.clear();
    // Read a batch, describe its newcomers, then write its counters.
    {
      TreeWriter tree(writer_, &counters_);
      for (; next < pids.size() && batch.size() < kPollBatch; ++next) {
        // relaxed: probe_source.h.
        if (stop.load(std::memory_order_relaxed))
          return false;
        const int32_t pid = pids[next];
        base::ScopedFd dir = proc_.OpenProcess(pid, &counters_.scan);
        Process p;
        if (!dir.valid() ||
            !ReadProcess(dir.get(), pid, /*for_tree=*/false, &p)) {
          continue;
        }
        if (options_.scan_all_processes_on_start) {
          auto it = described_.find(pid);
          if (it == described_.end() || it->second != p.start_time_ticks()) {
            // A newcomer (or a new process under a reused pid): its
            // command line too. Read again: what it says now.
            Process full;
            if (ReadProcess(dir.get(), pid, /*for_tree=*/true, &full)) {
              tree.AddProcess(full, options_);
              DescribeThreads(dir.get(), pid, &tree);
            }
          }
          described[pid] = p.start_time_ticks();
        }
        if (p.has_memory_counters())
          batch.push_back(std::move(p));
      }
    }
    StatsWriter stats(writer_, &counters_);
    for (const Process& p : batch)
      stats.Add(p, options_);
  }
  if (options_.scan_all_processes_on_start)
    described_.swap(described);
  return true;
}

uint64_t ProcessStatsSource::Run(uint64_t now_ms,
                                 const std::atomic<bool>& stop) {
  bool complete = true;
  if (!started_) {
    started_ = true;
    uint32_t period = options_.proc_stats_poll_ms;
    if (period != 0 && period < kMinProcStatsPollMs)
      period = kMinProcStatsPollMs;
    poll_ = Schedule(period, now_ms);
    if (options_.scan_all_processes_on_start)
      complete = ScanAll(stop);
  }
  if (complete && poll_.Due(now_ms)) {
    complete = Poll(stop);
    poll_.Advance(now_ms);
    counters_.polls_missed = poll_.missed();
  }
  if (complete && started_ && !pending_.empty())
    complete = DescribePending(now_ms, stop);
  if (!complete)
    counters_.runs_cut_short++;
  // Every packet of the run is published already; this asks the service
  // to drain them now rather than at its next scrape.
  writer_->Flush();
  return NextDue();
}

uint64_t ProcessStatsSource::NextDue() const {
  if (pending_.empty())
    return poll_.next_ms();
  return std::min(poll_.next_ms(), window_start_ms_ + kOnDemandWindowMs);
}

void ProcessStatsSource::Flush(const std::atomic<bool>& stop) {
  // Before the first run the start's scan describes everything.
  if (started_ && !pending_.empty())
    DescribePending(base::MonotonicMs(), stop);
  writer_->Flush();
}

bool ProcessStatsSource::Queue(int32_t tid) {
  if (pending_.count(tid))
    return true;
  if (pending_.size() >= kMaxPendingTids) {
    counters_.on_demand_dropped++;
    return false;
  }
  pending_.insert(tid);
  return true;
}

void ProcessStatsSource::AddPending(const std::vector<int32_t>& tids,
                                    uint64_t dropped) {
  if (!options_.on_demand)
    return;
  counters_.on_demand_dropped += dropped;
  for (int32_t tid : tids) {
    if (tid > 0)
      Queue(tid);
  }
}

void ProcessStatsSource::AddRenamed(const std::vector<int32_t>& tids) {
  if (!options_.on_demand)
    return;
  for (int32_t tid : tids) {
    if (tid > 0 && Queue(tid))
      renamed_.insert(tid);
  }
}

bool ProcessStatsSource::DescribePending(uint64_t now_ms,
                                         const std::atomic<bool>& stop) {
  if (window_lookups_ == 0 || now_ms >= window_start_ms_ + kOnDemandWindowMs ||
      now_ms < window_start_ms_) {
    window_start_ms_ = now_ms;
    window_lookups_ = 0;
  }
  TreeWriter tree(writer_, &counters_);
  while (!pending_.empty()) {
    // relaxed: probe_source.h.
    if (stop.load(std::memory_order_relaxed))
      return false;
    if (window_lookups_ >= kMaxOnDemandTidsPerSecond) {
      counters_.on_demand_deferred += pending_.size();
      break;  // the rest in the next window (NextDue())
    }
    const int32_t tid = *pending_.begin();
    pending_.erase(pending_.begin());
    const bool renamed = renamed_.erase(tid) != 0;
    window_lookups_++;
    DescribeTid(tid, renamed, &tree);
  }
  return true;
}

void ProcessStatsSource::RememberThread(int32_t tid) {
  if (threads_known_.size() >= kMaxKnownThreads)
    threads_known_.clear();
  threads_known_.insert(tid);
}

void ProcessStatsSource::DescribeTid(int32_t tid,
                                     bool renamed,
                                     TreeWriter* tree) {
  ScanCounters* scan = &counters_.scan;
  counters_.on_demand_lookups++;
  if (renamed)
    counters_.on_demand_renamed++;
  else if (threads_known_.count(tid))
    return;
  // /proc/TID is there for every thread, listed or not: its status names
  // its process (Tgid) and, as Name, the thread's own name.
  base::ScopedFd tdir = proc_.OpenProcess(tid, scan);
  if (!tdir.valid())
    return;  // it ended (counted)
  const ReadStatus r =
      ProcFs::Read(tdir.get(), "status", kMaxStatusBytes, &buf_, scan);
  if (r != ReadStatus::kOk && r != ReadStatus::kTruncated)
    return;
  const ProcStatus thread = ParseProcStatus(buf_);
  if (!thread.pid || *thread.pid != tid || !thread.tgid || *thread.tgid <= 0) {
    scan->malformed++;
    return;
  }
  const int32_t tgid = *thread.tgid;
  base::ScopedFd pdir;
  if (tgid != tid) {
    pdir = proc_.OpenProcess(tgid, scan);
    if (!pdir.valid())
      return;
  }
  const int dir = tgid != tid ? pdir.get() : tdir.get();
  Process p;
  if (!ReadProcess(dir, tgid, /*for_tree=*/true, &p))
    return;
  auto it = described_.find(tgid);
  if (it != described_.end() && it->second == p.start_time_ticks()) {
    const std::string* name =
        options_.record_thread_names && thread.name ? &*thread.name : nullptr;
    if (tid != tgid) {
      // A thread of a process described already: the thread only (once,
      // and again when it is renamed).
      RememberThread(tid);
      tree->AddThread(tid, tgid, name);
      counters_.on_demand_threads++;
    } else if (renamed) {
      // The process renamed (an exec): what it is now, and its main
      // thread's new name. Its other threads keep their entries (an exec
      // ends them).
      tree->AddProcess(p, options_);
      if (!options_.skip_main_thread_message)
        tree->AddThread(tid, tgid, name);
      counters_.on_demand_redescribed++;
    }
    return;
  }
  tree->AddProcess(p, options_);
  DescribeThreads(dir, tgid, tree);
  described_[tgid] = p.start_time_ticks();
  counters_.on_demand_processes++;
}

}  // namespace probes
}  // namespace ringtrace
