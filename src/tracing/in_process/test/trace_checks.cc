/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/in_process/test/trace_checks.h"

#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "src/base/test/subprocess.h"
#include "src/base/test/trace_processor_stats.h"

namespace ringtrace {
namespace test {

namespace pb = perfetto::protos;

namespace {
// trusted_packet_sequence_id of the service's own packets
// (trace_exporter.h, kServiceSequenceId).
constexpr uint32_t kServiceSequence = 1;
}  // namespace

DecodedEvents DecodeEvents(const std::string& bytes, pid_t pid) {
  DecodedEvents out;
  pb::Trace trace;
  if (!trace.ParseFromString(bytes))
    return out;
  out.parsed = true;
  // Interned event names per sequence: {sequence, iid} -> name.
  std::map<std::pair<uint32_t, uint64_t>, std::string> names;
  for (const pb::TracePacket& p : trace.packet()) {
    if (p.has_trace_config())
      out.has_config = true;
    if (p.has_trace_stats()) {
      out.has_stats = true;
      out.stats = p.trace_stats();
    }
    const uint32_t seq = p.trusted_packet_sequence_id();
    if (seq == kServiceSequence || !p.has_trusted_pid() ||
        p.trusted_pid() != pid) {
      continue;
    }
    out.packets++;
    if (p.has_interned_data()) {
      for (const pb::EventName& e : p.interned_data().event_names())
        names[{seq, e.iid()}] = e.name();
    }
    if (p.has_track_descriptor() && p.track_descriptor().has_process())
      out.process_names.insert(p.track_descriptor().process().process_name());
    if (!p.has_track_event())
      continue;
    const pb::TrackEvent& e = p.track_event();
    switch (e.type()) {
      case pb::TrackEvent::TYPE_SLICE_BEGIN:
        out.slice_begins[e.has_name() ? e.name()
                                      : names[{seq, e.name_iid()}]]++;
        break;
      case pb::TrackEvent::TYPE_INSTANT:
        out.instants[e.has_name() ? e.name() : names[{seq, e.name_iid()}]]++;
        break;
      case pb::TrackEvent::TYPE_SLICE_END:
        out.slice_ends++;
        break;
      case pb::TrackEvent::TYPE_COUNTER:
        out.counters++;
        break;
      default:
        break;
    }
  }
  return out;
}

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

uint64_t PacketsLostInStats(const pb::TraceStats& s) {
  return s.ringtrace_packets_overwritten() + s.ringtrace_packets_discarded() +
         s.ringtrace_packets_dropped_by_producers() + s.invalid_packets();
}

std::string TraceProcessorForTests() {
  std::string tp = TraceProcessorShellPath();
  if (!tp.empty())
    return tp;
  tp = base::ExecutableDir() + "/" RINGTRACE_SHARED_TOOLS_FROM_BINARY
                               "/trace_processor_shell";
  if (access(tp.c_str(), X_OK) == 0)
    return tp;
  printf(
      "no trace_processor_shell ($TRACE_PROCESSOR_SHELL, or %s): "
      "trace_processor not run\n",
      tp.c_str());
  return "";
}

namespace {

// "abc" -> abc; anything else as it is.
std::string Unquote(const std::string& s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"')
    return s.substr(1, s.size() - 2);
  return s;
}

// A CSV row of the query below: "name",idx,"severity","source",value.
bool ParseRow(const std::string& line, TraceProcessorStat* stat) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  std::string field;
  while (std::getline(in, field, ','))
    fields.push_back(Unquote(field));
  if (fields.size() != 5)
    return false;
  char* end = nullptr;
  stat->name = fields[0];
  stat->idx = fields[1] == "[NULL]" ? -1 : strtoll(fields[1].c_str(), &end, 10);
  stat->severity = fields[2];
  stat->source = fields[3];
  stat->value = strtoll(fields[4].c_str(), &end, 10);
  return !fields[4].empty() && *end == '\0';
}

// The pseudo-stat the query adds for the slice count.
constexpr char kSliceCountRow[] = "rt_test_slice_count";

}  // namespace

int64_t CheckWithTraceProcessor(const std::string& tp,
                                const std::string& trace_path,
                                const std::string& scratch_dir,
                                const std::string& slice_name,
                                const std::set<std::string>& allowed_data_loss,
                                std::map<std::string, int64_t>* stats_out) {
  // One run of the shell (it takes a good part of a second to start): the
  // non-zero stats and, as one more row, the slice count.
  std::string csv, error;
  if (!RunTraceProcessorQuery(
          tp, trace_path, scratch_dir,
          "select name, idx, severity, source, value from stats where value "
          "!= 0 union all select '" +
              std::string(kSliceCountRow) +
              "', null, 'info', 'test', count(*) from slice where name = '" +
              slice_name + "';",
          &csv, &error)) {
    ADD_FAILURE() << error;
    return -1;
  }
  int64_t slices = -1;
  std::istringstream lines(csv);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '"' || line.rfind("\"name\",", 0) == 0)
      continue;
    TraceProcessorStat s;
    if (!ParseRow(line, &s)) {
      ADD_FAILURE() << "unexpected row: " << line;
      return -1;
    }
    if (s.name == kSliceCountRow) {
      slices = s.value;
      continue;
    }
    EXPECT_NE(s.severity, "error") << Describe(s);
    if (s.severity == "data_loss") {
      EXPECT_EQ(allowed_data_loss.count(s.name), 1u) << Describe(s);
    }
    if (stats_out && s.idx <= 0)
      (*stats_out)[s.name] = s.value;
  }
  EXPECT_GE(slices, 0) << "no slice count in:\n" << csv;
  return slices;
}

}  // namespace test
}  // namespace ringtrace
