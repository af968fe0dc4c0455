/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Ungrouper throughput. Bytes processed are the input packet bytes. Each
// shape has a memcpy baseline of exactly the same size
// (BM_Ungrouper_MemcpySameSize/<shape>), the floor a copying converter can
// reach; BM_Memcpy (src/base) gives the generic curve.
//
// Shapes:
//   0 TrackEventLike: timestamp + track_event group {type, name, track_uuid}
//                     + sequence id (~45 bytes, 1 group).
//   1 Deep:           32 nested TestPayload groups with a string and an int
//                     at each level (~500 bytes).
//   2 Large:          4 KiB-ish track event with 100 debug annotation groups.
//   3 PassThrough:    the TrackEventLike packet already length-delimited (no
//                     group: validated, not copied).

#include <benchmark/benchmark.h>

#include <stdint.h>
#include <string.h>

#include <string>
#include <vector>

#include "src/tracing/core/encoding/test/proto_test_encoder.h"
#include "src/tracing/core/encoding/ungrouper.h"

namespace ringtrace {
namespace ungrouper {
namespace {

using Enc = encoding::ProtoTestEncoder;

enum Shape { kTrackEventLike = 0, kDeep, kLarge, kPassThrough };

std::string MakePacket(Shape shape) {
  Enc e;
  switch (shape) {
    case kTrackEventLike:
      e.VarIntField(8, 1700000000123456789ull)
          .StartGroup(11)
          .VarIntField(9, 1)
          .BytesField(23, "MessageLoop::RunTask")
          .VarIntField(11, 0x1234)
          .EndGroup(11)
          .VarIntField(10, 7);
      break;
    case kDeep: {
      constexpr uint32_t kDepth = 32;
      e.VarIntField(8, 42).StartGroup(900).StartGroup(5);
      for (uint32_t i = 2; i < kDepth; i++)
        e.BytesField(1, "level_string").VarIntField(5, i).StartGroup(2);
      e.BytesField(4, "leaf");
      for (uint32_t i = 2; i < kDepth; i++)
        e.EndGroup(2);
      e.EndGroup(5).EndGroup(900);
      break;
    }
    case kLarge:
      e.VarIntField(8, 1700000000123456789ull)
          .StartGroup(11)
          .VarIntField(9, 3)
          .BytesField(23, "BigEvent");
      for (uint32_t i = 0; i < 100; i++) {
        e.StartGroup(4)
            .BytesField(10, "annotation_name")
            .BytesField(6, "annotation string value")
            .EndGroup(4);
      }
      e.EndGroup(11);
      break;
    case kPassThrough: {
      Enc te;
      te.VarIntField(9, 1)
          .BytesField(23, "MessageLoop::RunTask")
          .VarIntField(11, 0x1234);
      e.VarIntField(8, 1700000000123456789ull)
          .BytesField(11, te.str())
          .VarIntField(10, 7);
      break;
    }
  }
  return e.str();
}

const char* ShapeName(Shape shape) {
  switch (shape) {
    case kTrackEventLike:
      return "track_event_like";
    case kDeep:
      return "deep";
    case kLarge:
      return "large";
    case kPassThrough:
      return "pass_through";
  }
  return "";
}

void RunUngrouper(benchmark::State& state, Shape shape) {
  const std::string packet = MakePacket(shape);
  const uint8_t* data = reinterpret_cast<const uint8_t*>(packet.data());
  Ungrouper ungrouper;
  for (auto _ : state) {
    ConstBytes out;
    base::Status s = ungrouper.Ungroup(data, packet.size(), &out);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(out.data);
    benchmark::ClobberMemory();
  }
  state.SetLabel(ShapeName(shape));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(packet.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void BM_Ungrouper_TrackEventLike(benchmark::State& state) {
  RunUngrouper(state, kTrackEventLike);
}
BENCHMARK(BM_Ungrouper_TrackEventLike);

void BM_Ungrouper_Deep(benchmark::State& state) {
  RunUngrouper(state, kDeep);
}
BENCHMARK(BM_Ungrouper_Deep);

void BM_Ungrouper_Large(benchmark::State& state) {
  RunUngrouper(state, kLarge);
}
BENCHMARK(BM_Ungrouper_Large);

void BM_Ungrouper_PassThrough(benchmark::State& state) {
  RunUngrouper(state, kPassThrough);
}
BENCHMARK(BM_Ungrouper_PassThrough);

// The Large packet handed over as 4 slices (a packet spanning chunks).
void BM_Ungrouper_LargeSliced(benchmark::State& state) {
  const std::string packet = MakePacket(kLarge);
  const uint8_t* data = reinterpret_cast<const uint8_t*>(packet.data());
  const size_t quarter = packet.size() / 4;
  const ConstBytes slices[4] = {
      {data, quarter},
      {data + quarter, quarter},
      {data + 2 * quarter, quarter},
      {data + 3 * quarter, packet.size() - 3 * quarter}};
  Ungrouper ungrouper;
  for (auto _ : state) {
    Ungrouper::SlicesResult r;
    base::Status s = ungrouper.UngroupSlices(slices, 4, &r);
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(r.converted.data);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(packet.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_Ungrouper_LargeSliced);

// memcpy of a packet of the same size as shape |state.range(0)|.
void BM_Ungrouper_MemcpySameSize(benchmark::State& state) {
  const Shape shape = static_cast<Shape>(state.range(0));
  const std::string packet = MakePacket(shape);
  std::vector<char> dst(packet.size());
  for (auto _ : state) {
    memcpy(dst.data(), packet.data(), packet.size());
    benchmark::ClobberMemory();
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetLabel(std::string(ShapeName(shape)) + " " +
                 std::to_string(packet.size()) + "B");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(packet.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_Ungrouper_MemcpySameSize)
    ->Arg(kTrackEventLike)
    ->Arg(kDeep)
    ->Arg(kLarge)
    ->Arg(kPassThrough);

}  // namespace
}  // namespace ungrouper
}  // namespace ringtrace
