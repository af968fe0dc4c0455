/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The encoder's packets, written through a real TraceWriterV2 into a ring
// and parsed back with the Perfetto protos: proves the field numbers.

#include "src/examples/track_event_writer.h"

#include <gtest/gtest.h>

#include <set>

#include "src/examples/test/trace_reader.h"
#include "src/tracing/core/shm_ring/test_ring.h"

namespace ringtrace {
namespace examples {
namespace {

using perfetto::protos::CounterDescriptor;
using perfetto::protos::TracePacket;
using perfetto::protos::TrackEvent;

constexpr shm_ring::WriterID kWriterId = 3;

TEST(ProducerExampleTrackEventTest, EveryPacketKindParsesAsPerfetto) {
  shm_ring::TestRing ring(4096, 4);
  {
    shm_ring::TraceWriterV2::Options options;
    options.writer_id = kWriterId;
    shm_ring::TraceWriterV2 w(ring.view(), options);
    WriteProcessTrack(&w, 100, 1234, "example", /*first_on_sequence=*/true);
    WriteThreadTrack(&w, 101, 1234, 5678, "worker-0", false);
    WriteCounterTrack(&w, 102, 1234, 5678, "depth");
    WriteSliceBegin(&w, 103, ThreadTrackUuid(1234, 5678), "cat", "frame");
    WriteCounter(&w, 104, CounterTrackUuid(1234, 5678), -7);
    WriteSliceEnd(&w, 105, ThreadTrackUuid(1234, 5678));
  }
  PacketsByWriter all = ReadAllPackets(ring.view());
  const std::vector<TracePacket>& p = all[kWriterId];
  ASSERT_EQ(p.size(), 6u);
  for (size_t i = 0; i < p.size(); ++i)
    EXPECT_EQ(p[i].timestamp(), 100 + i);

  EXPECT_EQ(p[0].sequence_flags(), 1u);  // SEQ_INCREMENTAL_STATE_CLEARED
  ASSERT_TRUE(p[0].has_track_descriptor());
  EXPECT_EQ(p[0].track_descriptor().uuid(), ProcessTrackUuid(1234));
  EXPECT_EQ(p[0].track_descriptor().process().pid(), 1234);
  EXPECT_EQ(p[0].track_descriptor().process().process_name(), "example");

  EXPECT_FALSE(p[1].has_sequence_flags());
  const auto& thread_track = p[1].track_descriptor();
  EXPECT_EQ(thread_track.uuid(), ThreadTrackUuid(1234, 5678));
  EXPECT_EQ(thread_track.parent_uuid(), ProcessTrackUuid(1234));
  EXPECT_EQ(thread_track.thread().pid(), 1234);
  EXPECT_EQ(thread_track.thread().tid(), 5678);
  EXPECT_EQ(thread_track.thread().thread_name(), "worker-0");

  const auto& counter_track = p[2].track_descriptor();
  EXPECT_EQ(counter_track.uuid(), CounterTrackUuid(1234, 5678));
  EXPECT_EQ(counter_track.parent_uuid(), ProcessTrackUuid(1234));
  EXPECT_EQ(counter_track.name(), "depth");
  EXPECT_EQ(counter_track.counter().unit(), CounterDescriptor::UNIT_COUNT);

  ASSERT_TRUE(p[3].has_track_event());
  EXPECT_EQ(p[3].track_event().type(), TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(p[3].track_event().track_uuid(), ThreadTrackUuid(1234, 5678));
  ASSERT_EQ(p[3].track_event().categories_size(), 1);
  EXPECT_EQ(p[3].track_event().categories(0), "cat");
  EXPECT_EQ(p[3].track_event().name(), "frame");

  EXPECT_EQ(p[4].track_event().type(), TrackEvent::TYPE_COUNTER);
  EXPECT_EQ(p[4].track_event().track_uuid(), CounterTrackUuid(1234, 5678));
  EXPECT_EQ(p[4].track_event().counter_value(), -7);

  EXPECT_EQ(p[5].track_event().type(), TrackEvent::TYPE_SLICE_END);
  EXPECT_EQ(p[5].track_event().track_uuid(), ThreadTrackUuid(1234, 5678));
  EXPECT_FALSE(p[5].track_event().has_name());
}

TEST(ProducerExampleTrackEventTest, TrackUuidsAreDistinct) {
  std::set<uint64_t> uuids;
  for (int32_t pid : {1, 2, 4194304}) {
    uuids.insert(ProcessTrackUuid(pid));
    for (int64_t tid : {1, 2, 4194304}) {
      uuids.insert(ThreadTrackUuid(pid, tid));
      uuids.insert(CounterTrackUuid(pid, tid));
    }
  }
  EXPECT_EQ(uuids.size(), 3u + 2 * 9u);
}

}  // namespace
}  // namespace examples
}  // namespace ringtrace
