/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/encoding/ungrouper.h"

#include <gtest/gtest.h>

#include <stdint.h>
#include <string.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "protos/perfetto/trace/trace_packet.pb.h"
#include "src/tracing/core/encoding/test/proto_test_encoder.h"

namespace ringtrace {
namespace ungrouper {
namespace {

using Enc = encoding::ProtoTestEncoder;

std::string ToString(ConstBytes b) {
  return std::string(reinterpret_cast<const char*>(b.data), b.size);
}

// Runs the contiguous API and returns the output (asserting success).
std::string UngroupOk(Ungrouper* u, const std::string& in) {
  ConstBytes out;
  base::Status s =
      u->Ungroup(reinterpret_cast<const uint8_t*>(in.data()), in.size(), &out);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(u->last_error(), UngroupError::kNone);
  return ToString(out);
}

UngroupError UngroupErr(const std::string& in) {
  Ungrouper u;
  ConstBytes out{reinterpret_cast<const uint8_t*>("x"), 1};
  base::Status s =
      u.Ungroup(reinterpret_cast<const uint8_t*>(in.data()), in.size(), &out);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(out.data, nullptr);
  EXPECT_EQ(out.size, 0u);
  EXPECT_FALSE(s.message().empty());
  return u.last_error();
}

// Splits |in| at |cuts| (sorted offsets) into slices, heap-copying each so
// that ASan catches any read past a slice.
struct SlicedInput {
  std::vector<std::unique_ptr<uint8_t[]>> storage;
  std::vector<ConstBytes> slices;
};

SlicedInput Slice(const std::string& in, const std::vector<size_t>& cuts) {
  SlicedInput r;
  size_t prev = 0;
  std::vector<size_t> bounds = cuts;
  bounds.push_back(in.size());
  for (size_t b : bounds) {
    const size_t n = b - prev;
    r.storage.emplace_back(new uint8_t[n > 0 ? n : 1]);
    if (n > 0)
      memcpy(r.storage.back().get(), in.data() + prev, n);
    r.slices.push_back(ConstBytes{r.storage.back().get(), n});
    prev = b;
  }
  return r;
}

// ---------------------------------------------------------------------------
// Pass-through.
// ---------------------------------------------------------------------------

TEST(UngrouperTest, EmptyPacketPassesThrough) {
  Ungrouper u;
  const uint8_t buf[1] = {0};
  ConstBytes out;
  ASSERT_TRUE(u.Ungroup(buf, 0, &out).ok());
  EXPECT_EQ(out.data, buf);
  EXPECT_EQ(out.size, 0u);
  ASSERT_TRUE(u.Ungroup(nullptr, 0, &out).ok());
  EXPECT_EQ(out.size, 0u);
}

TEST(UngrouperTest, PacketWithoutGroupsPassesThroughWithoutCopy) {
  Enc in;
  in.VarIntField(8, 123456789)
      .Fixed64Field(2, 0x0102030405060708ull)
      .Fixed32Field(3, 0xdeadbeef)
      .BytesField(4, "hello")
      .BytesField(11, Enc().VarIntField(9, 1).str())  // A real submessage.
      .VarIntField(536870911, 1);                     // Max field number.
  Ungrouper u;
  ConstBytes out;
  ASSERT_TRUE(u.Ungroup(in.data(), in.size(), &out).ok());
  EXPECT_EQ(out.data, in.data());  // Pointer identity: no copy.
  EXPECT_EQ(out.size, in.size());
  EXPECT_EQ(u.output_capacity(), 0u);  // Nothing was even allocated.
}

// ---------------------------------------------------------------------------
// Byte-exact conversions.
// ---------------------------------------------------------------------------

TEST(UngrouperTest, SingleGroupByteExact) {
  // field 1 group { field 2 varint 150 }.
  const std::string in("\x0b\x10\x96\x01\x0c", 5);
  const std::string expected("\x0a\x03\x10\x96\x01", 5);
  Ungrouper u;
  EXPECT_EQ(UngroupOk(&u, in), expected);
}

TEST(UngrouperTest, EmptyGroups) {
  Enc in, expected;
  in.Group(1, Enc()).VarIntField(2, 7).Group(3, Enc().Group(4, Enc()));
  expected.Nested(1, Enc()).VarIntField(2, 7).Nested(3, Enc().Nested(4, Enc()));
  Ungrouper u;
  EXPECT_EQ(UngroupOk(&u, in.str()), expected.str());
  EXPECT_EQ(expected.str(), std::string("\x0a\x00\x10\x07\x1a\x02\x22\x00", 8));
}

TEST(UngrouperTest, DeepRepeatedGroupsWithAllWireTypes) {
  // Four levels; repeated groups at every level; groups next to
  // length-delimited fields; every scalar wire type at every level.
  auto scalars = [](Enc& e, uint32_t base) -> Enc& {
    return e
        .VarIntField(base, 0xffffffffffffffffull)  // 10-byte varint.
        .Fixed64Field(base + 1, 0x1122334455667788ull)
        .Fixed32Field(base + 2, 0x99aabbcc)
        .BytesField(base + 3, "str");
  };
  Enc in4, ex4;
  scalars(in4, 20);
  scalars(ex4, 20);
  Enc in3, ex3;
  scalars(in3, 30).Group(5, in4).BytesField(6, "x").Group(5, in4);
  scalars(ex3, 30).Nested(5, ex4).BytesField(6, "x").Nested(5, ex4);
  Enc in2, ex2;
  in2.BytesField(7, "before").Group(8, in3).Group(8, in3).Group(9, Enc());
  ex2.BytesField(7, "before").Nested(8, ex3).Nested(8, ex3).Nested(9, Enc());
  Enc in1, ex1;
  scalars(in1, 40).Group(2000, in2).BytesField(3, "after");
  scalars(ex1, 40).Nested(2000, ex2).BytesField(3, "after");
  Enc in, expected;
  in.VarIntField(8, 1).Group(11, in1).Group(11, in1).VarIntField(10, 3);
  expected.VarIntField(8, 1).Nested(11, ex1).Nested(11, ex1).VarIntField(10, 3);
  Ungrouper u;
  EXPECT_EQ(UngroupOk(&u, in.str()), expected.str());
}

TEST(UngrouperTest, LongGroupGetsMultiByteMinimalLength) {
  // 300 bytes of content: the output length varint takes 2 bytes while the
  // end-group tag was 1, so the output is one byte longer than the input.
  const std::string payload(297, 'p');
  Enc inner;
  inner.BytesField(1, payload);
  ASSERT_EQ(inner.size(), 300u);
  Enc in;
  in.Group(2, inner);
  Ungrouper u;
  const std::string out = UngroupOk(&u, in.str());
  EXPECT_EQ(out.size(), in.size() + 1);
  EXPECT_EQ(out.substr(0, 3), std::string("\x12\xac\x02", 3));  // 300.
  EXPECT_EQ(out.substr(3), inner.str());
}

TEST(UngrouperTest, ManyNestedGroupsShrinkWithMultiByteTags) {
  // Field 5000 has a 3-byte tag: each group loses its 3-byte end tag and
  // gains a 1-byte length.
  Enc in, expected;
  in.Group(5000, Enc().Group(5000, Enc().VarIntField(1, 1)));
  expected.Nested(5000, Enc().Nested(5000, Enc().VarIntField(1, 1)));
  Ungrouper u;
  const std::string out = UngroupOk(&u, in.str());
  EXPECT_EQ(out, expected.str());
  EXPECT_EQ(out.size() + 4, in.size());
}

TEST(UngrouperTest, NonMinimalTagsAndVarInts) {
  // Start tag for field 1 written in 2 bytes (0x8b 0x00) and end tag in 3:
  // the converted tag is minimal. A non-minimal value varint (0x81 0x80 0x00
  // = 1) is copied unchanged.
  Enc in;
  in.Bytes({0x8b, 0x00, 0x10, 0x81, 0x80, 0x00, 0x8c, 0x80, 0x00});
  const std::string expected("\x0a\x04\x10\x81\x80\x00", 6);
  Ungrouper u;
  EXPECT_EQ(UngroupOk(&u, in.str()), expected);
}

TEST(UngrouperTest, OutputHasNoGroupsLeft) {
  Enc in;
  in.Group(1, Enc().Group(2, Enc().VarIntField(3, 4)));
  Ungrouper u1, u2;
  const std::string out = UngroupOk(&u1, in.str());
  ConstBytes again;
  ASSERT_TRUE(u2.Ungroup(reinterpret_cast<const uint8_t*>(out.data()),
                         out.size(), &again)
                  .ok());
  EXPECT_EQ(again.data, reinterpret_cast<const uint8_t*>(out.data()));
}

// Random trees of fields encoded both ways, checked byte for byte.
void GenMessage(std::mt19937* rng, int depth, Enc* in, Enc* expected) {
  const int num_fields = static_cast<int>((*rng)() % 6);
  for (int i = 0; i < num_fields; i++) {
    const uint32_t field =
        ((*rng)() % 4 == 0) ? 1 + (*rng)() % 536870911u : 1 + (*rng)() % 40;
    const uint32_t kind = (*rng)() % (depth < 6 ? 6 : 4);
    switch (kind) {
      case 0: {
        const uint64_t v = (static_cast<uint64_t>((*rng)()) << 32 | (*rng)()) >>
                           ((*rng)() % 64);
        in->VarIntField(field, v);
        expected->VarIntField(field, v);
        break;
      }
      case 1: {
        const uint32_t v = static_cast<uint32_t>((*rng)());
        in->Fixed32Field(field, v);
        expected->Fixed32Field(field, v);
        break;
      }
      case 2: {
        const uint64_t v = static_cast<uint64_t>((*rng)()) << 32 | (*rng)();
        in->Fixed64Field(field, v);
        expected->Fixed64Field(field, v);
        break;
      }
      case 3: {
        const std::string b((*rng)() % 200, static_cast<char>('a' + i));
        in->BytesField(field, b);
        expected->BytesField(field, b);
        break;
      }
      default: {
        Enc gin, gex;
        GenMessage(rng, depth + 1, &gin, &gex);
        in->Group(field, gin);
        expected->Nested(field, gex);
        break;
      }
    }
  }
}

TEST(UngrouperTest, RandomTreesMatchReferenceEncoding) {
  std::mt19937 rng(12345);
  Ungrouper u;  // Reused across packets on purpose.
  for (int iter = 0; iter < 300; iter++) {
    Enc in, expected;
    GenMessage(&rng, 0, &in, &expected);
    ASSERT_EQ(UngroupOk(&u, in.str()), expected.str()) << "iteration " << iter;
  }
}

// The one pass and the two passes, each reached, give the reference bytes.
TEST(UngrouperTest, EveryPathMatchesReferenceEncoding) {
  Ungrouper u;
  // Small groups: the one pass, lengths in the reserved byte.
  Enc small_in, small_ex;
  small_in.VarIntField(8, 1).Group(
      11, Enc().VarIntField(9, 2).Group(4, Enc().BytesField(10, "n")));
  small_ex.VarIntField(8, 1).Nested(
      11, Enc().VarIntField(9, 2).Nested(4, Enc().BytesField(10, "n")));
  EXPECT_EQ(UngroupOk(&u, small_in.str()), small_ex.str());
  EXPECT_EQ(u.one_pass_calls(), 1u);
  EXPECT_EQ(u.two_pass_calls(), 0u);

  // A 300-byte group inside a small one: the one pass moves its content.
  const std::string big(297, 'b');
  Enc moved_in, moved_ex;
  moved_in.Group(11,
                 Enc().Group(4, Enc().BytesField(6, big)).VarIntField(1, 7));
  moved_ex.Nested(11,
                  Enc().Nested(4, Enc().BytesField(6, big)).VarIntField(1, 7));
  EXPECT_EQ(UngroupOk(&u, moved_in.str()), moved_ex.str());
  EXPECT_EQ(u.one_pass_calls(), 2u);
  EXPECT_EQ(u.two_pass_calls(), 0u);

  // Groups nested 12 deep: past the one pass's depth, the two passes.
  Enc deep_in, deep_ex;
  deep_in.VarIntField(1, 1);
  deep_ex.VarIntField(1, 1);
  for (int i = 0; i < 12; i++) {
    Enc gin, gex;
    gin.VarIntField(2, static_cast<uint64_t>(i)).Raw(deep_in.str());
    gex.VarIntField(2, static_cast<uint64_t>(i)).Raw(deep_ex.str());
    deep_in = Enc().Group(3, gin);
    deep_ex = Enc().Nested(3, gex);
  }
  EXPECT_EQ(UngroupOk(&u, deep_in.str()), deep_ex.str());
  EXPECT_EQ(u.two_pass_calls(), 1u);

  // Large groups nested 6 deep: each level would move the content again,
  // past the budget (twice the packet's size): the two passes.
  Enc nest_in, nest_ex;
  nest_in.BytesField(1, big);
  nest_ex.BytesField(1, big);
  for (int i = 0; i < 6; i++) {
    nest_in = Enc().Group(5, nest_in);
    nest_ex = Enc().Nested(5, nest_ex);
  }
  EXPECT_EQ(UngroupOk(&u, nest_in.str()), nest_ex.str());
  EXPECT_EQ(u.two_pass_calls(), 2u);
  EXPECT_EQ(u.one_pass_calls(), 2u);
}

// Random trees up to 12 deep with large bytes fields: every path, the
// reference bytes, and the same top-level fields from the one pass (a
// contiguous packet) and the two passes (the packet in two slices).
TEST(UngrouperTest, RandomTreesAgreeOnEveryPath) {
  std::mt19937 rng(777);
  Ungrouper contiguous, sliced;
  for (int iter = 0; iter < 400; iter++) {
    Enc in, expected;
    GenMessage(&rng, iter % 2 ? -6 : 0, &in, &expected);
    ASSERT_EQ(UngroupOk(&contiguous, in.str()), expected.str()) << iter;
    const std::string& raw = in.str();
    const size_t cut = raw.size() / 2;
    const ConstBytes halves[2] = {
        {reinterpret_cast<const uint8_t*>(raw.data()), cut},
        {reinterpret_cast<const uint8_t*>(raw.data()) + cut, raw.size() - cut}};
    Ungrouper::SlicesResult r;
    ASSERT_TRUE(sliced.UngroupSlices(halves, 2, &r).ok());
    EXPECT_TRUE(sliced.top_level_fields() == contiguous.top_level_fields())
        << iter;
  }
  EXPECT_GT(contiguous.one_pass_calls(), 0u);
  EXPECT_GT(contiguous.two_pass_calls(), 0u);
}

// UngroupInto's room is size + kIntoExtraRoom: a group whose length needs
// more bytes than its end tag had is not moved there (no room for it);
// the caller's general path converts it.
TEST(UngrouperTest, UngroupIntoNeverWritesPastItsRoom) {
  const std::string big(297, 'b');
  Enc in, expected;
  in.Group(11, Enc().Group(4, Enc().BytesField(6, big)).VarIntField(1, 7));
  expected.Nested(11,
                  Enc().Nested(4, Enc().BytesField(6, big)).VarIntField(1, 7));
  Ungrouper u;
  // Exactly the room promised, on the heap, so ASan sees any write past it.
  std::unique_ptr<uint8_t[]> dst(
      new uint8_t[in.size() + Ungrouper::kIntoExtraRoom]);
  size_t n = 0;
  EXPECT_FALSE(u.UngroupInto(in.data(), in.size(), dst.get(), &n));
  EXPECT_EQ(UngroupOk(&u, in.str()), expected.str());
  // A packet whose groups keep one-byte lengths converts there.
  Enc small_in, small_ex;
  small_in.VarIntField(8, 1).Group(11, Enc().BytesField(23, "n"));
  small_ex.VarIntField(8, 1).Nested(11, Enc().BytesField(23, "n"));
  std::unique_ptr<uint8_t[]> room(
      new uint8_t[small_in.size() + Ungrouper::kIntoExtraRoom]);
  ASSERT_TRUE(u.UngroupInto(small_in.data(), small_in.size(), room.get(), &n));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(room.get()), n),
            small_ex.str());
}

TEST(UngrouperTest, TopLevelFieldsOnlyAtTheTopAndBelow128) {
  Enc in;
  in.VarIntField(3, 1)
      .Group(11, Enc().VarIntField(10, 5).VarIntField(79, 6))
      .Fixed32Field(127, 1)
      .BytesField(128, "x")
      .VarIntField(87, 1);
  Ungrouper u;
  UngroupOk(&u, in.str());
  const TopLevelFields& f = u.top_level_fields();
  EXPECT_TRUE(f.Has(3));
  EXPECT_TRUE(f.Has(11));
  EXPECT_TRUE(f.Has(127));
  EXPECT_TRUE(f.Has(87));
  EXPECT_FALSE(f.Has(10));   // Inside the group.
  EXPECT_FALSE(f.Has(79));   // Inside the group.
  EXPECT_FALSE(f.Has(128));  // Not recorded.
  EXPECT_FALSE(f.Has(1));
  // A failed call leaves none.
  const std::string bad("\x18", 1);  // Field 3, varint missing.
  ConstBytes out;
  EXPECT_FALSE(
      u.Ungroup(reinterpret_cast<const uint8_t*>(bad.data()), bad.size(), &out)
          .ok());
  EXPECT_TRUE(u.top_level_fields() == TopLevelFields());
}

// ---------------------------------------------------------------------------
// Round trip into libprotobuf.
// ---------------------------------------------------------------------------

TEST(UngrouperTest, RoundTripTrackEventIntoLibprotobuf) {
  // TracePacket { timestamp=8, track_event=11 group { type=9, name=23,
  //   category_iids=3 (x2), track_uuid=11, debug_annotations=4 group
  //   { name=10, int_value=4 } (x2), flow_ids=47 fixed64 },
  //   trusted_packet_sequence_id=10 }.
  Enc ann1, ann2;
  ann1.BytesField(10, "arg1").VarIntField(4, static_cast<uint64_t>(-5));
  ann2.BytesField(10, "arg2").Fixed64Field(5, 0x400921fb54442d18ull);  // pi.
  Enc te;
  te.VarIntField(9, 1)
      .BytesField(23, "my_slice")
      .VarIntField(3, 7)
      .VarIntField(3, 8)
      .VarIntField(11, 0xabcdef)
      .Group(4, ann1)
      .Group(4, ann2)
      .Fixed64Field(47, 0x1234567890ull);
  Enc in;
  in.VarIntField(8, 1000000007).Group(11, te).VarIntField(10, 42);

  Ungrouper u;
  const std::string out = UngroupOk(&u, in.str());
  perfetto::protos::TracePacket packet;
  ASSERT_TRUE(packet.ParseFromString(out));
  EXPECT_EQ(packet.timestamp(), 1000000007u);
  EXPECT_EQ(packet.trusted_packet_sequence_id(), 42u);
  ASSERT_TRUE(packet.has_track_event());
  const auto& ev = packet.track_event();
  EXPECT_EQ(ev.type(), perfetto::protos::TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(ev.name(), "my_slice");
  ASSERT_EQ(ev.category_iids_size(), 2);
  EXPECT_EQ(ev.category_iids(0), 7u);
  EXPECT_EQ(ev.category_iids(1), 8u);
  EXPECT_EQ(ev.track_uuid(), 0xabcdefu);
  ASSERT_EQ(ev.debug_annotations_size(), 2);
  EXPECT_EQ(ev.debug_annotations(0).name(), "arg1");
  EXPECT_EQ(ev.debug_annotations(0).int_value(), -5);
  EXPECT_EQ(ev.debug_annotations(1).name(), "arg2");
  EXPECT_DOUBLE_EQ(ev.debug_annotations(1).double_value(), 3.141592653589793);
  ASSERT_EQ(ev.flow_ids_size(), 1);
  EXPECT_EQ(ev.flow_ids(0), 0x1234567890u);
  EXPECT_TRUE(packet.unknown_fields().empty());
  EXPECT_TRUE(ev.unknown_fields().empty());
}

TEST(UngrouperTest, RoundTripNestedTestPayloadIntoLibprotobuf) {
  // for_testing=900 { str=1, seq_value=2, payload=5 { nested=2 { nested=2
  // {...} } } } with TestPayload repeated at each level, 5 levels deep.
  constexpr int kLevels = 5;
  Enc payload;
  payload.BytesField(1, "leaf").VarIntField(3, 0).VarIntField(5, 99);
  for (int level = 1; level < kLevels; level++) {
    Enc outer;
    outer.BytesField(1, "level" + std::to_string(level))
        .Group(2, payload)
        .Group(2, Enc().VarIntField(6, static_cast<uint64_t>(level)))
        .VarIntField(3, static_cast<uint64_t>(level))
        .BytesField(4, "single");
    payload = outer;
  }
  Enc test_event;
  test_event.BytesField(1, "root").VarIntField(2, 17).Group(5, payload);
  Enc in;
  in.Group(900, test_event).VarIntField(8, 5);

  Ungrouper u;
  const std::string out = UngroupOk(&u, in.str());
  perfetto::protos::TracePacket packet;
  ASSERT_TRUE(packet.ParseFromString(out));
  EXPECT_EQ(packet.timestamp(), 5u);
  ASSERT_TRUE(packet.has_for_testing());
  EXPECT_EQ(packet.for_testing().str(), "root");
  EXPECT_EQ(packet.for_testing().seq_value(), 17u);
  const perfetto::protos::TestEvent::TestPayload* p =
      &packet.for_testing().payload();
  for (int level = kLevels - 1; level >= 1; level--) {
    ASSERT_EQ(p->str_size(), 1);
    EXPECT_EQ(p->str(0), "level" + std::to_string(level));
    EXPECT_EQ(p->remaining_nesting_depth(), static_cast<uint32_t>(level));
    EXPECT_EQ(p->single_string(), "single");
    ASSERT_EQ(p->nested_size(), 2);
    ASSERT_EQ(p->nested(1).repeated_ints_size(), 1);
    EXPECT_EQ(p->nested(1).repeated_ints(0), level);
    p = &p->nested(0);
  }
  ASSERT_EQ(p->str_size(), 1);
  EXPECT_EQ(p->str(0), "leaf");
  EXPECT_EQ(p->single_int(), 99);
  EXPECT_EQ(p->nested_size(), 0);
}

// ---------------------------------------------------------------------------
// Malformed input.
// ---------------------------------------------------------------------------

TEST(UngrouperTest, TruncatedFields) {
  EXPECT_EQ(UngroupErr(std::string("\x80", 1)), UngroupError::kTruncated);
  EXPECT_EQ(UngroupErr(std::string("\x08", 1)), UngroupError::kTruncated);
  EXPECT_EQ(UngroupErr(std::string("\x08\xff", 2)), UngroupError::kTruncated);
  EXPECT_EQ(UngroupErr(std::string("\x09\x01\x02\x03\x04\x05\x06\x07", 8)),
            UngroupError::kTruncated);  // fixed64 with 7 bytes.
  EXPECT_EQ(UngroupErr(std::string("\x0d\x01\x02\x03", 4)),
            UngroupError::kTruncated);  // fixed32 with 3 bytes.
  EXPECT_EQ(UngroupErr(std::string("\x12", 1)), UngroupError::kTruncated);
  // Inside a group.
  EXPECT_EQ(UngroupErr(std::string("\x0b\x10", 2)), UngroupError::kTruncated);
}

TEST(UngrouperTest, LengthsPastTheEnd) {
  EXPECT_EQ(UngroupErr(std::string("\x12\x03"
                                   "ab",
                                   4)),
            UngroupError::kTruncated);
  // A 2^64 - 1 length must not wrap around.
  Enc huge;
  huge.Tag(2, 2).VarInt(~0ull).Bytes({1, 2, 3});
  EXPECT_EQ(UngroupErr(huge.str()), UngroupError::kTruncated);
  // A length that escapes the enclosing group (bytes run past its end tag
  // and the end of the packet).
  EXPECT_EQ(UngroupErr(std::string("\x0b\x12\x05"
                                   "ab\x0c",
                                   6)),
            UngroupError::kTruncated);
}

TEST(UngrouperTest, OverLongVarInts) {
  // 11-byte value varint.
  std::string v11("\x08", 1);
  v11 += std::string(10, '\x80');
  v11 += '\x01';
  EXPECT_EQ(UngroupErr(v11), UngroupError::kVarIntTooLong);
  // Also as a length.
  v11[0] = '\x12';
  EXPECT_EQ(UngroupErr(v11), UngroupError::kVarIntTooLong);
  // 10 bytes is fine.
  std::string v10("\x08", 1);
  v10 += std::string(9, '\xff');
  v10 += '\x01';
  Ungrouper u;
  EXPECT_EQ(UngroupOk(&u, v10), v10);
  // A 6-byte tag; a 5-byte tag above 2^32 - 1.
  EXPECT_EQ(UngroupErr(std::string("\x88\x80\x80\x80\x80\x00", 6)),
            UngroupError::kVarIntTooLong);
  EXPECT_EQ(UngroupErr(std::string("\xf8\xff\xff\xff\x1f\x00", 6)),
            UngroupError::kVarIntTooLong);
}

TEST(UngrouperTest, BadWireTypes) {
  EXPECT_EQ(UngroupErr(std::string("\x0e\x00", 2)), UngroupError::kBadWireType);
  EXPECT_EQ(UngroupErr(std::string("\x0f\x00", 2)), UngroupError::kBadWireType);
  EXPECT_EQ(UngroupErr(std::string("\x0b\x0f\x0c", 3)),
            UngroupError::kBadWireType);
}

TEST(UngrouperTest, FieldZero) {
  EXPECT_EQ(UngroupErr(std::string("\x00\x00", 2)), UngroupError::kFieldZero);
  EXPECT_EQ(UngroupErr(std::string("\x03\x04", 2)), UngroupError::kFieldZero);
  // Non-minimal zero tag.
  EXPECT_EQ(UngroupErr(std::string("\x83\x00\x04", 3)),
            UngroupError::kFieldZero);
}

TEST(UngrouperTest, BadGroupNesting) {
  EXPECT_EQ(UngroupErr(std::string("\x0c", 1)), UngroupError::kUnmatchedEnd);
  EXPECT_EQ(UngroupErr(std::string("\x0b\x0c\x0c", 3)),
            UngroupError::kUnmatchedEnd);
  EXPECT_EQ(UngroupErr(std::string("\x0b\x14", 2)),
            UngroupError::kMismatchedEnd);
  // Crossed groups: 1 { 2 { } 1 } 2.
  EXPECT_EQ(UngroupErr(std::string("\x0b\x13\x0c\x14", 4)),
            UngroupError::kMismatchedEnd);
  EXPECT_EQ(UngroupErr(std::string("\x0b", 1)), UngroupError::kUnterminated);
  EXPECT_EQ(UngroupErr(std::string("\x0b\x13\x14\x08\x01", 5)),
            UngroupError::kUnterminated);
}

TEST(UngrouperTest, DepthLimit) {
  // for_testing=900 { payload=5 { nested=2 { nested=2 { ... } } } }: |depth|
  // groups in all, the innermost TestPayload carrying single_int=5.
  auto nested = [](size_t depth) {
    std::vector<uint32_t> fields = {900, 5};
    while (fields.size() < depth)
      fields.push_back(2);
    Enc e;
    for (uint32_t f : fields)
      e.StartGroup(f);
    e.VarIntField(5, 77);
    for (size_t i = fields.size(); i-- > 0;)
      e.EndGroup(fields[i]);
    return e;
  };
  Ungrouper u;
  const Enc ok = nested(Ungrouper::kMaxGroupDepth);
  ConstBytes out;
  ASSERT_TRUE(u.Ungroup(ok.data(), ok.size(), &out).ok());
  // The deepest accepted packet is still within libprotobuf's limits.
  perfetto::protos::TracePacket packet;
  ASSERT_TRUE(packet.ParseFromArray(out.data, static_cast<int>(out.size)));
  const perfetto::protos::TestEvent::TestPayload* p =
      &packet.for_testing().payload();
  size_t levels = 2;
  while (p->nested_size() == 1) {
    p = &p->nested(0);
    levels++;
  }
  EXPECT_EQ(levels, Ungrouper::kMaxGroupDepth);
  EXPECT_EQ(p->single_int(), 77);
  EXPECT_EQ(UngroupErr(nested(Ungrouper::kMaxGroupDepth + 1).str()),
            UngroupError::kTooDeep);
  // Many groups in sequence are fine: only nesting is limited.
  Enc wide;
  for (size_t i = 0; i < 10 * Ungrouper::kMaxGroupDepth; i++)
    wide.Group(1, Enc().Group(2, Enc()));
  ASSERT_TRUE(u.Ungroup(wide.data(), wide.size(), &out).ok());
  EXPECT_EQ(out.size, wide.size());
}

TEST(UngrouperTest, ErrorMessageNamesTheOffset) {
  Ungrouper u;
  const std::string in("\x08\x01\x0e", 3);
  ConstBytes out;
  base::Status s =
      u.Ungroup(reinterpret_cast<const uint8_t*>(in.data()), in.size(), &out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "ungrouper: bad wire type at offset 2");
}

TEST(UngrouperTest, SuccessAfterErrorResetsState) {
  Ungrouper u;
  ConstBytes out;
  const std::string bad("\x0b\x13\x08", 3);
  EXPECT_FALSE(
      u.Ungroup(reinterpret_cast<const uint8_t*>(bad.data()), bad.size(), &out)
          .ok());
  EXPECT_NE(u.last_error(), UngroupError::kNone);
  EXPECT_EQ(UngroupOk(&u, std::string("\x0b\x0c", 2)),
            std::string("\x0a\x00", 2));
  EXPECT_EQ(UngroupOk(&u, std::string("\x08\x01", 2)),
            std::string("\x08\x01", 2));
}

// Every prefix of a valid packet with groups is either valid (ends between
// top-level fields) or rejected; none reads past its end (ASan checks the
// heap copy).
TEST(UngrouperTest, EveryPrefixIsHandled) {
  Enc in;
  in.VarIntField(8, 300)
      .Group(11,
             Enc().BytesField(23, "name").Group(4, Enc().Fixed64Field(5, 1)))
      .Fixed32Field(3, 7);
  Ungrouper u;
  int accepted = 0;
  for (size_t n = 0; n <= in.size(); n++) {
    std::unique_ptr<uint8_t[]> copy(new uint8_t[n > 0 ? n : 1]);
    memcpy(copy.get(), in.data(), n);
    ConstBytes out;
    if (u.Ungroup(copy.get(), n, &out).ok())
      accepted++;
  }
  // Accepted: empty, after field 8, after the group, and the whole packet.
  EXPECT_EQ(accepted, 4);
}

// ---------------------------------------------------------------------------
// Slices.
// ---------------------------------------------------------------------------

TEST(UngrouperTest, SlicesMatchContiguousAtEverySplit) {
  Enc in;
  in.VarIntField(8, 0xffffffffffffull)
      .Group(2000, Enc()
                       .BytesField(23, std::string(150, 'n'))
                       .Group(4, Enc().Fixed64Field(5, 1).Fixed32Field(6, 2)))
      .Group(11, Enc());
  Ungrouper ref;
  const std::string expected = UngroupOk(&ref, in.str());
  Ungrouper u;
  for (size_t a = 0; a <= in.size(); a++) {
    for (size_t b = a; b <= in.size(); b += 7) {
      // Three slices, some of them empty, plus an empty trailing slice.
      SlicedInput s = Slice(in.str(), {a, b, in.size()});
      Ungrouper::SlicesResult r;
      base::Status st = u.UngroupSlices(s.slices.data(), s.slices.size(), &r);
      ASSERT_TRUE(st.ok()) << st.message() << " a=" << a << " b=" << b;
      ASSERT_FALSE(r.pass_through);
      ASSERT_EQ(ToString(r.converted), expected) << "a=" << a << " b=" << b;
    }
  }
}

TEST(UngrouperTest, MultiSlicePassThroughMakesNoCopy) {
  Enc in;
  in.VarIntField(8, 1).BytesField(2, "abcdef").Fixed64Field(3, 4);
  SlicedInput s = Slice(in.str(), {1, 5, 5});
  Ungrouper u;
  Ungrouper::SlicesResult r;
  ASSERT_TRUE(u.UngroupSlices(s.slices.data(), s.slices.size(), &r).ok());
  EXPECT_TRUE(r.pass_through);
  EXPECT_EQ(r.converted.data, nullptr);
  EXPECT_EQ(u.output_capacity(), 0u);
  // No slices at all: an empty packet.
  ASSERT_TRUE(u.UngroupSlices(nullptr, 0, &r).ok());
  EXPECT_TRUE(r.pass_through);
}

TEST(UngrouperTest, SingleSliceUsesTheContiguousPath) {
  Enc in;
  in.VarIntField(8, 1);
  ConstBytes slice{in.data(), in.size()};
  Ungrouper u;
  Ungrouper::SlicesResult r;
  ASSERT_TRUE(u.UngroupSlices(&slice, 1, &r).ok());
  EXPECT_TRUE(r.pass_through);
  Enc grouped;
  grouped.Group(1, Enc());
  slice = ConstBytes{grouped.data(), grouped.size()};
  ASSERT_TRUE(u.UngroupSlices(&slice, 1, &r).ok());
  EXPECT_FALSE(r.pass_through);
  EXPECT_EQ(ToString(r.converted), std::string("\x0a\x00", 2));
}

TEST(UngrouperTest, MalformedSlicesFailAtEverySplit) {
  const std::vector<std::pair<std::string, UngroupError>> cases = {
      {std::string("\x08\x80\x80", 3), UngroupError::kTruncated},
      {std::string("\x12\x05"
                   "abc",
                   5),
       UngroupError::kTruncated},
      {std::string("\x09\x01\x02", 3), UngroupError::kTruncated},
      {std::string("\x08") + std::string(10, '\x80') + "\x01",
       UngroupError::kVarIntTooLong},
      {std::string("\x88\x80\x80\x80\x80\x00", 6),
       UngroupError::kVarIntTooLong},
      {std::string("\x0b\x0e", 2), UngroupError::kBadWireType},
      {std::string("\x0b\x00", 2), UngroupError::kFieldZero},
      {std::string("\x08\x01\x0c", 3), UngroupError::kUnmatchedEnd},
      {std::string("\x0b\x14", 2), UngroupError::kMismatchedEnd},
      {std::string("\x0b\x08\x01", 3), UngroupError::kUnterminated},
  };
  Ungrouper u;
  for (const auto& c : cases) {
    for (size_t a = 0; a <= c.first.size(); a++) {
      SlicedInput s = Slice(c.first, {a});
      Ungrouper::SlicesResult r;
      r.pass_through = true;
      EXPECT_FALSE(u.UngroupSlices(s.slices.data(), s.slices.size(), &r).ok());
      EXPECT_EQ(u.last_error(), c.second) << "split at " << a;
      EXPECT_FALSE(r.pass_through);
    }
  }
}

// ---------------------------------------------------------------------------
// Buffer reuse.
// ---------------------------------------------------------------------------

TEST(UngrouperTest, SteadyStateReusesTheOutputBuffer) {
  Enc big, small;
  big.Group(1, Enc().BytesField(2, std::string(1000, 'b')));
  small.Group(1, Enc().VarIntField(2, 3));
  Ungrouper u;
  ConstBytes out1, out2, out3;
  ASSERT_TRUE(u.Ungroup(big.data(), big.size(), &out1).ok());
  const size_t cap = u.output_capacity();
  EXPECT_GE(cap, out1.size);
  ASSERT_TRUE(u.Ungroup(small.data(), small.size(), &out2).ok());
  ASSERT_TRUE(u.Ungroup(big.data(), big.size(), &out3).ok());
  EXPECT_EQ(u.output_capacity(), cap);
  EXPECT_EQ(out1.data, out2.data);  // Same buffer, not reallocated.
  EXPECT_EQ(out1.data, out3.data);
}

}  // namespace
}  // namespace ungrouper
}  // namespace ringtrace
