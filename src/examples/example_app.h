/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_example_app, as a library so that tests run it against a fake
// service: an instrumented app that connects to a running ringtraced
// (ringtrace::Producer), starts N threads that each write TrackEvent
// packets through their own TraceWriterV2, flushes and reports what it
// wrote and what was dropped.
//
// Written through the TrackEvent API (include/ringtrace/track_event.h),
// category "example", each thread on its own writer (sequence):
//   - the main thread: a slice "run" over the whole run;
//   - worker i, a thread named "worker-<i>": |events_per_thread| TrackEvents
//     in cycles of five: SLICE_BEGIN "frame", SLICE_BEGIN "step_a"/"step_b",
//     COUNTER on the track "worker-<i> queue depth", SLICE_END, SLICE_END. A
//     shorter last cycle stays balanced: one event is a COUNTER, more are a
//     slice "tail" around COUNTERs.
// The process, thread and counter TrackDescriptors and the interned names
// are the API's (written at binding and after every incremental-state
// clear).
//
// Accounting (exact once every writer flushed and was destroyed):
//   packets_written == packets_committed + packets_dropped,
// where committed packets are in the ring (for the service to drain) and
// dropped ones were lost by the writers (ring full per the policy).
//
// The sessions mode (--mode sessions, RunSessionExample): the app as an app of
// a long-running ringtraced daemon. It connects through ringtrace::Tracing
// (reconnecting in the background), registers the "track_event" data source
// and writes no writer of its own: the tracing sessions started by
// consumers (the `ringtrace` CLI) choose the categories, and each thread
// gets its writer per session from the TrackEvent library. Its |threads|
// workers run until the end (--duration-ms, or SIGINT/SIGTERM in the
// program), one cycle every |cycle_interval_us|:
//   category "example": the five events of a cycle above, each "frame"
//   begin carrying the worker's flow (Flow::ProcessScoped(i)), which links
//   its frames in order;
//   category "io": a slice "read" (argument "bytes") on the app track
//   Track::Named("reads", i), and a COUNTER on the counter track
//   "worker-<i> io bytes" (unit: bytes);
//   category "example.detail", tagged "slow": an instant "checksum"
//   (argument "value"), which a session records only when it names the
//   category or enables the tag (docs/track_event.md, "Category matching").
// A cycle of a disabled category costs a load and a branch per macro.

#ifndef SRC_EXAMPLES_EXAMPLE_APP_H_
#define SRC_EXAMPLES_EXAMPLE_APP_H_

#include <stdint.h>

#include <functional>
#include <string>

#include "ringtrace/producer.h"
#include "ringtrace/status.h"
#include "ringtrace/tracing.h"

namespace ringtrace {
namespace examples {

// The most worker threads either mode runs.
constexpr uint32_t kMaxExampleThreads = 1024;

struct ExampleConfig {
  std::string socket_path;
  std::string name = "ringtrace_example_app";
  uint32_t threads = 4;
  uint32_t events_per_thread = 1000;
  // 0: the service's defaults.
  uint32_t ring_kb = 0;
  uint32_t chunk_size = 0;
  uint32_t connect_timeout_ms = 2000;
  // ProducerOptions::disconnect_timeout_ms: how long the exit waits for
  // the service to read the last reports and close.
  uint32_t disconnect_timeout_ms = 1000;
  shm_ring::BufferExhaustedPolicy policy =
      shm_ring::BufferExhaustedPolicy::kStallThenDrop;
  uint32_t stall_timeout_ms = 100;
  // --mode sessions (see above); false: --mode classic.
  bool sessions = false;
  // Sessions mode: how long to run; 0 until a stop signal.
  uint32_t duration_ms = 0;
  // Sessions mode: the pause between two cycles of a worker.
  uint32_t cycle_interval_us = 1000;
};

struct ExampleResult {
  ProducerID producer_id = 0;
  shm_ring::RingGeometry geometry;
  uint64_t events_written = 0;  // the workers' TrackEvents
  // The main thread's TrackEvents: its "run" slice's begin and end.
  uint64_t main_thread_events = 0;
  uint64_t packets_written = 0;  // all packets begun
  uint64_t packets_committed = 0;
  uint64_t packets_dropped = 0;
  uint64_t bytes_written = 0;
  uint64_t bytes_dropped = 0;
  ProducerStats producer;
  // False if the service went away during the run: then the committed
  // packets may never have been drained.
  bool connected_at_end = false;
};

// Parses the command line (argv[0] is skipped) into |*config|. kError sets
// |*error|.
enum class ParseResult { kRun, kHelp, kError };
ParseResult ParseExampleArgs(int argc,
                             const char* const* argv,
                             ExampleConfig* config,
                             std::string* error);
std::string ExampleUsage();

// Runs the app. Fails (before starting any thread) if the service cannot be
// reached or refuses the producer.
base::Status RunExample(const ExampleConfig& config, ExampleResult* result);

std::string FormatExampleSummary(const ExampleConfig& config,
                                 const ExampleResult& result);

// What a run of the sessions mode did. The counts of cycles per category
// are taken at the start of each cycle (a session that starts or stops
// within a cycle gets part of it); what reached each trace is the trace's
// business (its TraceStats count the losses per producer and writer).
struct SessionExampleResult {
  uint64_t producer_id = 0;  // of the last connection
  TracingStats tracing;
  ProducerStats producer;       // the last connection's
  uint64_t cycles = 0;          // all workers
  uint64_t cycles_example = 0;  // begun while a session enabled "example"
  uint64_t cycles_io = 0;       // begun while a session enabled "io"
  // Begun while a session enabled "example.detail" (tagged "slow").
  uint64_t cycles_detail = 0;
  // TrackEvent's counters (per-thread writers created and released, events
  // that found no writer).
  uint64_t instance_writers_created = 0;
  uint64_t instance_writers_released = 0;
  uint64_t events_without_writer = 0;
};

// |on_connected| is called once the first connection is made (its producer
// id), before the workers start; then |wait_for_end| blocks until the run
// should end (the program: --duration-ms or a stop signal).
// |on_masks_changed| is called on worker |index|'s thread after it wrote a
// cycle with instance masks (track_event::CategoryMask, read at the cycle's
// start) of "example", "io" and "example.detail" other than its previous
// cycle's (the first time when a mask is not 0): once it returns with a
// mask bit set, the cycle's packets for that instance are published in the
// ring (producer.h, "The packet guarantee"). Any hook may be empty.
struct CycleMasks {
  uint32_t example = 0;
  uint32_t io = 0;
  uint32_t detail = 0;  // "example.detail"
};
struct SessionExampleHooks {
  std::function<void(uint64_t producer_id)> on_connected;
  std::function<void()> wait_for_end;
  std::function<void(uint32_t index, const CycleMasks& masks)> on_masks_changed;
};
// Runs the sessions mode. Fails if no connection is made within
// connect_timeout_ms.
base::Status RunSessionExample(const ExampleConfig& config,
                               const SessionExampleHooks& hooks,
                               SessionExampleResult* result);

std::string FormatSessionExampleSummary(const ExampleConfig& config,
                                        const SessionExampleResult& result);

}  // namespace examples
}  // namespace ringtrace

#endif  // SRC_EXAMPLES_EXAMPLE_APP_H_
