/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Flight recorder, end to end over the real binaries: ringtraced with a small
// RING_BUFFER and example apps that write many times its size, so the buffer
// wraps many times and keeps only the newest part of every sequence. The
// trace is decoded with libprotobuf and read the way trace_processor reads
// incremental state:
//   - a packet with SEQ_INCREMENTAL_STATE_CLEARED starts a generation: the
//     sequence's interned strings and track descriptors are reset;
//   - previous_packet_dropped ends it: until the next clear, the sequence's
//     state is invalid;
//   - a packet with SEQ_NEEDS_INCREMENTAL_STATE while the state is invalid is
//     skipped (trace_processor drops it the same way).
// Every event that is not skipped must resolve its track (a descriptor of
// its generation), its name, its categories and its debug annotation names
// (iids of its generation). Skipped events may only lie before the first
// surviving clear of a sequence or after a reported loss.
//
// Set RT_FLIGHT_RECORDER_TRACE_OUT=PATH to keep the trace (tools/check-trace
// reads it with trace_processor).

#include <gtest/gtest.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/test/ringtraced_process.h"

namespace ringtrace {
namespace test {
namespace {

namespace pb = perfetto::protos;

constexpr int kProcessTimeoutMs = 300000;  // against hangs only

// What the incremental-state reading of one trace found.
struct Resolution {
  uint64_t events_resolved = 0;
  uint64_t events_skipped = 0;  // needed state that was not valid
  // Of those, skipped after the sequence's first surviving clear.
  uint64_t events_skipped_after_a_clear = 0;
  uint64_t unresolved = 0;  // a track, name or iid missing: a bug
  uint64_t clears = 0;
  uint64_t counters = 0;
  uint64_t slices = 0;
  uint64_t named_thread_tracks = 0;
  uint64_t thread_tracks = 0;
  std::set<uint32_t> sequences_with_events;
  std::vector<std::string> errors;  // the first few unresolved ones
};

struct SequenceState {
  bool valid = false;
  pb::TracePacketDefaults defaults;  // from the generation's clear packet
  std::set<uint64_t> tracks;
  std::map<uint64_t, std::string> names, categories, arg_names;
};

void Unresolved(Resolution* r, const std::string& what) {
  r->unresolved++;
  if (r->errors.size() < 10)
    r->errors.push_back(what);
}

void ResolveEvent(const pb::TracePacket& p,
                  const SequenceState& s,
                  Resolution* r) {
  const pb::TrackEvent& e = p.track_event();
  const std::string where = "seq " +
                            std::to_string(p.trusted_packet_sequence_id()) +
                            " ts " + std::to_string(p.timestamp());
  const bool by_default = !e.has_track_uuid();
  if (by_default && !s.defaults.track_event_defaults().has_track_uuid())
    Unresolved(r, where + ": no track and no default track");
  const uint64_t track = by_default
                             ? s.defaults.track_event_defaults().track_uuid()
                             : e.track_uuid();
  if (s.tracks.count(track) == 0)
    Unresolved(r, where + ": track " + std::to_string(track));
  if (e.has_name_iid() && s.names.count(e.name_iid()) == 0)
    Unresolved(r, where + ": name iid " + std::to_string(e.name_iid()));
  if (e.type() == pb::TrackEvent::TYPE_SLICE_BEGIN && !e.has_name_iid() &&
      e.name().empty()) {
    Unresolved(r, where + ": slice without a name");
  }
  for (uint64_t iid : e.category_iids()) {
    if (s.categories.count(iid) == 0)
      Unresolved(r, where + ": category iid " + std::to_string(iid));
  }
  for (const pb::DebugAnnotation& a : e.debug_annotations()) {
    if (a.has_name_iid() && s.arg_names.count(a.name_iid()) == 0)
      Unresolved(r, where + ": arg name iid " + std::to_string(a.name_iid()));
  }
  r->events_resolved++;
  r->counters += e.type() == pb::TrackEvent::TYPE_COUNTER;
  r->slices += e.type() == pb::TrackEvent::TYPE_SLICE_BEGIN;
  r->sequences_with_events.insert(p.trusted_packet_sequence_id());
}

Resolution Resolve(const pb::Trace& trace) {
  Resolution r;
  std::map<uint32_t, SequenceState> sequences;
  std::set<uint32_t> cleared;  // sequences that had a clear
  for (const pb::TracePacket& p : trace.packet()) {
    if (!p.has_track_event() && !p.has_track_descriptor() &&
        !p.has_interned_data() && !p.has_trace_packet_defaults()) {
      continue;  // service packets
    }
    SequenceState& s = sequences[p.trusted_packet_sequence_id()];
    if (p.previous_packet_dropped() != 0)
      s.valid = false;
    if (p.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
      s = SequenceState();
      s.valid = true;
      s.defaults = p.trace_packet_defaults();
      r.clears++;
      cleared.insert(p.trusted_packet_sequence_id());
    }
    const bool needs =
        p.sequence_flags() & pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE;
    if (needs && !s.valid) {
      r.events_skipped += p.has_track_event();
      if (cleared.count(p.trusted_packet_sequence_id()) != 0)
        r.events_skipped_after_a_clear += p.has_track_event();
      continue;
    }
    for (const auto& c : p.interned_data().event_categories())
      s.categories[c.iid()] = c.name();
    for (const auto& n : p.interned_data().event_names())
      s.names[n.iid()] = n.name();
    for (const auto& n : p.interned_data().debug_annotation_names())
      s.arg_names[n.iid()] = n.name();
    if (p.has_track_descriptor()) {
      const pb::TrackDescriptor& d = p.track_descriptor();
      s.tracks.insert(d.uuid());
      if (d.has_thread()) {
        r.thread_tracks++;
        r.named_thread_tracks += !d.thread().thread_name().empty();
      }
      if (d.has_counter() && d.name().empty())
        Unresolved(&r, "counter track without a name");
    }
    if (p.has_track_event())
      ResolveEvent(p, s, &r);
  }
  return r;
}

class FlightRecorderTest : public EndToEndFixture {
 protected:
  void StartService(base::Subprocess* service) {
    const std::string error =
        StartRingtraced(service, socket_, kProcessTimeoutMs);
    ASSERT_TRUE(error.empty()) << error;
  }
};

TEST_F(FlightRecorderTest, EverySurvivingEventResolvesAfterManyWraps) {
  base::Subprocess service({bin_ + "/ringtraced", "--socket", socket_, "--out",
                            trace_, "--buffer-kb", "1024", "--fill-policy",
                            "ring_buffer"});
  ASSERT_NO_FATAL_FAILURE(StartService(&service));
  // About 18 MB of events against a 1 MiB buffer. The stall policy keeps
  // the producers' rings lossless, so every loss is the buffer's overwrite.
  std::vector<std::unique_ptr<base::Subprocess>> apps;
  for (const char* name : {"flight_a", "flight_b"}) {
    apps.push_back(std::make_unique<base::Subprocess>(std::vector<std::string>{
        bin_ + "/ringtrace_example_app", "--socket", socket_, "--name", name,
        "--threads", "3", "--events", "100000", "--policy", "stall",
        "--stall-timeout-ms", "30000"}));
    std::string error;
    ASSERT_TRUE(apps.back()->Start(&error)) << error;
  }
  for (auto& app : apps) {
    ASSERT_TRUE(app->Wait(kProcessTimeoutMs)) << app->output();
    ASSERT_EQ(app->exit_code(), 0) << app->output();
    EXPECT_NE(app->output().find("dropped 0)"), std::string::npos)
        << app->output();
  }
  service.Signal(SIGTERM);
  ASSERT_TRUE(service.Wait(kProcessTimeoutMs)) << service.output();
  ASSERT_EQ(service.exit_code(), 0) << service.output();

  std::ifstream in(trace_, std::ios::binary);
  ASSERT_TRUE(in);
  std::stringstream bytes;
  bytes << in.rdbuf();
  pb::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(bytes.str()));
  if (const char* keep = getenv("RT_FLIGHT_RECORDER_TRACE_OUT")) {
    std::ofstream out(keep, std::ios::binary);
    out << bytes.str();
  }

  // The buffer wrapped many times.
  uint64_t wraps = 0;
  for (const pb::TracePacket& p : trace.packet()) {
    if (p.has_trace_stats() && p.trace_stats().buffer_stats_size() > 0)
      wraps = p.trace_stats().buffer_stats(0).write_wrap_count();
  }
  EXPECT_GE(wraps, 10u);

  const Resolution r = Resolve(trace);
  printf("flight recorder: %zu packets, %" PRIu64 " wraps, %" PRIu64
         " events resolved, %" PRIu64 " skipped at sequence heads, %" PRIu64
         " clears, %zu "
         "sequences with events\n",
         static_cast<size_t>(trace.packet_size()), wraps, r.events_resolved,
         r.events_skipped, r.clears, r.sequences_with_events.size());
  for (const std::string& e : r.errors)
    ADD_FAILURE() << "unresolved: " << e;
  EXPECT_EQ(r.unresolved, 0u);
  EXPECT_GT(r.events_resolved, 1000u);
  EXPECT_GT(r.counters, 0u);
  EXPECT_GT(r.slices, 0u);
  // The buffer keeps the newest megabyte: the sequences of the threads that
  // wrote last (one or more: how the last megabyte is shared among them is
  // the scheduler's choice), each with clears re-emitted inside the
  // surviving part.
  EXPECT_GE(r.sequences_with_events.size(), 1u);
  EXPECT_GE(r.clears, r.sequences_with_events.size());
  EXPECT_GT(r.thread_tracks, 0u);
  EXPECT_EQ(r.named_thread_tracks, r.thread_tracks);
  // The only events a reader must skip are those at the overwritten head of
  // a sequence, before its first surviving clear (16 KiB of it at most, the
  // byte period); none after.
  EXPECT_EQ(r.events_skipped_after_a_clear, 0u);
  EXPECT_LT(r.events_skipped, r.events_resolved);
}

}  // namespace
}  // namespace test
}  // namespace ringtrace
