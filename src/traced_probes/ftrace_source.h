/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The linux.ftrace data source's work for one instance (docs/ftrace.md,
// "The linux.ftrace data source"):
//   - Create(): removes the tracefs instances a crashed earlier process
//     left (CleanStaleInstances), creates a private instance
//     (instances/<prefix><pid>_<n>), sets its buffer size and the "boot"
//     trace clock (CLOCK_BOOTTIME, the trace's clock), enables the
//     configured events ("group/name" or "group/*"), loads their formats,
//     opens every CPU's trace_pipe_raw, turns on copy_trace_marker when
//     ftrace/print is asked for (so writes to the top-level trace_marker,
//     which atrace-style markers use, reach this instance too), turns
//     tracing on and writes an FtraceStats packet (START_OF_TRACE) with
//     each CPU's kernel counters and the events that could not be
//     enabled.
//   - Run(): every drain period, each CPU's pages read from trace_pipe_raw
//     (up to the buffer's size per CPU per drain, so one busy CPU cannot
//     starve the others), kPagesPerBundle pages per FtraceEventBundle
//     packet (compact_sched when configured).
//   - Flush(): at a flush of the service (a consumer's flush, the
//     periodic flushes, the flush before the stop), every CPU's pages read
//     now, as in a drain, and the writer flushed: the flush is acknowledged
//     only after what the kernel held at that time is in the ring.
//   - Finish(): tracing off, the last drain of everything left, an
//     FtraceStats packet (END_OF_TRACE), a Flush() of the writer.
//   - The destructor closes the pipes and removes the instance.
//
// Everything read from the kernel is parsed as untrusted input by the
// ftrace component (page_parser.h, event_translator.h): a corrupt page
// becomes an error entry in its bundle, never a crash or a hang.
//
// Thread model: a ProbeSource (probe_source.h). Create() and Finish() run
// on the thread that owns the source at that time (the producer's reader
// thread, before ProbesLoop::Add() and after ProbesLoop::Remove()).

#ifndef SRC_TRACED_PROBES_FTRACE_SOURCE_H_
#define SRC_TRACED_PROBES_FTRACE_SOURCE_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "ringtrace/status.h"
#include "ringtrace/trace_writer_v2.h"
#include "src/base/scoped_fd.h"
#include "src/traced_probes/ftrace/event_format.h"
#include "src/traced_probes/ftrace/event_translator.h"
#include "src/traced_probes/ftrace/tracefs.h"
#include "src/traced_probes/probe_source.h"
#include "src/traced_probes/seen_pids.h"

namespace ringtrace {
namespace probes {

// The instance prefix of ringtrace_probes (tests use their own).
constexpr char kFtraceInstancePrefix[] = "ringtrace_probes_";
// Perfetto's defaults and bounds for FtraceConfig.
constexpr uint32_t kDefaultFtraceDrainPeriodMs = 100;
constexpr uint32_t kMinFtraceDrainPeriodMs = 10;
constexpr uint32_t kMaxFtraceDrainPeriodMs = 60 * 1000;
constexpr uint32_t kDefaultFtraceBufferSizeKb = 2 * 1024;
constexpr uint32_t kMaxFtraceBufferSizeKb = 64 * 1024;
// Tids remembered as offered to SeenPids.
constexpr size_t kMaxOfferedTids = 1 << 16;
// Pages of one CPU per FtraceEventBundle.
constexpr size_t kPagesPerBundle = 32;

struct FtraceOptions {
  // As configured: "group/name" or "group/*".
  std::vector<std::string> events;
  uint32_t buffer_size_kb = kDefaultFtraceBufferSizeKb;
  uint32_t drain_period_ms = kDefaultFtraceDrainPeriodMs;
  bool compact_sched = false;
};

struct FtraceCounters {
  uint64_t drains = 0;         // periodic, flush and final drains
  uint64_t flush_drains = 0;   // ... of them at a flush
  uint64_t drains_missed = 0;  // periods skipped because a run was late
  uint64_t bundles = 0;        // FtraceEventBundle packets
  uint64_t bundles_lost = 0;   // ... with lost_events set
  uint64_t stats_packets = 0;  // FtraceStats packets
  uint64_t read_errors = 0;    // trace_pipe_raw reads that failed
  // The kernel's counters, summed over the CPUs: END_OF_TRACE minus
  // START_OF_TRACE.
  uint64_t overrun = 0;
  uint64_t commit_overrun = 0;
  uint64_t dropped_events = 0;
};

class FtraceSource : public ProbeSource {
 public:
  // Sets the instance up and starts tracing (see above). |writer| (not
  // owned) must outlive the source. |*notes| gets a line per configured
  // event that is not used (and why) and per fact the user should know (a
  // config that records nothing). On failure nothing is left behind.
  static base::Status Create(const FtraceOptions& options,
                             shm_ring::TraceWriterV2* writer,
                             const std::string& tracefs_root,
                             const std::string& prefix,
                             std::unique_ptr<FtraceSource>* out,
                             std::vector<std::string>* notes);
  ~FtraceSource() override;

  // After each bundle, the tids the bundle's events were recorded for that
  // this source has not offered before go to |seen| (not owned; it must
  // outlive the source), for linux.process_stats' on-demand dumps, and so
  // do the tasks its task/task_rename events renamed (each time: an exec
  // changes what a described process is). Null: none (the default).
  void SetSeenPids(SeenPids* seen);

  uint64_t Run(uint64_t now_ms, const std::atomic<bool>& stop) override;
  void Flush(const std::atomic<bool>& stop) override;

  // The end of the instance (see above); once, after the last Run().
  void Finish();

  const FtraceCounters& counters() const { return counters_; }
  const ftrace::TranslatorStats& translator_stats() const {
    return translator_->stats();
  }
  const std::string& instance_name() const { return instance_->name(); }
  // The events enabled ("group/name").
  const std::vector<std::string>& enabled_events() const { return enabled_; }

 private:
  struct Cpu {
    uint32_t cpu = 0;
    base::ScopedFd pipe;
    ftrace::CpuStats start;  // at START_OF_TRACE
    bool have_start = false;
  };

  FtraceSource(const FtraceOptions& options, shm_ring::TraceWriterV2* writer);

  base::Status SetUp(const std::string& tracefs_root,
                     const std::string& prefix,
                     std::vector<std::string>* notes);
  // Resolves options_.events into enabled_ (and unknown_ / failed_).
  void EnableEvents(std::vector<std::string>* notes);
  // Reads each CPU's pages, |max_pages| at most per CPU.
  void Drain(size_t max_pages, const std::atomic<bool>& stop);
  void WriteStats(bool start);
  // The bundle's tids not offered before, to seen_.
  void OfferPids();

  const FtraceOptions options_;
  shm_ring::TraceWriterV2* const writer_;
  std::unique_ptr<ftrace::TracefsInstance> instance_;
  ftrace::EventFormatTable formats_;
  ftrace::HeaderPage header_;
  std::unique_ptr<ftrace::EventTranslator> translator_;
  size_t page_size_ = 0;
  uint32_t buffer_pages_ = 0;
  std::vector<Cpu> cpus_;
  std::vector<uint8_t> pages_;
  std::vector<std::string> enabled_;
  std::vector<std::string> unknown_;  // tracefs has no such event
  std::vector<std::string> failed_;   // it has, but enabling failed
  SeenPids* seen_ = nullptr;
  std::vector<int32_t> drained_tids_;  // the translator's pid sink
  std::vector<int32_t> renamed_tids_;  // ... and its rename sink
  // Tids offered to seen_ (forgotten all at once at kMaxOfferedTids: a
  // tid is then offered again, which costs the subscriber a lookup).
  std::unordered_set<int32_t> offered_;
  std::vector<int32_t> new_tids_;
  Schedule drain_;
  bool finished_ = false;
  FtraceCounters counters_;
};

}  // namespace probes
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_FTRACE_SOURCE_H_
