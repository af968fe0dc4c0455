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

#ifndef SRC_EXAMPLES_EXAMPLE_APP_H_
#define SRC_EXAMPLES_EXAMPLE_APP_H_

#include <stdint.h>

#include <string>

#include "ringtrace/producer.h"
#include "ringtrace/status.h"

namespace ringtrace {
namespace examples {

struct ExampleConfig {
  std::string socket_path;
  std::string name = "ringtrace_example_app";
  uint32_t threads = 4;
  uint32_t events_per_thread = 1000;
  // 0: the service's defaults.
  uint32_t ring_kb = 0;
  uint32_t chunk_size = 0;
  uint32_t connect_timeout_ms = 2000;
  shm_ring::BufferExhaustedPolicy policy =
      shm_ring::BufferExhaustedPolicy::kStallThenDrop;
  uint32_t stall_timeout_ms = 100;
};

struct ExampleResult {
  ProducerID producer_id = 0;
  shm_ring::RingGeometry geometry;
  uint64_t events_written = 0;   // the workers' TrackEvents
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

}  // namespace examples
}  // namespace ringtrace

#endif  // SRC_EXAMPLES_EXAMPLE_APP_H_
