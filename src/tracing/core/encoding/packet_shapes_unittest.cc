/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/encoding/packet_shapes.h"

#include <gtest/gtest.h>
#include <stdint.h>

#include <random>
#include <string>

#include "src/tracing/core/encoding/test/proto_test_encoder.h"
#include "src/tracing/core/encoding/ungrouper.h"

namespace ringtrace {
namespace ungrouper {
namespace {

using Enc = encoding::ProtoTestEncoder;

const uint8_t* Bytes(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

// The conversion by an Ungrouper that has seen nothing before (no shape).
std::string Reference(const std::string& in, TopLevelFields* fields) {
  Ungrouper fresh;
  ConstBytes out;
  EXPECT_TRUE(fresh.Ungroup(Bytes(in), in.size(), &out).ok());
  EXPECT_EQ(fresh.shapes().hits(), 0u);
  *fields = fresh.top_level_fields();
  return std::string(reinterpret_cast<const char*>(out.data), out.size);
}

// A counter TrackEvent as the SDK writes it: timestamp, sequence flags,
// track_event{type, track_uuid, counter_value} as a group.
std::string Counter(uint64_t ts, uint64_t uuid, uint64_t value) {
  Enc e;
  e.VarIntField(8, ts).VarIntField(13, 2).Group(
      11, Enc().VarIntField(9, 4).VarIntField(11, uuid).VarIntField(30, value));
  return e.str();
}

TEST(PacketShapesTest, ARepeatedShapeConvertsWithoutAParse) {
  Ungrouper u;
  for (uint64_t v = 200; v < 300; v++) {
    // Same varint lengths throughout: one shape.
    const std::string in = Counter(100 + v % 20, 0xabcdef0123456789ull, v);
    TopLevelFields want_fields;
    const std::string want = Reference(in, &want_fields);
    ConstBytes out;
    ASSERT_TRUE(u.Ungroup(Bytes(in), in.size(), &out).ok());
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(out.data), out.size),
              want);
    EXPECT_TRUE(u.top_level_fields() == want_fields);
  }
  EXPECT_EQ(u.shapes().misses(), 1u);
  EXPECT_EQ(u.shapes().hits(), 99u);
}

TEST(PacketShapesTest, WhatChangesTheShapeMisses) {
  PacketShapes shapes;
  const std::string base = Counter(100, 7, 200);
  TopLevelFields fields;
  ASSERT_TRUE(shapes.Remember(Bytes(base), base.size(), fields));
  // Other values of the same lengths fit.
  const std::string same = Counter(101, 9, 201);
  ASSERT_EQ(same.size(), base.size());
  EXPECT_NE(shapes.Find(Bytes(same), same.size()), nullptr);
  // A value one byte shorter and another one byte longer: same size, other
  // varint lengths.
  const std::string shifted = Counter(1000, 7, 20);
  ASSERT_EQ(shifted.size(), base.size());
  EXPECT_EQ(shapes.Find(Bytes(shifted), shifted.size()), nullptr);
  // Another field number of the same tag length.
  Enc other;
  other.VarIntField(8, 100).VarIntField(14, 2).Group(
      11, Enc().VarIntField(9, 4).VarIntField(11, 7).VarIntField(30, 200));
  ASSERT_EQ(other.size(), base.size());
  EXPECT_EQ(shapes.Find(Bytes(other.str()), other.size()), nullptr);

  // Strings: the contents are not part of the shape, the lengths are.
  Enc s1, s2, s3;
  s1.Group(11, Enc().BytesField(23, "abcd").VarIntField(9, 1));
  s2.Group(11, Enc().BytesField(23, "wxyz").VarIntField(9, 2));
  s3.Group(11, Enc().BytesField(23, "ab").VarIntField(9, 1).VarIntField(1, 0));
  ASSERT_TRUE(shapes.Remember(Bytes(s1.str()), s1.size(), fields));
  EXPECT_NE(shapes.Find(Bytes(s2.str()), s2.size()), nullptr);
  ASSERT_EQ(s3.size(), s1.size());
  EXPECT_EQ(shapes.Find(Bytes(s3.str()), s3.size()), nullptr);

  // Too large to remember.
  const std::string large = Enc().BytesField(1, std::string(70, 'x')).str();
  EXPECT_FALSE(shapes.Remember(Bytes(large), large.size(), fields));
  EXPECT_EQ(shapes.Find(Bytes(large), large.size()), nullptr);
}

TEST(PacketShapesTest, ShapesThatDoNotRepeatAreRememberedSparsely) {
  PacketShapes shapes;
  TopLevelFields fields;
  size_t remembered = 0;
  for (uint32_t i = 0; i < 200; i++) {
    // A new field number each time: never the same shape.
    const std::string in = Enc().VarIntField(1 + i, 5).str();
    ASSERT_EQ(shapes.Find(Bytes(in), in.size()), nullptr);
    remembered += shapes.Remember(Bytes(in), in.size(), fields);
  }
  EXPECT_GT(remembered, 8u);
  EXPECT_LT(remembered, 30u);
  EXPECT_EQ(shapes.hits(), 0u);
}

// Packets from a few templates with random values, lengths and contents,
// converted by an Ungrouper that remembers shapes and by fresh ones: the
// same bytes and fields every time, both outcomes of Find() reached.
TEST(PacketShapesTest, RandomPacketsMatchAFreshUngrouper) {
  std::mt19937_64 rng(99);
  Ungrouper u;
  for (int iter = 0; iter < 3000; iter++) {
    const uint64_t big = rng() >> (rng() % 64);
    const std::string str(rng() % 6, static_cast<char>('a' + rng() % 26));
    Enc e;
    switch (rng() % 4) {
      case 0:
        e.VarIntField(8, big).Group(11, Enc().VarIntField(9, rng() % 3));
        break;
      case 1:
        e.VarIntField(8, rng() % 300)
            .Group(11, Enc()
                           .BytesField(23, str)
                           .Group(4, Enc().VarIntField(1, big))
                           .Fixed64Field(5, rng()));
        break;
      case 2:
        e.Fixed32Field(3, static_cast<uint32_t>(rng()))
            .BytesField(10, str)
            .VarIntField(87, rng() % 2);
        break;
      default:
        e.Group(900, Enc().Group(
                         1, Enc().Group(2, Enc().VarIntField(3, rng() % 200))));
        break;
    }
    TopLevelFields want_fields;
    const std::string want = Reference(e.str(), &want_fields);
    ConstBytes out;
    ASSERT_TRUE(u.Ungroup(Bytes(e.str()), e.size(), &out).ok());
    ASSERT_EQ(std::string(reinterpret_cast<const char*>(out.data), out.size),
              want)
        << iter;
    ASSERT_TRUE(u.top_level_fields() == want_fields) << iter;
    // UngroupInto (the exporter's path) too.
    uint8_t dst[PacketShapes::kMaxSize + Ungrouper::kIntoExtraRoom];
    size_t n = 0;
    ASSERT_TRUE(u.UngroupInto(Bytes(e.str()), e.size(), dst, &n)) << iter;
    ASSERT_EQ(std::string(reinterpret_cast<const char*>(dst), n), want) << iter;
  }
  EXPECT_GT(u.shapes().hits(), 1000u);
  EXPECT_GT(u.shapes().misses(), 100u);
}

}  // namespace
}  // namespace ungrouper
}  // namespace ringtrace
