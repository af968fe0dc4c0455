/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The side-by-side workload of tools/compare-perfetto: the loop of Perfetto's
// `perfetto_loadgen` (an app on Perfetto's SDK; the workplace's
// shared/tools/perfetto/README.md documents it), written on ringtrace's
// TrackEvent API, with the same flags and the same output, so that one
// harness drives both and reads both.
//
// Modes (WorkloadConfig::mode):
//   - cost: each thread runs four phases one after the other, |total|
//     events each, in blocks of |burst| events with an optional |pause_us|
//     sleep between blocks (0: a tight loop):
//       slice    RT_TRACE_EVENT("cat", "name", "n", i): a scoped slice, begin
//                and end, one int debug annotation
//       instant  RT_TRACE_INSTANT("cat", "name")
//       counter  RT_TRACE_COUNTER("cat", "name", i)
//       disabled a scoped slice like `slice` in a category that the session
//                does not enable ("cat.disabled")
//     Each thread calls track_event::Flush() at its end.
//   - tput: each thread emits `slice` events as fast as it can, in blocks of
//     |burst|, until |duration_ms| passed (the clock is read once per block).
// Threads are named w0, w1, ... Timestamps: the TrackEvent clock
// (CLOCK_BOOTTIME; RINGTRACE_TRACE_CLOCK=boottime makes every event read it
// with clock_gettime instead of the TSC, track_event.h NowNs()).
//
// Per phase, each thread measures its wall time (CLOCK_MONOTONIC, pauses
// included) and its CPU time (CLOCK_THREAD_CPUTIME_ID); the results are the
// sums over the threads, and the ns per event printed are summed thread time
// over summed events, as perfetto_loadgen prints them.
//
// Output (FormatResult, RunSessionWorkload): `STARTED` once the session
// enabled "cat", one line per phase
//   RESULT phase=slice events=E wall_ns_per_ev=W cpu_ns_per_ev=C
// (tput adds events_per_s=R: all threads' events over the mean thread wall
// time), then `DONE`.
//
// Thread model: RunWorkload() starts and joins its threads; the threads share
// nothing (each fills its own results, read after join()).

#ifndef SRC_TOOLS_LOADGEN_WORKLOAD_H_
#define SRC_TOOLS_LOADGEN_WORKLOAD_H_

#include <stdint.h>
#include <stdio.h>

#include <string>
#include <vector>

#include "ringtrace/status.h"

namespace ringtrace {
namespace loadgen {

enum class WorkloadMode { kCost, kTput };

enum class Phase { kSlice, kInstant, kCounter, kDisabled, kTput };

// "slice", "instant", "counter", "disabled", "tput".
const char* PhaseName(Phase phase);
bool ParseWorkloadMode(const std::string& name, WorkloadMode* mode);

// The category the session enables, and the one it does not.
constexpr char kWorkloadCategory[] = "cat";
constexpr char kWorkloadDisabledCategory[] = "cat.disabled";

constexpr uint32_t kMaxWorkloadThreads = 256;

struct WorkloadConfig {
  WorkloadMode mode = WorkloadMode::kCost;
  uint32_t threads = 1;
  uint64_t total = 200000;      // cost: events per phase and thread
  uint32_t burst = 2000;        // events per block, >= 1
  uint32_t pause_us = 0;        // sleep between blocks
  uint32_t duration_ms = 1000;  // tput
};

struct PhaseResult {
  Phase phase = Phase::kSlice;
  uint64_t events = 0;   // summed over the threads
  uint64_t wall_ns = 0;  // summed thread wall time
  uint64_t cpu_ns = 0;   // summed thread CPU time
};

// Runs |config| on |config.threads| new threads and returns one result per
// phase, in phase order. Whatever enables the categories (a session, the
// static spec) is the caller's business: with nothing enabled, every phase
// costs a branch per event.
base::Status RunWorkload(const WorkloadConfig& config,
                         std::vector<PhaseResult>* results);

// The RESULT line of |r| (with a trailing newline), as perfetto_loadgen
// prints it; |threads| is needed for tput's events_per_s.
std::string FormatResult(const PhaseResult& r,
                         WorkloadMode mode,
                         uint32_t threads);

struct SessionWorkloadConfig {
  WorkloadConfig workload;
  std::string socket_path;  // ringtraced's producer socket
  std::string name = "ringtrace_loadgen";
  uint32_t ring_kb = 0;  // 0: the service's default ring size
  // How long to wait for a session to enable kWorkloadCategory, and, after
  // DONE, for it to end (the harness stops the session once it reads DONE;
  // leaving earlier would only end this producer's part of it sooner).
  uint32_t start_timeout_ms = 30000;
  uint32_t end_timeout_ms = 120000;
};

// Connects to ringtraced (ringtrace::Tracing with the track_event data
// source), waits for a session to enable kWorkloadCategory, prints STARTED,
// runs the workload, prints the RESULT lines and DONE on |out| (each line
// flushed at once), waits for the session to end and disconnects. A summary
// of the TrackEvent and producer counters goes to |log|. Errors: no
// connection, no session within start_timeout_ms, a session that did not end
// within end_timeout_ms, and those of RunWorkload().
base::Status RunSessionWorkload(const SessionWorkloadConfig& config,
                                FILE* out,
                                FILE* log);

}  // namespace loadgen
}  // namespace ringtrace

#endif  // SRC_TOOLS_LOADGEN_WORKLOAD_H_
