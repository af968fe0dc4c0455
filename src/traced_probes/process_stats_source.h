/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The linux.process_stats data source's work for one instance
// (docs/probes.md):
//   - at its first run, with scan_all_processes_on_start, ProcessTree
//     packets describing every process of /proc (pid, ppid, uid, cmdline,
//     and its threads: tid, and with record_thread_names their names);
//   - with proc_stats_poll_ms, at its first run and then every period,
//     ProcessStats packets with the memory counters of every process that
//     has them (/proc/PID/status; kernel threads have none) and its
//     oom_score_adj. With scan_all_processes_on_start, a poll first
//     describes (ProcessTree) the processes it meets that the instance has
//     not described yet, so the trace names every process it has counters
//     of; a pid reused by a new process (another start time in
//     /proc/PID/stat) is described again.
//   - on demand (with scan_all_processes_on_start, unless the quirk
//     DISABLE_ON_DEMAND is set): the tids linux.ftrace saw (AddPending(),
//     from SeenPids) that name a process this instance has not described
//     are looked up in /proc/TID (its Tgid) and their process described
//     once, with its threads; a new thread of a described process gets its
//     thread entry. A tid given to AddRenamed() (a task/task_rename
//     event) is looked up again even if it was described: the main
//     thread of a described process gets its process entry again (an
//     exec changes its command line, and it may have been described
//     between its fork and its exec), any thread its thread entry again
//     (with record_thread_names, its new name). At most
//     kMaxOnDemandTidsPerSecond tids are looked up
//     per second (the rest wait for the next second, counted), and at
//     most kMaxPendingTids wait (more are dropped, counted): a fork bomb
//     cannot make the producer spin.
// Every packet has the BOOTTIME timestamp of the start of its read and its
// collection_end_timestamp. A packet holds at most kMaxEntriesPerPacket
// processes and threads (more make more packets).
//
// Thread model: a ProbeSource (probe_source.h).

#ifndef SRC_TRACED_PROBES_PROCESS_STATS_SOURCE_H_
#define SRC_TRACED_PROBES_PROCESS_STATS_SOURCE_H_

#include <stddef.h>
#include <stdint.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ringtrace/trace_writer_v2.h"
#include "src/traced_probes/probe_source.h"
#include "src/traced_probes/proc_fs.h"
#include "src/traced_probes/proc_parsers.h"
#include "src/traced_probes/seen_pids.h"

namespace ringtrace {
namespace probes {

// Read bounds per file.
constexpr size_t kMaxStatusBytes = 16 * 1024;
constexpr size_t kMaxCmdlineBytes = 8 * 1024;
constexpr size_t kMaxPidStatBytes = 4 * 1024;
constexpr size_t kMaxSmallFileBytes = 256;  // oom_score_adj, comm
// Processes and threads per packet.
constexpr size_t kMaxEntriesPerPacket = 256;
// On-demand lookups per second, and the window they are counted in.
constexpr uint32_t kMaxOnDemandTidsPerSecond = 128;
constexpr uint64_t kOnDemandWindowMs = 1000;
constexpr size_t kMaxKnownThreads = 1 << 16;
// The shortest poll period honoured (a smaller one is raised to it).
constexpr uint32_t kMinProcStatsPollMs = 100;

struct ProcessStatsOptions {
  bool scan_all_processes_on_start = false;
  bool record_thread_names = false;
  uint32_t proc_stats_poll_ms = 0;  // 0: no ProcessStats
  bool record_process_age = false;
  bool record_process_runtime = false;
  bool skip_main_thread_message = false;
  // Describe the processes of tids given to AddPending() (see above).
  bool on_demand = false;
  // Clock ticks (/proc/PID/stat) to ns: 1e9 / sysconf(_SC_CLK_TCK).
  uint64_t ns_per_tick = 10000000;
};

struct ProcessStatsCounters {
  uint64_t packets = 0;
  uint64_t processes_described = 0;  // ProcessTree.processes entries
  uint64_t threads_described = 0;    // ProcessTree.threads entries
  uint64_t process_stats = 0;        // ProcessStats.processes entries
  uint64_t polls = 0;
  uint64_t polls_missed = 0;  // periods skipped because a run was late
  // Runs that ended early because the instance was stopping.
  uint64_t runs_cut_short = 0;
  // On demand: tids looked up, processes and (new) threads described, tids
  // that had to wait for the next second (once per wait), tids dropped
  // because kMaxPendingTids were waiting.
  uint64_t on_demand_lookups = 0;
  uint64_t on_demand_processes = 0;
  uint64_t on_demand_threads = 0;
  // Renamed tids looked up again (AddRenamed()), and the processes of
  // them described again.
  uint64_t on_demand_renamed = 0;
  uint64_t on_demand_redescribed = 0;
  uint64_t on_demand_deferred = 0;
  uint64_t on_demand_dropped = 0;
  ScanCounters scan;
};

class ProcessStatsSource : public ProbeSource {
 public:
  // |writer| (not owned) must outlive the source; |proc_root| is "/proc"
  // but in tests.
  ProcessStatsSource(const ProcessStatsOptions& options,
                     shm_ring::TraceWriterV2* writer,
                     std::string proc_root);
  ~ProcessStatsSource() override;

  uint64_t Run(uint64_t now_ms, const std::atomic<bool>& stop) override;
  // Describes what is pending now (within the rate), then flushes.
  void Flush(const std::atomic<bool>& stop) override;

  // Tids seen in the kernel's events, for on_demand (ignored without it);
  // |dropped|: tids that could not even be queued before (counted).
  void AddPending(const std::vector<int32_t>& tids, uint64_t dropped);
  // Tids renamed since they were seen: pending, and described again (see
  // above).
  void AddRenamed(const std::vector<int32_t>& tids);
  size_t pending() const { return pending_.size(); }

  const ProcessStatsCounters& counters() const { return counters_; }

 private:
  // What one process's files said.
  struct Process;
  class TreeWriter;
  class StatsWriter;

  // Reads pid's files through |dir| (what |for_tree| and the stats need).
  bool ReadProcess(int dir_fd, int32_t pid, bool for_tree, Process* p);
  // Describes the threads of |pid| (|dir_fd|: its /proc/PID) in |tree|;
  // threads that end meanwhile are left out.
  void DescribeThreads(int dir_fd, int32_t pid, TreeWriter* tree);
  // Writes the whole process tree (the first run). These two return false
  // when they ended early because |stop| was set.
  bool ScanAll(const std::atomic<bool>& stop);
  // One ProcessStats poll (and the ProcessTree of newcomers).
  bool Poll(const std::atomic<bool>& stop);
  bool NeedsPidStat() const;
  // On demand: the pending tids within the rate; false when cut short by
  // |stop|. DescribeTid() looks one up.
  bool DescribePending(uint64_t now_ms, const std::atomic<bool>& stop);
  void DescribeTid(int32_t tid, bool renamed, TreeWriter* tree);
  bool Queue(int32_t tid);  // into pending_; false when full (counted)
  // A thread described (so a tid of it is not looked up again).
  void RememberThread(int32_t tid);
  // When Run() is due next (the poll, or the next window with tids left).
  uint64_t NextDue() const;

  const ProcessStatsOptions options_;
  shm_ring::TraceWriterV2* const writer_;
  const ProcFs proc_;
  bool started_ = false;
  Schedule poll_;
  // Processes described in this instance's ProcessTree packets: pid ->
  // start time (ticks after boot; 0 if unknown). Rebuilt at each poll from
  // the processes it found, so it holds only live ones.
  std::map<int32_t, uint64_t> described_;
  ProcessStatsCounters counters_;
  // On demand: tids waiting, the window's start and lookups in it, and the
  // threads described (by the scan, a poll or on demand; forgotten all at
  // once at kMaxKnownThreads, after which a thread may be described
  // twice).
  std::set<int32_t> pending_;
  std::set<int32_t> renamed_;  // a subset of pending_
  uint64_t window_start_ms_ = 0;
  uint32_t window_lookups_ = 0;
  std::set<int32_t> threads_known_;
  // Buffers reused across reads.
  std::string buf_;
  std::vector<int32_t> pids_;
  std::vector<int32_t> tids_;
};

}  // namespace probes
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_PROCESS_STATS_SOURCE_H_
