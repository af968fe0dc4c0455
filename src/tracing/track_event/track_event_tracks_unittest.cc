/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Flows and app tracks (ringtrace/track_event.h, Flow and Track): the
// packets are decoded with libprotobuf and checked field by field.

// Categories for this test only (see RT_TRACK_EVENT_NAMESPACE).
#define RT_TRACK_EVENT_NAMESPACE rt_track_event_tracks_unittest_categories

#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"
#include "ringtrace/track_event.h"
#include "src/tracing/core/encoding/test/packet_capture.h"
#include "src/tracing/track_event/test/sequence_reader.h"
#include "src/tracing/track_event/track_event_instances.h"

RT_DEFINE_CATEGORIES("tracks.a", "tracks.b");

namespace ringtrace {
namespace track_event {
namespace {

namespace pb = perfetto::protos;
using encoding::PacketCapture;

// The packets of |capture|, interned strings resolved.
std::vector<pb::TracePacket> Parse(PacketCapture* capture) {
  uint64_t lost = 0;
  std::vector<pb::TracePacket> out;
  for (const std::string& grouped : capture->Drain(&lost)) {
    std::string flat;
    EXPECT_TRUE(PacketCapture::Ungroup(grouped, &flat));
    pb::TracePacket packet;
    EXPECT_TRUE(packet.ParseFromString(flat));
    out.push_back(packet);
  }
  EXPECT_EQ(lost, 0u);
  ResolveIncrementalState(&out);
  return out;
}

uint64_t ThisThreadTrack() {
  return ThreadTrackUuid(static_cast<int64_t>(syscall(SYS_gettid)));
}

// The descriptor of an app track: uuid, parent (0: none), name, and nothing
// of a process, thread or counter track.
void ExpectAppTrackDescriptor(const pb::TracePacket& packet,
                              uint64_t uuid,
                              uint64_t parent_uuid,
                              const std::string& name) {
  ASSERT_TRUE(packet.has_track_descriptor());
  const pb::TrackDescriptor& d = packet.track_descriptor();
  EXPECT_EQ(d.uuid(), uuid);
  EXPECT_EQ(d.has_parent_uuid(), parent_uuid != 0);
  EXPECT_EQ(d.parent_uuid(), parent_uuid);
  EXPECT_EQ(d.name(), name);
  EXPECT_FALSE(d.has_process());
  EXPECT_FALSE(d.has_thread());
  EXPECT_FALSE(d.has_counter());
  EXPECT_EQ(
      packet.sequence_flags(),
      static_cast<uint32_t>(pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE));
}

class TrackEventTracksTest : public testing::Test {
 protected:
  void SetUp() override { SetCategoriesEnabled("-*"); }
  void TearDown() override { SetCategoriesEnabled("-*"); }
};

// Flow and TerminatingFlow go into TrackEvent.flow_ids (47) and
// terminating_flow_ids (48) as fixed64 (libprotobuf would not read a varint
// there), in any position among the debug annotations, on scoped slices,
// explicit begins and instants; a scoped slice's end carries none.
TEST_F(TrackEventTracksTest, FlowIdsOnEveryKindOfEvent) {
  SetCategoriesEnabled("tracks.a");
  PacketCapture capture;
  {
    ScopedThreadWriter bind(capture.writer());
    { RT_TRACE_EVENT("tracks.a", "Submit", Flow::Global(42), "n", 1); }
    RT_TRACE_INSTANT("tracks.a", "Step", "a", 2, Flow::Global(42),
                     Flow::Global(0xffffffffffffffffull));
    RT_TRACE_EVENT_BEGIN("tracks.a", "Done", TerminatingFlow::Global(42),
                         TerminatingFlow::Global(0xffffffffffffffffull));
    RT_TRACE_EVENT_END("tracks.a");
  }
  const std::vector<pb::TracePacket> p = Parse(&capture);
  ASSERT_EQ(p.size(), 7u);  // 2 descriptors, begin, end, instant, begin, end

  const pb::TrackEvent& submit = p[2].track_event();
  EXPECT_EQ(submit.type(), pb::TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(submit.name(), "Submit");
  ASSERT_EQ(submit.flow_ids_size(), 1);
  EXPECT_EQ(submit.flow_ids(0), 42u);
  EXPECT_EQ(submit.terminating_flow_ids_size(), 0);
  ASSERT_EQ(submit.debug_annotations_size(), 1);
  EXPECT_EQ(submit.debug_annotations(0).name(), "n");
  EXPECT_EQ(submit.debug_annotations(0).int_value(), 1);

  const pb::TrackEvent& submit_end = p[3].track_event();
  EXPECT_EQ(submit_end.type(), pb::TrackEvent::TYPE_SLICE_END);
  EXPECT_EQ(submit_end.flow_ids_size(), 0);

  const pb::TrackEvent& step = p[4].track_event();
  EXPECT_EQ(step.type(), pb::TrackEvent::TYPE_INSTANT);
  ASSERT_EQ(step.flow_ids_size(), 2);
  EXPECT_EQ(step.flow_ids(0), 42u);
  EXPECT_EQ(step.flow_ids(1), 0xffffffffffffffffull);
  ASSERT_EQ(step.debug_annotations_size(), 1);
  EXPECT_EQ(step.debug_annotations(0).name(), "a");
  EXPECT_EQ(step.debug_annotations(0).int_value(), 2);

  const pb::TrackEvent& done = p[5].track_event();
  EXPECT_EQ(done.type(), pb::TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(done.name(), "Done");
  EXPECT_EQ(done.flow_ids_size(), 0);
  ASSERT_EQ(done.terminating_flow_ids_size(), 2);
  EXPECT_EQ(done.terminating_flow_ids(0), 42u);
  EXPECT_EQ(done.terminating_flow_ids(1), 0xffffffffffffffffull);
  EXPECT_EQ(done.debug_annotations_size(), 0);
  for (size_t i = 2; i < p.size(); i++) {
    EXPECT_EQ(p[i].track_event().track_uuid(), ThisThreadTrack()) << i;
    EXPECT_EQ(p[i].track_event().unknown_fields().field_count(), 0) << i;
  }
}

// RT_TRACE_EVENT_END takes flows and debug annotations too, after its
// optional Track: on the thread track and on an app track.
TEST_F(TrackEventTracksTest, SliceEndsCarryFlowsAndAnnotations) {
  SetCategoriesEnabled("tracks.a");
  constexpr Track kJobs(0x10b5, "jobs");
  PacketCapture capture;
  {
    ScopedThreadWriter bind(capture.writer());
    RT_TRACE_EVENT_BEGIN("tracks.a", "Work", Flow::Global(9));
    RT_TRACE_EVENT_END("tracks.a", TerminatingFlow::Global(9), "result", 3);
    RT_TRACE_EVENT_BEGIN("tracks.a", "Job", kJobs);
    RT_TRACE_EVENT_END("tracks.a", kJobs, Flow::Global(10));
  }
  const std::vector<pb::TracePacket> p = Parse(&capture);
  // Descriptors, Work begin and end, the track, Job begin and end.
  ASSERT_EQ(p.size(), 7u);
  ASSERT_EQ(p[2].track_event().flow_ids_size(), 1);
  EXPECT_EQ(p[2].track_event().flow_ids(0), 9u);
  const pb::TrackEvent& work_end = p[3].track_event();
  EXPECT_EQ(work_end.type(), pb::TrackEvent::TYPE_SLICE_END);
  EXPECT_EQ(work_end.track_uuid(), ThisThreadTrack());
  EXPECT_EQ(work_end.flow_ids_size(), 0);
  ASSERT_EQ(work_end.terminating_flow_ids_size(), 1);
  EXPECT_EQ(work_end.terminating_flow_ids(0), 9u);
  ASSERT_EQ(work_end.debug_annotations_size(), 1);
  EXPECT_EQ(work_end.debug_annotations(0).name(), "result");
  EXPECT_EQ(work_end.debug_annotations(0).int_value(), 3);
  ExpectAppTrackDescriptor(p[4], kJobs.uuid(), ProcessTrackUuid(), "jobs");
  EXPECT_EQ(p[5].track_event().type(), pb::TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(p[5].track_event().flow_ids_size(), 0);
  const pb::TrackEvent& job_end = p[6].track_event();
  EXPECT_EQ(job_end.type(), pb::TrackEvent::TYPE_SLICE_END);
  EXPECT_EQ(job_end.track_uuid(), kJobs.uuid());
  ASSERT_EQ(job_end.flow_ids_size(), 1);
  EXPECT_EQ(job_end.flow_ids(0), 10u);
  EXPECT_EQ(job_end.debug_annotations_size(), 0);
}

// Process-scoped ids are this process's: stable, distinct per id, not the
// raw id; TerminatingFlow and FromPointer agree with Flow.
TEST_F(TrackEventTracksTest, ProcessScopedFlowIds) {
  const uint64_t seven = Flow::ProcessScoped(7).id();
  EXPECT_EQ(Flow::ProcessScoped(7).id(), seven);
  EXPECT_NE(seven, 7u);
  EXPECT_NE(Flow::ProcessScoped(8).id(), seven);
  EXPECT_EQ(TerminatingFlow::ProcessScoped(7).id(), seven);
  int object = 0;
  EXPECT_EQ(Flow::FromPointer(&object).id(),
            Flow::ProcessScoped(reinterpret_cast<uintptr_t>(&object)).id());
  EXPECT_EQ(TerminatingFlow::FromPointer(&object).id(),
            Flow::FromPointer(&object).id());
  static_assert(Flow::Global(7).id() == 7, "global ids are the app's");
  static_assert(TerminatingFlow::Global(7).id() == 7, "");
}

// An app track's descriptor is written once per sequence, before its first
// event; every event on it carries its uuid; it is a child of the process
// track; a scoped slice on it begins and ends there.
TEST_F(TrackEventTracksTest, AppTrackDescriptorOnceAndEventsCarryItsUuid) {
  SetCategoriesEnabled("tracks.a");
  constexpr Track kNet(0x5eed, "net");
  PacketCapture capture;
  {
    ScopedThreadWriter bind(capture.writer());
    RT_TRACE_INSTANT("tracks.a", "Send", kNet, "bytes", 10u);
    RT_TRACE_INSTANT("tracks.a", "Thread");
    { RT_TRACE_EVENT("tracks.a", "Parse", kNet, Flow::Global(5)); }
  }
  const std::vector<pb::TracePacket> p = Parse(&capture);
  ASSERT_EQ(p.size(), 7u);
  ExpectAppTrackDescriptor(p[2], kNet.uuid(), ProcessTrackUuid(), "net");
  const pb::TrackEvent& send = p[3].track_event();
  EXPECT_EQ(send.type(), pb::TrackEvent::TYPE_INSTANT);
  EXPECT_EQ(send.name(), "Send");
  EXPECT_EQ(send.track_uuid(), kNet.uuid());
  ASSERT_EQ(send.debug_annotations_size(), 1);
  EXPECT_EQ(send.debug_annotations(0).uint_value(), 10u);
  EXPECT_EQ(p[4].track_event().track_uuid(), ThisThreadTrack());
  EXPECT_EQ(p[5].track_event().type(), pb::TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(p[5].track_event().name(), "Parse");
  EXPECT_EQ(p[5].track_event().track_uuid(), kNet.uuid());
  ASSERT_EQ(p[5].track_event().flow_ids_size(), 1);
  EXPECT_EQ(p[5].track_event().flow_ids(0), 5u);
  EXPECT_EQ(p[6].track_event().type(), pb::TrackEvent::TYPE_SLICE_END);
  EXPECT_EQ(p[6].track_event().track_uuid(), kNet.uuid());
}

// Track(id) is of this process, as Perfetto's: its uuid mixes the id with
// the process track's uuid, so a second process (a forked child here, with
// its own pid) gets another uuid for the same id, and neither is the bare
// id. Global(uuid) is the same everywhere.
TEST_F(TrackEventTracksTest, TrackIdsAreScopedToTheProcess) {
  constexpr Track kRequests(0xabc123, "requests");
  constexpr Track kShared = Track::Global(0xabc123, "shared");
  static_assert(kRequests.id() == 0xabc123, "the id is kept as given");
  EXPECT_EQ(kRequests.uuid(), ProcessScopedTrackUuid(0xabc123));
  EXPECT_NE(kRequests.uuid(), 0xabc123u);
  EXPECT_EQ(kRequests.uuid() >> 62, 0u);
  EXPECT_NE(kRequests.uuid(), Track(0xabc124).uuid());
  EXPECT_NE(kRequests.uuid(), Track::Named("requests", 0xabc123).uuid());
  EXPECT_EQ(kShared.uuid(), 0xabc123u);
  EXPECT_EQ(Track().uuid(), 0u);

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const uint64_t uuids[2] = {kRequests.uuid(), kShared.uuid()};
    const bool ok = write(fds[1], uuids, sizeof(uuids)) ==
                    static_cast<ssize_t>(sizeof(uuids));
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  uint64_t in_child[2] = {0, 0};
  EXPECT_EQ(read(fds[0], in_child, sizeof(in_child)),
            static_cast<ssize_t>(sizeof(in_child)));
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_NE(in_child[0], kRequests.uuid()) << "two processes, one track";
  EXPECT_NE(in_child[0], 0u);
  EXPECT_EQ(in_child[1], kShared.uuid()) << "a global track is shared";
}

// Global tracks have no parent; Named() derives distinct uuids per (name,
// id), stable, tagged 0 in the top two bits (no process, thread or counter
// uuid has that tag).
TEST_F(TrackEventTracksTest, GlobalAndNamedTracks) {
  SetCategoriesEnabled("tracks.a");
  constexpr Track kAll = Track::Global(0xabc, "all");
  const Track one = Track::Named("request", 1);
  EXPECT_EQ(one.uuid(), Track::Named("request", 1).uuid());
  EXPECT_NE(one.uuid(), Track::Named("request", 2).uuid());
  EXPECT_NE(one.uuid(), Track::Named("response", 1).uuid());
  EXPECT_EQ(one.uuid() >> 62, 0u);
  EXPECT_NE(one.uuid(), 0u);
  EXPECT_FALSE(one.global());
  EXPECT_TRUE(kAll.global());
  PacketCapture capture;
  {
    ScopedThreadWriter bind(capture.writer());
    RT_TRACE_INSTANT("tracks.a", "Everywhere", kAll);
    RT_TRACE_INSTANT("tracks.a", "Request", one);
  }
  const std::vector<pb::TracePacket> p = Parse(&capture);
  ASSERT_EQ(p.size(), 6u);
  ExpectAppTrackDescriptor(p[2], 0xabc, 0, "all");
  EXPECT_EQ(p[3].track_event().track_uuid(), 0xabcu);
  ExpectAppTrackDescriptor(p[4], one.uuid(), ProcessTrackUuid(), "request");
  EXPECT_EQ(p[5].track_event().track_uuid(), one.uuid());
}

// After each incremental-state clear the track's descriptor is written
// again before the next event on it (a clear at every event here: a byte
// period of 1).
TEST_F(TrackEventTracksTest, AppTrackDescriptorAgainAfterEveryClear) {
  SetCategoriesEnabled("tracks.a");
  const IncrementalStateConfig saved = GetIncrementalStateConfig();
  SetIncrementalStateConfig({/*period_ms=*/0, /*period_bytes=*/1});
  constexpr Track kTrack(0x77, "jobs");
  PacketCapture capture;
  uint64_t clears = 0;
  {
    ScopedThreadWriter bind(capture.writer());
    for (int i = 0; i < 3; i++)
      RT_TRACE_INSTANT("tracks.a", "Job", kTrack, "i", i);
    clears = bind.clears();
  }
  SetIncrementalStateConfig(saved);
  EXPECT_EQ(clears, 3u);
  const std::vector<pb::TracePacket> p = Parse(&capture);
  // Per generation: process (CLEARED), thread, the track, the event.
  ASSERT_EQ(p.size(), 12u);
  for (size_t g = 0; g < 3; g++) {
    const size_t base = g * 4;
    EXPECT_EQ(
        p[base].sequence_flags(),
        static_cast<uint32_t>(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED));
    EXPECT_TRUE(p[base].track_descriptor().has_process());
    EXPECT_TRUE(p[base + 1].track_descriptor().has_thread());
    ExpectAppTrackDescriptor(p[base + 2], kTrack.uuid(), ProcessTrackUuid(),
                             "jobs");
    EXPECT_EQ(p[base + 3].track_event().track_uuid(), kTrack.uuid());
    EXPECT_EQ(p[base + 3].track_event().name(), "Job");
    EXPECT_EQ(p[base + 3].track_event().debug_annotations(0).int_value(),
              static_cast<int64_t>(g));
  }
}

// An async slice: begun on one thread, ended on another, each thread's
// sequence describing the track before using it.
TEST_F(TrackEventTracksTest, AsyncSliceBeginsAndEndsOnDifferentThreads) {
  SetCategoriesEnabled("tracks.a");
  constexpr Track kRequests(0x1234, "requests");
  PacketCapture begin_capture;
  PacketCapture end_capture;
  uint64_t begin_thread = 0;
  uint64_t end_thread = 0;
  std::thread([&] {
    ScopedThreadWriter bind(begin_capture.writer());
    begin_thread = bind.thread_track_uuid();
    RT_TRACE_EVENT_BEGIN("tracks.a", "Fetch", kRequests, "id", 7);
  }).join();
  std::thread([&] {
    ScopedThreadWriter bind(end_capture.writer());
    end_thread = bind.thread_track_uuid();
    RT_TRACE_EVENT_END("tracks.a", kRequests);
  }).join();
  EXPECT_NE(begin_thread, end_thread);

  const std::vector<pb::TracePacket> b = Parse(&begin_capture);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[1].track_descriptor().uuid(), begin_thread);
  ExpectAppTrackDescriptor(b[2], kRequests.uuid(), ProcessTrackUuid(),
                           "requests");
  EXPECT_EQ(b[3].track_event().type(), pb::TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(b[3].track_event().name(), "Fetch");
  EXPECT_EQ(b[3].track_event().track_uuid(), kRequests.uuid());

  const std::vector<pb::TracePacket> e = Parse(&end_capture);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[1].track_descriptor().uuid(), end_thread);
  ExpectAppTrackDescriptor(e[2], kRequests.uuid(), ProcessTrackUuid(),
                           "requests");
  EXPECT_EQ(e[3].track_event().type(), pb::TrackEvent::TYPE_SLICE_END);
  EXPECT_EQ(e[3].track_event().track_uuid(), kRequests.uuid());
  EXPECT_GE(e[3].timestamp(), b[3].timestamp());
}

// A disabled category evaluates neither the track nor the flows.
TEST_F(TrackEventTracksTest, DisabledEventEvaluatesNoArgument) {
  SetCategoriesEnabled("tracks.b");
  int evaluated = 0;
  const auto track = [&] {
    evaluated++;
    return Track(1, "t");
  };
  const auto flow = [&] {
    evaluated++;
    return Flow::Global(1);
  };
  PacketCapture capture;
  {
    ScopedThreadWriter bind(capture.writer());
    RT_TRACE_EVENT("tracks.a", "Off", track(), flow());
    RT_TRACE_INSTANT("tracks.a", "Off", track(), flow());
    RT_TRACE_EVENT_BEGIN("tracks.a", "Off", track());
    RT_TRACE_EVENT_END("tracks.a", track());
  }
  EXPECT_EQ(evaluated, 0);
  EXPECT_EQ(Parse(&capture).size(), 2u);  // the descriptors only
}

// Through a session's instance: two threads of the instance, an async slice
// from one to the other and a flow from an instant on one thread to the
// slice's end. Each thread's sequence describes the track. With
// $RT_TRACK_EVENT_TRACKS_TRACE_OUT set, the sequences are also written as a
// trace file (each packet with its sequence id and pid, as the service
// writes them) for tools/check-trace.
TEST_F(TrackEventTracksTest, InstanceSequencesDescribeTheTrackOnEachThread) {
  RingCapture capture;
  InstanceConfig config;
  config.categories.enabled_categories = {"tracks.*"};
  config.categories.disabled_categories = {"*"};
  config.new_writer = capture.Factory(1);
  base::Status status;
  const InstanceHandle instance = StartInstance(std::move(config), &status);
  ASSERT_TRUE(instance.valid()) << status.message();
  const Track request = Track::Named("request", 99);
  std::thread([&] {
    { RT_TRACE_EVENT("tracks.a", "Prepare", "step", 1); }
    RT_TRACE_EVENT_BEGIN("tracks.a", "Request", request,
                         Flow::ProcessScoped(1));
    RT_TRACE_INSTANT("tracks.b", "Handoff", Flow::ProcessScoped(2));
  }).join();
  std::thread([&] {
    {
      RT_TRACE_EVENT("tracks.b", "Receive", TerminatingFlow::ProcessScoped(2));
    }
    RT_TRACE_EVENT_END("tracks.a", request);
    RT_TRACE_INSTANT("tracks.a", "Finished", request,
                     TerminatingFlow::ProcessScoped(1));
  }).join();
  StopInstance(instance);

  const std::map<shm_ring::WriterID, RingCapture::Sequence> sequences =
      capture.Drain();
  ASSERT_EQ(sequences.size(), 2u);
  std::vector<const RingCapture::Sequence*> ordered;
  for (const auto& [id, sequence] : sequences)
    ordered.push_back(&sequence);
  // Writer ids are given in creation order: the first thread's first.
  const std::vector<pb::TracePacket>& first = ordered[0]->packets;
  const std::vector<pb::TracePacket>& second = ordered[1]->packets;
  // Process, thread, Prepare begin/end, the track, Request, Handoff.
  ASSERT_EQ(first.size(), 7u);
  EXPECT_EQ(first[2].track_event().name(), "Prepare");
  ExpectAppTrackDescriptor(first[4], request.uuid(), ProcessTrackUuid(),
                           "request");
  EXPECT_EQ(first[5].track_event().type(), pb::TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(first[5].track_event().track_uuid(), request.uuid());
  ASSERT_EQ(first[5].track_event().flow_ids_size(), 1);
  EXPECT_EQ(first[5].track_event().flow_ids(0), Flow::ProcessScoped(1).id());
  ASSERT_EQ(first[6].track_event().flow_ids_size(), 1);
  EXPECT_EQ(first[6].track_event().flow_ids(0), Flow::ProcessScoped(2).id());
  // Process, thread, Receive begin/end, the track, Request end, Finished.
  ASSERT_EQ(second.size(), 7u);
  ASSERT_EQ(second[2].track_event().terminating_flow_ids_size(), 1);
  EXPECT_EQ(second[2].track_event().terminating_flow_ids(0),
            Flow::ProcessScoped(2).id());
  ExpectAppTrackDescriptor(second[4], request.uuid(), ProcessTrackUuid(),
                           "request");
  EXPECT_EQ(second[5].track_event().type(), pb::TrackEvent::TYPE_SLICE_END);
  EXPECT_EQ(second[5].track_event().track_uuid(), request.uuid());
  EXPECT_EQ(second[6].track_event().track_uuid(), request.uuid());
  ASSERT_EQ(second[6].track_event().terminating_flow_ids_size(), 1);
  EXPECT_EQ(second[6].track_event().terminating_flow_ids(0),
            Flow::ProcessScoped(1).id());

  if (const char* out = getenv("RT_TRACK_EVENT_TRACKS_TRACE_OUT")) {
    pb::Trace trace;
    uint32_t sequence_id = 1;
    for (const auto& [id, sequence] : sequences) {
      for (pb::TracePacket packet : sequence.packets) {
        packet.set_trusted_packet_sequence_id(sequence_id);
        packet.set_trusted_pid(getpid());
        *trace.add_packet() = packet;
      }
      sequence_id++;
    }
    std::ofstream(out, std::ios::binary) << trace.SerializeAsString();
  }
}

// Counters on app counter tracks: a process track with a unit (the same
// uuid as the bare name's track), a global one without a parent, int and
// double values, each descriptor once per generation and again after a
// clear, written before the first value on the track.
TEST_F(TrackEventTracksTest, CounterTracksWithUnitsProcessAndGlobal) {
  SetCategoriesEnabled("tracks.a");
  constexpr CounterTrack kQueue("queue_depth", CounterTrack::Unit::UNIT_COUNT);
  constexpr CounterTrack kFree =
      CounterTrack::Global("free_bytes", CounterTrack::Unit::UNIT_SIZE_BYTES);
  PacketCapture capture;
  uint64_t clears = 0;
  {
    ScopedThreadWriter bind(capture.writer());
    RT_TRACE_COUNTER("tracks.a", kQueue, 3);
    RT_TRACE_COUNTER("tracks.a", kFree, 4096.5);
    RT_TRACE_COUNTER("tracks.a", kQueue, 4);
    clears = bind.clears();
  }
  EXPECT_EQ(clears, 1u);
  const std::vector<pb::TracePacket> p = Parse(&capture);
  // process, thread, queue's descriptor, 3, free's descriptor, 4096.5, 4.
  ASSERT_EQ(p.size(), 7u);
  const uint64_t queue_uuid = CounterTrackUuid("queue_depth");
  const uint64_t free_uuid = GlobalCounterTrackUuid("free_bytes");
  EXPECT_NE(queue_uuid, free_uuid);

  const pb::TrackDescriptor& queue = p[2].track_descriptor();
  EXPECT_EQ(queue.uuid(), queue_uuid);
  EXPECT_EQ(queue.parent_uuid(), ProcessTrackUuid());
  EXPECT_EQ(queue.name(), "queue_depth");
  ASSERT_TRUE(queue.has_counter());
  EXPECT_EQ(queue.counter().unit(), pb::CounterDescriptor::UNIT_COUNT);
  EXPECT_EQ(p[3].track_event().type(), pb::TrackEvent::TYPE_COUNTER);
  EXPECT_EQ(p[3].track_event().track_uuid(), queue_uuid);
  EXPECT_EQ(p[3].track_event().counter_value(), 3);
  EXPECT_EQ(p[3].track_event().categories(0), "tracks.a");

  const pb::TrackDescriptor& free = p[4].track_descriptor();
  EXPECT_EQ(free.uuid(), free_uuid);
  EXPECT_FALSE(free.has_parent_uuid());
  EXPECT_EQ(free.name(), "free_bytes");
  EXPECT_EQ(free.counter().unit(), pb::CounterDescriptor::UNIT_SIZE_BYTES);
  EXPECT_EQ(p[5].track_event().track_uuid(), free_uuid);
  EXPECT_EQ(p[5].track_event().double_counter_value(), 4096.5);

  EXPECT_EQ(p[6].track_event().track_uuid(), queue_uuid);
  EXPECT_EQ(p[6].track_event().counter_value(), 4);
}

TEST_F(TrackEventTracksTest, CounterTrackDescriptorAgainAfterEveryClear) {
  SetCategoriesEnabled("tracks.a");
  const IncrementalStateConfig saved = GetIncrementalStateConfig();
  SetIncrementalStateConfig({/*period_ms=*/0, /*period_bytes=*/1});
  constexpr CounterTrack kLoad =
      CounterTrack::Global("load", CounterTrack::Unit::UNIT_COUNT);
  PacketCapture capture;
  uint64_t clears = 0;
  {
    ScopedThreadWriter bind(capture.writer());
    for (int i = 0; i < 3; i++)
      RT_TRACE_COUNTER("tracks.a", kLoad, i);
    clears = bind.clears();
  }
  SetIncrementalStateConfig(saved);
  EXPECT_EQ(clears, 3u);
  const std::vector<pb::TracePacket> p = Parse(&capture);
  // Per generation: process (CLEARED), thread, the track, the value.
  ASSERT_EQ(p.size(), 12u);
  for (size_t g = 0; g < 3; g++) {
    const size_t base = g * 4;
    EXPECT_TRUE(p[base].track_descriptor().has_process());
    EXPECT_EQ(p[base + 2].track_descriptor().uuid(),
              GlobalCounterTrackUuid("load"));
    EXPECT_EQ(p[base + 2].track_descriptor().counter().unit(),
              pb::CounterDescriptor::UNIT_COUNT);
    EXPECT_EQ(p[base + 3].track_event().counter_value(),
              static_cast<int64_t>(g));
  }
}

// A counter named by a string literal is found by its address; one named
// by a buffer is found by its text, so a buffer reused for another name
// gets that name's track, and its descriptor first.
TEST_F(TrackEventTracksTest, CounterNamesByLiteralAndByReusedBuffer) {
  SetCategoriesEnabled("tracks.a");
  PacketCapture capture;
  {
    ScopedThreadWriter bind(capture.writer());
    char name[16] = "rx";
    RT_TRACE_COUNTER("tracks.a", name, 1);
    RT_TRACE_COUNTER("tracks.a", "rx", 2);  // the same track, by text
    snprintf(name, sizeof(name), "tx");
    RT_TRACE_COUNTER("tracks.a", name, 3);
    RT_TRACE_COUNTER("tracks.a", "rx", 4);  // by address now
    const char* dynamic = name;
    RT_TRACE_COUNTER("tracks.a", dynamic, 5);
  }
  const std::vector<pb::TracePacket> p = Parse(&capture);
  // Process, thread, rx's descriptor, 1, 2, tx's descriptor, 3, 4, 5.
  ASSERT_EQ(p.size(), 9u);
  EXPECT_EQ(p[2].track_descriptor().name(), "rx");
  EXPECT_EQ(p[2].track_descriptor().uuid(), CounterTrackUuid("rx"));
  EXPECT_EQ(p[5].track_descriptor().name(), "tx");
  EXPECT_EQ(p[5].track_descriptor().uuid(), CounterTrackUuid("tx"));
  const uint64_t expected_tracks[] = {
      CounterTrackUuid("rx"), CounterTrackUuid("rx"), CounterTrackUuid("tx"),
      CounterTrackUuid("rx"), CounterTrackUuid("tx")};
  const size_t value_packets[] = {3, 4, 6, 7, 8};
  for (size_t i = 0; i < 5; i++) {
    const pb::TrackEvent& event = p[value_packets[i]].track_event();
    EXPECT_EQ(event.type(), pb::TrackEvent::TYPE_COUNTER) << i;
    EXPECT_EQ(event.counter_value(), static_cast<int64_t>(i + 1));
    EXPECT_EQ(event.track_uuid(), expected_tracks[i]) << i;
  }
}

}  // namespace
}  // namespace track_event
}  // namespace ringtrace
