/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. What the in-process backend's tests check in a trace: this
// process's TrackEvents decoded with libprotobuf (names resolved through
// each sequence's interning), its packet count, the TraceStats; and the
// trace loaded into Perfetto's trace_processor_shell ($TRACE_PROCESSOR_SHELL,
// else the workplace's copy beside the checkout, ../shared/tools; skipped,
// with a message, when there is none).

#ifndef SRC_TRACING_IN_PROCESS_TEST_TRACE_CHECKS_H_
#define SRC_TRACING_IN_PROCESS_TEST_TRACE_CHECKS_H_

#include <stdint.h>
#include <sys/types.h>

#include <map>
#include <set>
#include <string>

#include "protos/perfetto/trace/trace_packet.pb.h"

namespace ringtrace {
namespace test {

struct DecodedEvents {
  bool parsed = false;
  // Of the packets with |pid|'s trusted_pid outside the service's sequence:
  uint64_t packets = 0;
  std::map<std::string, uint64_t> slice_begins;  // by event name
  std::map<std::string, uint64_t> instants;      // by event name
  uint64_t slice_ends = 0;
  uint64_t counters = 0;
  std::set<std::string> process_names;  // of the process track descriptors
  // The service's packets.
  bool has_config = false;
  bool has_stats = false;
  perfetto::protos::TraceStats stats;

  uint64_t begins(const std::string& name) const {
    auto it = slice_begins.find(name);
    return it == slice_begins.end() ? 0 : it->second;
  }
  uint64_t instants_of(const std::string& name) const {
    auto it = instants.find(name);
    return it == instants.end() ? 0 : it->second;
  }
};

// Decodes the trace file bytes |trace| (perfetto.protos.Trace).
DecodedEvents DecodeEvents(const std::string& bytes, pid_t pid);

// The whole file at |path| ("" if it cannot be read).
std::string ReadFileBytes(const std::string& path);

// The loss the TraceStats report, in packets (as the exact loss tests add
// it up).
uint64_t PacketsLostInStats(const perfetto::protos::TraceStats& stats);

// trace_processor_shell's path, or "" (with a line on stdout saying so).
std::string TraceProcessorForTests();

// Loads |trace_path| into trace_processor_shell |tp|: expects no stat of
// severity "error", and none of "data_loss" but those named in
// |allowed_data_loss|. Returns the number of slices named |slice_name| and
// the non-zero stats in |*stats| (if not null); -1 on failure (a test
// failure is recorded).
int64_t CheckWithTraceProcessor(
    const std::string& tp,
    const std::string& trace_path,
    const std::string& scratch_dir,
    const std::string& slice_name,
    const std::set<std::string>& allowed_data_loss = {},
    std::map<std::string, int64_t>* stats = nullptr);

}  // namespace test
}  // namespace ringtrace

#endif  // SRC_TRACING_IN_PROCESS_TEST_TRACE_CHECKS_H_
