/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Categories for this test only (see RT_TRACK_EVENT_NAMESPACE).
#define RT_TRACK_EVENT_NAMESPACE rt_track_event_unittest_categories

#include "ringtrace/track_event.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"
#include "src/base/test/temp_dir.h"
#include "src/base/test/trace_processor_stats.h"
#include "src/tracing/core/encoding/test/packet_capture.h"
#include "src/tracing/track_event/test/sequence_reader.h"

RT_DEFINE_CATEGORIES("test.gfx", "test.io", "test.off", "other");

namespace ringtrace {
namespace track_event {
namespace {

namespace pb = perfetto::protos;
using encoding::PacketCapture;

std::vector<pb::TracePacket> ParseRaw(PacketCapture* capture) {
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
  return out;
}

// The packets of |capture|, interned strings resolved.
std::vector<pb::TracePacket> Parse(PacketCapture* capture) {
  std::vector<pb::TracePacket> out = ParseRaw(capture);
  ResolveIncrementalState(&out);
  return out;
}

class TrackEventTest : public testing::Test {
 protected:
  void SetUp() override { SetCategoriesEnabled("-*"); }
  void TearDown() override { SetCategoriesEnabled("-*"); }
};

// The two descriptors every binding writes first; returns the thread track.
uint64_t CheckDescriptors(const std::vector<pb::TracePacket>& packets) {
  EXPECT_GE(packets.size(), 2u);
  if (packets.size() < 2)
    return 0;
  const pb::TracePacket& process = packets[0];
  EXPECT_EQ(
      process.sequence_flags(),
      static_cast<uint32_t>(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED));
  EXPECT_EQ(process.track_descriptor().uuid(), ProcessTrackUuid());
  EXPECT_EQ(process.track_descriptor().process().pid(), getpid());
  EXPECT_EQ(process.track_descriptor().process().process_name(),
            program_invocation_short_name);
  const pb::TrackDescriptor& thread = packets[1].track_descriptor();
  const int64_t tid = static_cast<int64_t>(syscall(SYS_gettid));
  char name[17] = {};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  EXPECT_EQ(thread.uuid(), ThreadTrackUuid(tid));
  EXPECT_EQ(thread.parent_uuid(), ProcessTrackUuid());
  EXPECT_EQ(thread.thread().pid(), getpid());
  EXPECT_EQ(thread.thread().tid(), tid);
  EXPECT_EQ(thread.thread().thread_name(), name);
  return thread.uuid();
}

TEST_F(TrackEventTest, DisabledCategoryWritesNothingAndSkipsArguments) {
  PacketCapture capture;
  int evaluated = 0;
  {
    ScopedThreadWriter bind(capture.writer());
    SetCategoriesEnabled("test.io");  // another category
    RT_TRACE_EVENT("test.gfx", "Draw", "n", ++evaluated);
    RT_TRACE_COUNTER("test.gfx", "depth", ++evaluated);
  }
  EXPECT_EQ(evaluated, 0);
  const std::vector<pb::TracePacket> packets = Parse(&capture);
  ASSERT_EQ(packets.size(), 2u);  // the descriptors only
  CheckDescriptors(packets);
}

TEST_F(TrackEventTest, ScopedSliceWithEveryArgumentType) {
  SetCategoriesEnabled("test.gfx");
  PacketCapture capture;
  int dummy = 0;
  {
    ScopedThreadWriter bind(capture.writer());
    {
      RT_TRACE_EVENT("test.gfx", "Draw", "frame", 7, "u", 3u, "ok", true,
                     "ratio", 0.5, "label", "x", "s", std::string("str"), "ptr",
                     &dummy);
      RT_TRACE_EVENT("test.gfx", "Inner");
    }
  }
  const std::vector<pb::TracePacket> packets = Parse(&capture);
  ASSERT_EQ(packets.size(), 6u);
  const uint64_t track = CheckDescriptors(packets);

  const pb::TracePacket& begin = packets[2];
  EXPECT_GT(begin.timestamp(), 0u);
  const pb::TrackEvent& e = begin.track_event();
  EXPECT_EQ(e.type(), pb::TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(e.name(), "Draw");
  ASSERT_EQ(e.categories_size(), 1);
  EXPECT_EQ(e.categories(0), "test.gfx");
  EXPECT_EQ(e.track_uuid(), track);
  ASSERT_EQ(e.debug_annotations_size(), 7);
  EXPECT_EQ(e.debug_annotations(0).name(), "frame");
  EXPECT_EQ(e.debug_annotations(0).int_value(), 7);
  EXPECT_EQ(e.debug_annotations(1).name(), "u");
  EXPECT_EQ(e.debug_annotations(1).uint_value(), 3u);
  EXPECT_EQ(e.debug_annotations(2).name(), "ok");
  EXPECT_TRUE(e.debug_annotations(2).bool_value());
  EXPECT_EQ(e.debug_annotations(3).double_value(), 0.5);
  EXPECT_EQ(e.debug_annotations(4).string_value(), "x");
  EXPECT_EQ(e.debug_annotations(5).string_value(), "str");
  EXPECT_EQ(e.debug_annotations(6).name(), "ptr");
  EXPECT_EQ(e.debug_annotations(6).pointer_value(),
            reinterpret_cast<uintptr_t>(&dummy));

  // Inner begins after Draw and ends first (scopes end in reverse order).
  EXPECT_EQ(packets[3].track_event().type(), pb::TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(packets[3].track_event().name(), "Inner");
  for (size_t i = 4; i < 6; i++) {
    EXPECT_EQ(packets[i].track_event().type(), pb::TrackEvent::TYPE_SLICE_END);
    EXPECT_EQ(packets[i].track_event().track_uuid(), track);
    EXPECT_FALSE(packets[i].track_event().has_name_iid());
  }
  for (size_t i = 3; i < 6; i++)
    EXPECT_GE(packets[i].timestamp(), packets[i - 1].timestamp());
}

// Each string goes into interned_data once per generation, with the first
// event that uses it; later events carry the iid only. Names and categories
// are interned by content too, so a copy of a string gets the same iid.
TEST_F(TrackEventTest, StringsAreInternedOncePerGeneration) {
  SetCategoriesEnabled("test.gfx");
  PacketCapture capture;
  const std::string copy = "Draw";
  {
    ScopedThreadWriter bind(capture.writer());
    for (int i = 0; i < 3; i++)
      RT_TRACE_INSTANT("test.gfx", "Draw", "frame", i);
    RT_TRACE_INSTANT("test.gfx", copy.c_str(), "frame", 9);
    EXPECT_EQ(bind.clears(), 1u);
  }
  std::vector<pb::TracePacket> packets = ParseRaw(&capture);
  // The clear packet, the two descriptors, the four events.
  ASSERT_EQ(packets.size(), 7u);
  const pb::InternedData& first = packets[3].interned_data();
  ASSERT_EQ(first.event_names_size(), 1);
  EXPECT_EQ(first.event_names(0).name(), "Draw");
  ASSERT_EQ(first.event_categories_size(), 1);
  EXPECT_EQ(first.event_categories(0).name(), "test.gfx");
  ASSERT_EQ(first.debug_annotation_names_size(), 1);
  EXPECT_EQ(first.debug_annotation_names(0).name(), "frame");
  for (size_t i = 4; i < 7; i++) {
    EXPECT_FALSE(packets[i].has_interned_data()) << i;
    EXPECT_EQ(packets[i].track_event().name_iid(), first.event_names(0).iid());
    EXPECT_FALSE(packets[i].track_event().has_name());
    EXPECT_EQ(packets[i].track_event().type(), pb::TrackEvent::TYPE_INSTANT);
  }
  EXPECT_EQ(ResolveIncrementalState(&packets), 1);
  ASSERT_EQ(packets.size(), 6u);  // the clear packet folded
  EXPECT_EQ(packets[5].track_event().name(), "Draw");
  EXPECT_EQ(packets[5].track_event().debug_annotations(0).name(), "frame");
  EXPECT_EQ(packets[5].track_event().debug_annotations(0).int_value(), 9);
}

// Names known at run time: std::string, std::string_view and DynamicString
// are written as they are, in TrackEvent.name, on every event (the buffer
// may change between events); a literal and a StaticString are interned.
TEST_F(TrackEventTest, DynamicNamesAreWrittenAsTheyAre) {
  SetCategoriesEnabled("test.gfx");
  PacketCapture capture;
  static const char kStatic[] = "Static";
  {
    ScopedThreadWriter bind(capture.writer());
    std::string name = "Frame 1";
    {
      RT_TRACE_EVENT("test.gfx", name, "i", 1);
      name = "Frame 2";  // after the call: the begin keeps "Frame 1"
    }
    RT_TRACE_EVENT_BEGIN("test.gfx", std::string_view(name).substr(0, 5));
    RT_TRACE_EVENT_END("test.gfx");
    RT_TRACE_INSTANT("test.gfx", DynamicString{name});
    RT_TRACE_INSTANT("test.gfx", std::string("temp"));
    RT_TRACE_INSTANT("test.gfx", StaticString{&kStatic[0]});
    RT_TRACE_INSTANT("test.gfx", "Literal");
    RT_TRACE_INSTANT("test.gfx", DynamicString{std::string_view()});
    RT_TRACE_INSTANT("test.gfx", std::string_view());
  }
  std::vector<pb::TracePacket> packets = ParseRaw(&capture);
  // The clear packet, two descriptors, ten events.
  ASSERT_EQ(packets.size(), 13u);
  struct Expected {
    size_t index;
    const char* name;
  };
  for (const Expected& e :
       {Expected{3, "Frame 1"}, Expected{5, "Frame"}, Expected{7, "Frame 2"},
        Expected{8, "temp"}, Expected{11, ""}}) {
    const pb::TrackEvent& event = packets[e.index].track_event();
    EXPECT_TRUE(event.has_name()) << e.index;
    EXPECT_EQ(event.name(), e.name) << e.index;
    EXPECT_FALSE(event.has_name_iid()) << e.index;
  }
  EXPECT_EQ(packets[3].track_event().debug_annotations(0).int_value(), 1);
  for (size_t i : {9u, 10u}) {
    EXPECT_FALSE(packets[i].track_event().has_name()) << i;
    EXPECT_NE(packets[i].track_event().name_iid(), 0u) << i;
  }
  // No interned event name but the two interned ones.
  size_t interned_names = 0;
  for (const pb::TracePacket& p : packets)
    interned_names += static_cast<size_t>(p.interned_data().event_names_size());
  EXPECT_EQ(interned_names, 2u);
  ResolveIncrementalState(&packets);
  EXPECT_EQ(packets[8].track_event().name(), "Static");
  EXPECT_EQ(packets[9].track_event().name(), "Literal");
}

// A generation starts with one packet on CLOCK_BOOTTIME that carries
// SEQ_INCREMENTAL_STATE_CLEARED, the sequence's defaults (the incremental
// clock, the thread track) and the snapshot that starts the incremental
// clock; later packets carry deltas on it, and thread-track events no
// track uuid. A timestamp before the clock's value is written absolute.
TEST_F(TrackEventTest, ClearPacketStartsTheGeneration) {
  SetCategoriesEnabled("test.gfx");
  PacketCapture capture;
  const uint64_t before = NowNs();
  uint64_t after = 0;
  {
    ScopedThreadWriter bind(capture.writer());
    RT_TRACE_INSTANT("test.gfx", "A");
    RT_TRACE_INSTANT("test.gfx", "B", Track::Named("app"));
    after = NowNs();
    // An event stamped before the latest one (as a caller's own clock
    // reading might be).
    bind.MaybeClear(before - 1);
    auto handle = bind.writer()->NewTracePacket();
    perfetto::protos::rtzero::TracePacket late(handle);
    bind.WriteEventPrologue(late, before - 1);
  }
  std::vector<pb::TracePacket> packets = ParseRaw(&capture);
  ASSERT_EQ(packets.size(), 7u);
  const pb::TracePacket& clear = packets[0];
  EXPECT_EQ(
      clear.sequence_flags(),
      static_cast<uint32_t>(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED));
  EXPECT_EQ(clear.timestamp_clock_id(),
            static_cast<uint32_t>(pb::BUILTIN_CLOCK_BOOTTIME));
  EXPECT_GE(clear.timestamp(), before);
  const uint64_t thread_track =
      ThreadTrackUuid(static_cast<int64_t>(syscall(SYS_gettid)));
  EXPECT_EQ(clear.trace_packet_defaults().timestamp_clock_id(), 64u);
  EXPECT_EQ(clear.trace_packet_defaults().track_event_defaults().track_uuid(),
            thread_track);
  ASSERT_EQ(clear.clock_snapshot().clocks_size(), 2);
  EXPECT_EQ(clear.clock_snapshot().clocks(0).clock_id(), 64u);
  EXPECT_TRUE(clear.clock_snapshot().clocks(0).is_incremental());
  EXPECT_EQ(clear.clock_snapshot().clocks(0).timestamp(), clear.timestamp());
  EXPECT_EQ(clear.clock_snapshot().clocks(1).clock_id(),
            static_cast<uint32_t>(pb::BUILTIN_CLOCK_BOOTTIME));
  EXPECT_EQ(clear.clock_snapshot().clocks(1).timestamp(), clear.timestamp());
  // Descriptors, A, B's track descriptor, B: deltas on the default clock.
  uint64_t clock = clear.timestamp();
  for (size_t i = 1; i < 6; i++) {
    EXPECT_FALSE(packets[i].has_timestamp_clock_id()) << i;
    clock += packets[i].timestamp();
  }
  EXPECT_LE(clock, after);
  EXPECT_FALSE(packets[3].track_event().has_track_uuid());  // A
  EXPECT_EQ(packets[5].track_event().track_uuid(), Track::Named("app").uuid());
  // The late packet: absolute, on CLOCK_BOOTTIME.
  EXPECT_EQ(packets[6].timestamp_clock_id(),
            static_cast<uint32_t>(pb::BUILTIN_CLOCK_BOOTTIME));
  EXPECT_EQ(packets[6].timestamp(), before - 1);

  EXPECT_EQ(ResolveIncrementalState(&packets), 1);
  ASSERT_EQ(packets.size(), 6u);
  EXPECT_EQ(packets[2].track_event().track_uuid(), thread_track);
  EXPECT_EQ(packets[4].timestamp(), clock);
  EXPECT_EQ(packets[5].timestamp(), before - 1);
}

// RT_TRACE_EVENT_BEGIN/END pair on the thread track.
TEST_F(TrackEventTest, ExplicitBeginAndEnd) {
  SetCategoriesEnabled("test.gfx");
  PacketCapture capture;
  {
    ScopedThreadWriter bind(capture.writer());
    RT_TRACE_EVENT_BEGIN("test.gfx", "Load", "bytes", 10u);
    RT_TRACE_EVENT_END("test.gfx");
  }
  const std::vector<pb::TracePacket> packets = Parse(&capture);
  ASSERT_EQ(packets.size(), 4u);
  const uint64_t track = CheckDescriptors(packets);
  EXPECT_EQ(packets[2].track_event().type(), pb::TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(packets[2].track_event().name(), "Load");
  EXPECT_EQ(packets[2].track_event().debug_annotations(0).uint_value(), 10u);
  EXPECT_EQ(packets[3].track_event().type(), pb::TrackEvent::TYPE_SLICE_END);
  EXPECT_EQ(packets[2].track_event().track_uuid(), track);
  EXPECT_EQ(packets[3].track_event().track_uuid(), track);
}

// Explicit timestamps: each event carries the one it was given, in the
// order written, whether it is later or earlier than the sequence's clock.
TEST_F(TrackEventTest, ExplicitTimestamps) {
  SetCategoriesEnabled("test.gfx");
  PacketCapture capture;
  constexpr Track kTrack(0x7e57, "ts");
  uint64_t t0 = 0;
  {
    ScopedThreadWriter bind(capture.writer());
    t0 = NowNs();
    RT_TRACE_EVENT_BEGIN("test.gfx", "Late", TraceTimestamp{t0 + 5000}, "n", 1);
    RT_TRACE_INSTANT("test.gfx", "Early", TraceTimestamp{t0 - 7000});
    RT_TRACE_EVENT_END("test.gfx", TraceTimestamp{t0 + 9000});
    RT_TRACE_INSTANT("test.gfx", "OnTrack", kTrack, TraceTimestamp{t0 + 1});
    RT_TRACE_EVENT_BEGIN("test.gfx", std::string("Dyn"), kTrack,
                         TraceTimestamp{t0 + 2}, Flow::Global(3));
    RT_TRACE_EVENT_END("test.gfx", kTrack, TraceTimestamp{t0 + 3});
    RT_TRACE_INSTANT("test.gfx", "Now");
  }
  const std::vector<pb::TracePacket> packets = Parse(&capture);
  // Two descriptors, the track's descriptor, seven events.
  ASSERT_EQ(packets.size(), 10u);
  struct Expected {
    size_t index;
    pb::TrackEvent::Type type;
    const char* name;
    uint64_t ts;
  };
  for (const Expected& e :
       {Expected{2, pb::TrackEvent::TYPE_SLICE_BEGIN, "Late", t0 + 5000},
        Expected{3, pb::TrackEvent::TYPE_INSTANT, "Early", t0 - 7000},
        Expected{4, pb::TrackEvent::TYPE_SLICE_END, "", t0 + 9000},
        Expected{6, pb::TrackEvent::TYPE_INSTANT, "OnTrack", t0 + 1},
        Expected{7, pb::TrackEvent::TYPE_SLICE_BEGIN, "Dyn", t0 + 2},
        Expected{8, pb::TrackEvent::TYPE_SLICE_END, "", t0 + 3}}) {
    const pb::TracePacket& p = packets[e.index];
    EXPECT_EQ(p.timestamp(), e.ts) << e.index;
    EXPECT_EQ(p.track_event().type(), e.type) << e.index;
    EXPECT_EQ(p.track_event().name(), e.name) << e.index;
  }
  EXPECT_EQ(packets[2].track_event().debug_annotations(0).int_value(), 1);
  EXPECT_TRUE(packets[5].has_track_descriptor());
  EXPECT_EQ(packets[7].track_event().track_uuid(), kTrack.uuid());
  EXPECT_EQ(packets[7].track_event().flow_ids(0), 3u);
  EXPECT_EQ(packets[8].track_event().track_uuid(), kTrack.uuid());
  // Without one, the event is stamped at the call.
  EXPECT_GE(packets[9].timestamp(), t0);
  EXPECT_EQ(packets[9].track_event().name(), "Now");
}

// App types that write themselves (the WriteIntoTrace extension point).
struct Point {
  int x;
  int y;
  void WriteIntoTrace(TracedValue v) const {
    TracedDictionary dict = std::move(v).WriteDictionary();
    dict.Add("x", x);
    dict.Add("y", y);
  }
};
struct Path {
  std::string label;
  std::vector<Point> points;
  void WriteIntoTrace(TracedValue v) const {
    TracedDictionary dict = std::move(v).WriteDictionary();
    dict.Add("label", label);
    TracedArray array = dict.AddItem("points").WriteArray();
    for (const Point& p : points)
      array.Append(p);
    array.AppendItem().WriteDouble(0.5);  // arrays mix types
  }
};

// Checks |a| holds Point{x, y}.
void ExpectPoint(const pb::DebugAnnotation& a, int64_t x, int64_t y) {
  ASSERT_EQ(a.dict_entries_size(), 2);
  EXPECT_EQ(a.dict_entries(0).name(), "x");
  EXPECT_EQ(a.dict_entries(0).int_value(), x);
  EXPECT_EQ(a.dict_entries(1).name(), "y");
  EXPECT_EQ(a.dict_entries(1).int_value(), y);
}

void ExpectPath(const pb::DebugAnnotation& a) {
  ASSERT_EQ(a.dict_entries_size(), 2);
  EXPECT_EQ(a.dict_entries(0).name(), "label");
  EXPECT_EQ(a.dict_entries(0).string_value(), "zigzag");
  const pb::DebugAnnotation& points = a.dict_entries(1);
  EXPECT_EQ(points.name(), "points");
  ASSERT_EQ(points.array_values_size(), 3);
  ExpectPoint(points.array_values(0), 1, 2);
  ExpectPoint(points.array_values(1), -3, 4);
  EXPECT_EQ(points.array_values(2).double_value(), 0.5);
}

// A lambda as the last argument writes typed TrackEvent fields and debug
// annotations (nested ones too) into the event; it runs only when the
// event is written.
TEST_F(TrackEventTest, LambdaWritesIntoTheEventContext) {
  const Path path{"zigzag", {{1, 2}, {-3, 4}}};
  int calls = 0;
  auto lambda = [&](EventContext ctx) {
    calls++;
    ctx.event().add_flow_ids(42);
    ctx.AddDebugAnnotation("frame", 7);
    ctx.AddDebugAnnotation("path", path);
  };
  PacketCapture capture;
  {
    ScopedThreadWriter bind(capture.writer());
    RT_TRACE_EVENT("test.gfx", "Off", lambda);  // disabled: not called
    EXPECT_EQ(calls, 0);
    SetCategoriesEnabled("test.gfx");
    {
      RT_TRACE_EVENT("test.gfx", "Lambda", "first", 1, lambda);
      EXPECT_EQ(calls, 1);
    }
    RT_TRACE_INSTANT("test.gfx", "Typed", "pt", Point{5, 6},
                     [](EventContext ctx) {
                       ctx.AddDebugAnnotation("list", std::string("l"));
                     });
    RT_TRACE_EVENT_END("test.gfx", [](EventContext ctx) {
      ctx.AddDebugAnnotation("ok", true);
    });
    // The lambda written in the macro (a capture list with a comma).
    int a = 3;  // not constants: the captures are needed
    int b = 4;
    RT_TRACE_EVENT("test.gfx", "Inline", [a, b](EventContext ctx) {
      ctx.AddDebugAnnotation("sum", a + b);
    });
    // (Not "test.*": the other tests count those matches.)
    SetCategoriesEnabled("lambda.dynamic");
    RT_TRACE_EVENT_DYNAMIC(
        std::string("lambda.dynamic"), "InlineDyn",
        [a](EventContext ctx) { ctx.AddDebugAnnotation("a", a); });
  }
  const std::vector<pb::TracePacket> packets = Parse(&capture);
  ASSERT_EQ(packets.size(), 10u);
  EXPECT_EQ(packets[6].track_event().name(), "Inline");
  ASSERT_EQ(packets[6].track_event().debug_annotations_size(), 1);
  EXPECT_EQ(packets[6].track_event().debug_annotations(0).int_value(), 7);
  EXPECT_EQ(packets[7].track_event().name(), "InlineDyn");  // nested
  ASSERT_EQ(packets[7].track_event().debug_annotations_size(), 1);
  EXPECT_EQ(packets[7].track_event().debug_annotations(0).int_value(), 3);
  EXPECT_EQ(packets[8].track_event().type(), pb::TrackEvent::TYPE_SLICE_END);
  EXPECT_EQ(packets[9].track_event().type(), pb::TrackEvent::TYPE_SLICE_END);
  const pb::TrackEvent& e = packets[2].track_event();
  EXPECT_EQ(e.name(), "Lambda");
  ASSERT_EQ(e.flow_ids_size(), 1);
  EXPECT_EQ(e.flow_ids(0), 42u);
  ASSERT_EQ(e.debug_annotations_size(), 3);
  EXPECT_EQ(e.debug_annotations(0).name(), "first");  // interned
  EXPECT_EQ(e.debug_annotations(1).name(), "frame");  // as it is
  EXPECT_EQ(e.debug_annotations(1).int_value(), 7);
  EXPECT_EQ(e.debug_annotations(2).name(), "path");
  ExpectPath(e.debug_annotations(2));
  EXPECT_EQ(packets[3].track_event().type(), pb::TrackEvent::TYPE_SLICE_END);
  const pb::TrackEvent& typed = packets[4].track_event();
  ASSERT_EQ(typed.debug_annotations_size(), 2);
  EXPECT_EQ(typed.debug_annotations(0).name(), "pt");
  ExpectPoint(typed.debug_annotations(0), 5, 6);
  EXPECT_EQ(typed.debug_annotations(1).string_value(), "l");
  ASSERT_EQ(packets[5].track_event().debug_annotations_size(), 1);
  EXPECT_TRUE(packets[5].track_event().debug_annotations(0).bool_value());
}

// trace_processor reads the nested annotations into its args table, keys
// joined with '.' and '[i]'.
TEST_F(TrackEventTest, NestedAnnotationsInTraceProcessorArgs) {
  const std::string tp = test::TraceProcessorShellPath();
  if (tp.empty()) {
    GTEST_SKIP() << "no trace_processor_shell: set TRACE_PROCESSOR_SHELL to "
                    "Perfetto's trace_processor_shell";
  }
  SetCategoriesEnabled("test.gfx");
  PacketCapture capture;
  {
    ScopedThreadWriter bind(capture.writer());
    const Path path{"zigzag", {{1, 2}, {-3, 4}}};
    RT_TRACE_INSTANT("test.gfx", "Nested", "path", path, [](EventContext ctx) {
      ctx.AddDebugAnnotation("pt", Point{8, 9});
    });
  }
  pb::Trace trace;
  for (pb::TracePacket& packet : ParseRaw(&capture)) {
    packet.set_trusted_packet_sequence_id(1);
    *trace.add_packet() = packet;
  }
  base::TempDir dir;
  const std::string file = dir.File("trace.pb");
  {
    std::ofstream out(file, std::ios::binary);
    ASSERT_TRUE(trace.SerializeToOstream(&out));
  }
  std::string csv, error;
  ASSERT_TRUE(test::RunTraceProcessorQuery(
      tp, file, dir.path(),
      "select a.key, a.display_value from slice s join args a "
      "using(arg_set_id) "
      "where s.name = 'Nested' and a.key like 'debug.%' order by a.key;",
      &csv, &error))
      << error;
  for (const char* row :
       {"\"debug.path.label\",\"zigzag\"", "\"debug.path.points[0].x\",\"1\"",
        "\"debug.path.points[1].y\",\"4\"", "\"debug.path.points[2]\",\"0.5\"",
        "\"debug.pt.x\",\"8\"", "\"debug.pt.y\",\"9\""}) {
    EXPECT_NE(csv.find(row), std::string::npos) << row << "\n" << csv;
  }
}

// With a byte period, the state is cleared again and again: every
// generation starts with the process descriptor (CLEARED), re-emits the
// thread and counter descriptors and the interned strings, and every event
// resolves within its own generation.
TEST_F(TrackEventTest, ByteClearPeriodReEmitsDescriptorsAndInternedData) {
  SetCategoriesEnabled("test.gfx,test.io");
  const IncrementalStateConfig saved = GetIncrementalStateConfig();
  SetIncrementalStateConfig({/*period_ms=*/0, /*period_bytes=*/1024});
  PacketCapture capture(4096, 64);
  uint64_t clears = 0;
  {
    ScopedThreadWriter bind(capture.writer());
    for (int i = 0; i < 200; i++) {
      RT_TRACE_EVENT("test.gfx", "Step", "i", i);
      RT_TRACE_COUNTER("test.io", "depth", i);
    }
    clears = bind.clears();
  }
  SetIncrementalStateConfig(saved);
  std::vector<pb::TracePacket> packets = ParseRaw(&capture);
  EXPECT_GE(clears, 5u);
  EXPECT_EQ(ResolveIncrementalState(&packets), static_cast<int>(clears));
  // Per generation: one process, one thread and one counter descriptor
  // before the events of the generation use them.
  std::set<uint64_t> tracks;
  int generations = 0;
  int events = 0;
  for (const pb::TracePacket& p : packets) {
    if (p.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
      generations++;
      tracks.clear();
      EXPECT_TRUE(p.track_descriptor().has_process());
    }
    if (p.has_track_descriptor()) {
      EXPECT_TRUE(tracks.insert(p.track_descriptor().uuid()).second);
    }
    if (p.has_track_event()) {
      events++;
      EXPECT_EQ(tracks.count(p.track_event().track_uuid()), 1u);
      if (p.track_event().type() == pb::TrackEvent::TYPE_SLICE_BEGIN) {
        EXPECT_EQ(p.track_event().name(), "Step");
      }
    }
  }
  EXPECT_EQ(generations, static_cast<int>(clears));
  EXPECT_EQ(events, 600);
}

// Once the writer loses a packet, the next event clears the incremental
// state first. While the ring stays full the clear cannot start: each event
// then costs exactly one counted loss (the clear's first packet; the event
// is not written), so the loss reported equals the events missing. Once the
// reader frees room, the next event writes the whole clear, then itself.
TEST_F(TrackEventTest, LossClearsIncrementalStateAtTheNextEvent) {
  SetCategoriesEnabled("test.gfx,test.io");
  const IncrementalStateConfig saved = GetIncrementalStateConfig();
  SetIncrementalStateConfig({0, 0});  // losses only
  PacketCapture capture(256, 4);      // nobody drains: it fills
  std::vector<std::string> after_loss;
  {
    ScopedThreadWriter bind(capture.writer());
    int written = 0;
    while (capture.writer()->stats().packets_dropped == 0 && written < 10000) {
      RT_TRACE_INSTANT("test.gfx", "Fill", "i", written);
      written++;
    }
    const uint64_t dropped = capture.writer()->stats().packets_dropped;
    ASSERT_EQ(dropped, 1u);
    EXPECT_EQ(bind.clears(), 1u);  // the binding's own
    for (int i = 0; i < 3; i++) {
      RT_TRACE_INSTANT("test.gfx", "WhileFull");
      RT_TRACE_COUNTER("test.io", "depth", i);
    }
    EXPECT_EQ(capture.writer()->stats().packets_dropped, dropped + 6);
    EXPECT_EQ(capture.writer()->stats().packets_begun,
              static_cast<uint64_t>(written) + 3 /* the first clear */ + 6);
    EXPECT_EQ(bind.clears(), 1u);  // none could be written
    uint64_t lost = 0;
    EXPECT_TRUE(capture.Drain(&lost).empty());  // the reader takes it all
    EXPECT_EQ(lost, dropped + 6);
    RT_TRACE_INSTANT("test.gfx", "AfterLoss");
    RT_TRACE_COUNTER("test.io", "depth", 7);
    EXPECT_EQ(bind.clears(), 2u);
    EXPECT_EQ(capture.writer()->stats().packets_dropped, dropped + 6);
    after_loss = capture.DrainWholePackets();
  }
  SetIncrementalStateConfig(saved);
  std::vector<pb::TracePacket> packets;
  for (const std::string& grouped : after_loss) {
    std::string flat;
    ASSERT_TRUE(PacketCapture::Ungroup(grouped, &flat));
    packets.emplace_back();
    ASSERT_TRUE(packets.back().ParseFromString(flat));
  }
  // The clear, the process and thread descriptors, the instant, the
  // counter's descriptor and the counter: all resolved.
  ASSERT_EQ(packets.size(), 6u);
  EXPECT_EQ(ResolveIncrementalState(&packets), 1);
  ASSERT_EQ(packets.size(), 5u);  // the clear packet folded
  CheckDescriptors(packets);
  EXPECT_EQ(packets[2].track_event().name(), "AfterLoss");
  EXPECT_EQ(packets[3].track_descriptor().name(), "depth");
  EXPECT_EQ(packets[4].track_event().counter_value(), 7);
  EXPECT_EQ(packets[4].track_event().track_uuid(),
            packets[3].track_descriptor().uuid());
}

TEST_F(TrackEventTest, CountersIntAndDoubleWithOneDescriptorPerTrack) {
  SetCategoriesEnabled("test.io");
  PacketCapture capture;
  {
    ScopedThreadWriter bind(capture.writer());
    RT_TRACE_COUNTER("test.io", "depth", 5);
    RT_TRACE_COUNTER("test.io", "depth", int64_t{-6});
    RT_TRACE_COUNTER("test.io", "ratio", 0.25);
  }
  const std::vector<pb::TracePacket> packets = Parse(&capture);
  ASSERT_EQ(packets.size(), 7u);
  CheckDescriptors(packets);
  const pb::TrackDescriptor& depth = packets[2].track_descriptor();
  EXPECT_EQ(depth.uuid(), CounterTrackUuid("depth"));
  EXPECT_EQ(depth.name(), "depth");
  EXPECT_EQ(depth.parent_uuid(), ProcessTrackUuid());
  EXPECT_TRUE(depth.has_counter());
  for (size_t i : {3u, 4u}) {
    const pb::TrackEvent& e = packets[i].track_event();
    EXPECT_EQ(e.type(), pb::TrackEvent::TYPE_COUNTER);
    EXPECT_EQ(e.track_uuid(), depth.uuid());
    ASSERT_EQ(e.categories_size(), 1);
    EXPECT_EQ(e.categories(0), "test.io");
  }
  EXPECT_EQ(packets[3].track_event().counter_value(), 5);
  EXPECT_EQ(packets[4].track_event().counter_value(), -6);
  const pb::TrackDescriptor& ratio = packets[5].track_descriptor();
  EXPECT_EQ(ratio.name(), "ratio");
  EXPECT_NE(ratio.uuid(), depth.uuid());
  EXPECT_EQ(packets[6].track_event().track_uuid(), ratio.uuid());
  EXPECT_EQ(packets[6].track_event().double_counter_value(), 0.25);
}

TEST_F(TrackEventTest, CategorySpecSyntax) {
  EXPECT_EQ(SetCategoriesEnabled("test.*"), 3u);
  EXPECT_TRUE(IsCategoryEnabled("test.gfx"));
  EXPECT_TRUE(IsCategoryEnabled("test.off"));
  EXPECT_FALSE(IsCategoryEnabled("other"));
  EXPECT_EQ(SetCategoriesEnabled(" -test.off , other,"), 2u);
  EXPECT_FALSE(IsCategoryEnabled("test.off"));
  EXPECT_TRUE(IsCategoryEnabled("other"));
  EXPECT_TRUE(IsCategoryEnabled("test.io"));
  EXPECT_EQ(SetCategoriesEnabled("nonexistent"), 0u);
  EXPECT_FALSE(IsCategoryEnabled("nonexistent"));
  // "*" reaches every registered table: at least this test's four.
  EXPECT_GE(SetCategoriesEnabled("-*"), 4u);
  EXPECT_FALSE(IsCategoryEnabled("test.io"));
  EXPECT_FALSE(IsCategoryEnabled("other"));
}

TEST_F(TrackEventTest, EnvironmentVariable) {
  ASSERT_EQ(setenv("RT_TRACE_CATEGORIES", "test.*,-test.gfx", 1), 0);
  EXPECT_EQ(ApplyCategoriesFromEnvironment(), 4u);
  ASSERT_EQ(unsetenv("RT_TRACE_CATEGORIES"), 0);
  EXPECT_FALSE(IsCategoryEnabled("test.gfx"));
  EXPECT_TRUE(IsCategoryEnabled("test.io"));
  EXPECT_TRUE(IsCategoryEnabled("test.off"));
  EXPECT_EQ(ApplyCategoriesFromEnvironment(), 0u);
}

TEST_F(TrackEventTest, EventsWithoutWriterAreCountedExactly) {
  SetCategoriesEnabled("test.gfx,test.io");
  ASSERT_EQ(ScopedThreadWriter::Current(), nullptr);
  const uint64_t before = Stats().events_without_writer;
  {
    RT_TRACE_EVENT("test.gfx", "NoWriter");  // begin dropped: no end
  }
  RT_TRACE_COUNTER("test.io", "depth", 1);
  EXPECT_EQ(Stats().events_without_writer - before, 2u);
}

TEST_F(TrackEventTest, NestedBindingsRestoreThePreviousWriter) {
  SetCategoriesEnabled("test.gfx");
  PacketCapture outer_capture;
  PacketCapture inner_capture;
  {
    ScopedThreadWriter outer(outer_capture.writer());
    {
      ScopedThreadWriter inner(inner_capture.writer());
      EXPECT_EQ(ScopedThreadWriter::Current(), &inner);
      RT_TRACE_EVENT("test.gfx", "InInner");
    }
    EXPECT_EQ(ScopedThreadWriter::Current(), &outer);
    RT_TRACE_EVENT("test.gfx", "InOuter");
  }
  EXPECT_EQ(ScopedThreadWriter::Current(), nullptr);
  const std::vector<pb::TracePacket> outer_packets = Parse(&outer_capture);
  const std::vector<pb::TracePacket> inner_packets = Parse(&inner_capture);
  ASSERT_EQ(outer_packets.size(), 4u);
  ASSERT_EQ(inner_packets.size(), 4u);
  EXPECT_EQ(inner_packets[2].track_event().name(), "InInner");
  EXPECT_EQ(outer_packets[2].track_event().name(), "InOuter");
}

// Two threads, each with its own writer, write slices while the main thread
// toggles another category: each thread's events land on its own sequence
// and track, every begin has its end, and the always-enabled category loses
// nothing.
TEST_F(TrackEventTest, ThreadsWriteTheirOwnSequencesWhileFlagsToggle) {
  SetCategoriesEnabled("test.gfx");
  constexpr int kEvents = 300;
  PacketCapture captures[2] = {PacketCapture(4096, 256),
                               PacketCapture(4096, 256)};
  std::atomic<int> running{2};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; t++) {
    threads.emplace_back([&, t] {
      {
        ScopedThreadWriter bind(captures[t].writer());
        for (int i = 0; i < kEvents; i++) {
          RT_TRACE_EVENT("test.gfx", "Work", "i", i);
          RT_TRACE_EVENT("test.off", "Maybe");
        }
      }
      running.fetch_sub(1, std::memory_order_release);
    });
  }
  int toggles = 0;
  while (running.load(std::memory_order_acquire) != 0 || toggles < 2) {
    SetCategoriesEnabled(toggles % 2 == 0 ? "test.off" : "-test.off");
    toggles++;
  }
  for (std::thread& thread : threads)
    thread.join();

  uint64_t thread_tracks[2] = {};
  for (int t = 0; t < 2; t++) {
    const std::vector<pb::TracePacket> packets = Parse(&captures[t]);
    ASSERT_GE(packets.size(), 2u);
    thread_tracks[t] = packets[1].track_descriptor().uuid();
    int work_begins = 0;
    int begins = 0;
    int ends = 0;
    for (size_t i = 2; i < packets.size(); i++) {
      if (!packets[i].has_track_event())
        continue;  // descriptors again, after a clear
      const pb::TrackEvent& e = packets[i].track_event();
      EXPECT_EQ(e.track_uuid(), thread_tracks[t]);
      if (e.type() == pb::TrackEvent::TYPE_SLICE_BEGIN) {
        begins++;
        if (e.name() == "Work")
          work_begins++;
      } else {
        EXPECT_EQ(e.type(), pb::TrackEvent::TYPE_SLICE_END);
        ends++;
      }
    }
    EXPECT_EQ(work_begins, kEvents);
    EXPECT_EQ(begins, ends);
  }
  EXPECT_NE(thread_tracks[0], thread_tracks[1]);
}

}  // namespace
}  // namespace track_event
}  // namespace ringtrace
