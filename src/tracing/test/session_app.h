/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. The test side of ringtrace_session_app (session_app_main.cc):
// starting it, reading the bounds it prints, decoding a trace file into the
// app's numbered sequences, and checking a trace against an instance's
// bounds packet by packet.

#ifndef SRC_TRACING_TEST_SESSION_APP_H_
#define SRC_TRACING_TEST_SESSION_APP_H_

#include <gtest/gtest.h>
#include <stdint.h>
#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"
#include "src/base/test/subprocess.h"

namespace ringtrace {
namespace test {

// Packets each of the app's sequences holds besides its counter events: the
// clear packet (defaults, clock snapshot), the process, thread and counter
// TrackDescriptors (no incremental-state clear period in these tests).
constexpr uint64_t kDescriptorsPerSequence = 4;

// Where one data-source instance's events must be, per app thread
// (session_app_main.cc says what each bound means).
struct InstanceBounds {
  uint64_t generation = 0;
  uint32_t instance_id = 0;
  uint32_t target_buffer = 0;
  std::vector<uint64_t> before, first;  // from START
  std::vector<uint64_t> last, after;    // from STOP (empty until it came)
};

// A running ringtrace_session_app.
class SessionApp {
 public:
  // Starts it on |socket| with |threads| threads and |extra| flags.
  bool Start(const std::string& bin_dir,
             const std::string& socket,
             uint32_t threads,
             const std::vector<std::string>& extra,
             std::string* error);

  // Waits (polling the output, at most |timeout_ms|) for the |nth| (1-based)
  // line starting with "<word> "; its fields after the word go to |fields|.
  bool WaitLine(const std::string& word,
                size_t nth,
                int timeout_ms,
                std::vector<std::string>* fields);
  // The START line of the |nth| instance started, parsed.
  bool WaitStart(size_t nth, int timeout_ms, InstanceBounds* bounds);
  // Adds the STOP line of |bounds|' instance (same generation and id).
  bool WaitStop(int timeout_ms, InstanceBounds* bounds);
  // Sends SIGUSR1 and returns the MARK it prints: per thread, the number of
  // events that ended.
  bool Mark(int timeout_ms, std::vector<uint64_t>* ended);
  // Marks until every thread's count reached |at_least| (per thread).
  bool WaitProgress(const std::vector<uint64_t>& at_least, int timeout_ms);

  base::Subprocess* process() { return process_.get(); }
  pid_t pid() const { return process_->pid(); }
  uint32_t threads() const { return threads_; }

 private:
  std::unique_ptr<base::Subprocess> process_;
  uint32_t threads_ = 0;
  size_t marks_ = 0;
};

// The app's packets in a trace file, by trusted_packet_sequence_id.
struct AppSequence {
  uint32_t thread = 0;            // from the counter values
  bool mixed_threads = false;     // values of two threads: a failure
  std::vector<uint64_t> numbers;  // counter events, in trace order
  // For each number: the packet carried previous_packet_dropped.
  std::vector<bool> dropped_before;
  uint64_t other_packets = 0;  // the app's packets without a counter
};
struct DecodedTrace {
  bool parsed = false;
  std::map<uint32_t, AppSequence> sequences;
  uint64_t app_packets = 0;  // every packet with the app's trusted_pid
  bool has_stats = false;
  perfetto::protos::TraceStats stats;
};
DecodedTrace DecodeTrace(const std::string& path, pid_t app_pid);

// The sequences of |thread| in |trace|.
std::vector<const AppSequence*> SequencesOf(const DecodedTrace& trace,
                                            uint32_t thread);

// Checks that every app thread has at most one sequence in |trace| whose
// numbers are consecutive (a hole only right after previous_packet_dropped,
// and none at all if |lossless|), starting in [before, first] and ending in
// [last - 1, after - 1]; a thread without a sequence must have had no event
// it must hold (last <= first).
::testing::AssertionResult HoldsInstance(const DecodedTrace& trace,
                                         const InstanceBounds& bounds,
                                         bool lossless);

// The TraceStats show no loss: no chunk overwritten or discarded, no
// producer-reported drop.
::testing::AssertionResult NoLossInStats(const DecodedTrace& trace);

// A config with one buffer and the "track_event" data source.
perfetto::protos::TraceConfig AppConfig(
    uint32_t size_kb,
    perfetto::protos::TraceConfig::BufferConfig::FillPolicy policy);

}  // namespace test
}  // namespace ringtrace

#endif  // SRC_TRACING_TEST_SESSION_APP_H_
