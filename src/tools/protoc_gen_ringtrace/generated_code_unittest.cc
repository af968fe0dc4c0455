/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The code protoc-gen-ringtrace generates for test/rtzero_test.proto (every
// scalar type singular, repeated and packed; enums; nested, recursive and
// cross-package messages; a map; tags of one to five bytes), written through
// a real TraceWriterV2, ungrouped, parsed with libprotobuf and compared field
// by field, plus exact bytes for the multi-byte tags.

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "src/tools/protoc_gen_ringtrace/test/rtzero_test.pb.h"
#include "src/tools/protoc_gen_ringtrace/test/rtzero_test.rtzero.h"
#include "src/tracing/core/encoding/test/packet_capture.h"

namespace ringtrace {
namespace {

namespace pb = ringtrace::rtzero_test;
namespace rt = ringtrace::rtzero_test::rtzero;
using encoding::PacketCapture;

static_assert(rt::AllTypes::kFDoubleFieldNumber == 1);
static_assert(rt::AllTypes::kFColorFieldNumber ==
              pb::AllTypes::kFColorFieldNumber);
static_assert(rt::AllTypes::kPColorFieldNumber ==
              pb::AllTypes::kPColorFieldNumber);
static_assert(rt::AllTypes::kCountsFieldNumber ==
              pb::AllTypes::kCountsFieldNumber);
static_assert(rt::AllTypes::kFMaxFieldNumberFieldNumber == 536870911);
static_assert(static_cast<int>(rt::Color::delete_) == pb::delete_);
static_assert(static_cast<int>(rt::Color::COLOR_NEGATIVE) == -2);
static_assert(static_cast<int>(rt::AllTypes::Mode::MODE_BIG) ==
              pb::AllTypes::MODE_BIG);

// Writes one AllTypes as a packet's whole content and parses it back.
template <typename WriteFn>
bool RoundTrip(WriteFn write,
               pb::AllTypes* out,
               std::string* grouped = nullptr) {
  PacketCapture capture;
  {
    auto handle = capture.writer()->NewTracePacket();
    write(rt::AllTypes(handle.get()));
  }
  std::vector<std::string> packets = capture.Drain();
  EXPECT_EQ(packets.size(), 1u);
  if (packets.size() != 1)
    return false;
  if (grouped)
    *grouped = packets[0];
  std::string flat;
  if (!PacketCapture::Ungroup(packets[0], &flat))
    return false;
  return out->ParseFromString(flat);
}

TEST(GeneratedCodeTest, SingularScalars) {
  pb::AllTypes m;
  ASSERT_TRUE(RoundTrip(
      [](rt::AllTypes w) {
        w.set_f_double(-1.25e300);
        w.set_f_float(3.5f);
        w.set_f_int32(std::numeric_limits<int32_t>::min());
        w.set_f_int64(std::numeric_limits<int64_t>::min());
        w.set_f_uint32(std::numeric_limits<uint32_t>::max());
        w.set_f_uint64(std::numeric_limits<uint64_t>::max());
        w.set_f_sint32(std::numeric_limits<int32_t>::min());
        w.set_f_sint64(std::numeric_limits<int64_t>::min());
        w.set_f_fixed32(0xdeadbeefu);
        w.set_f_fixed64(0x0123456789abcdefull);
        w.set_f_sfixed32(-7);
        w.set_f_sfixed64(-8);
        w.set_f_bool(true);
        w.set_f_string("text");
        const uint8_t raw[] = {0, 1, 0xff};
        w.set_f_bytes(raw, sizeof(raw));
        w.set_f_color(rt::Color::COLOR_NEGATIVE);
        w.set_f_mode(rt::AllTypes::Mode::MODE_BIG);
      },
      &m));
  EXPECT_EQ(m.f_double(), -1.25e300);
  EXPECT_EQ(m.f_float(), 3.5f);
  EXPECT_EQ(m.f_int32(), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(m.f_int64(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(m.f_uint32(), std::numeric_limits<uint32_t>::max());
  EXPECT_EQ(m.f_uint64(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(m.f_sint32(), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(m.f_sint64(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(m.f_fixed32(), 0xdeadbeefu);
  EXPECT_EQ(m.f_fixed64(), 0x0123456789abcdefull);
  EXPECT_EQ(m.f_sfixed32(), -7);
  EXPECT_EQ(m.f_sfixed64(), -8);
  EXPECT_TRUE(m.f_bool());
  EXPECT_EQ(m.f_string(), "text");
  EXPECT_EQ(m.f_bytes(), std::string("\x00\x01\xff", 3));
  EXPECT_EQ(m.f_color(), pb::COLOR_NEGATIVE);
  EXPECT_EQ(m.f_mode(), pb::AllTypes::MODE_BIG);
  EXPECT_TRUE(m.unknown_fields().empty());
}

TEST(GeneratedCodeTest, ZigZagIsUsedForSintOnly) {
  // sint32 -1 is one byte (zigzag 1); int32 -1 is ten.
  std::string grouped;
  pb::AllTypes m;
  ASSERT_TRUE(RoundTrip(
      [](rt::AllTypes w) {
        w.set_f_sint32(-1);
        w.set_f_int32(-1);
      },
      &m, &grouped));
  EXPECT_EQ(grouped, std::string("\x38\x01"
                                 "\x18\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
                                 13));
  EXPECT_EQ(m.f_sint32(), -1);
  EXPECT_EQ(m.f_int32(), -1);
}

TEST(GeneratedCodeTest, RepeatedUnpacked) {
  pb::AllTypes m;
  ASSERT_TRUE(RoundTrip(
      [](rt::AllTypes w) {
        for (int i = 0; i < 3; i++) {
          w.add_r_double(i + 0.5);
          w.add_r_float(static_cast<float>(i) - 0.5f);
          w.add_r_int32(-i);
          w.add_r_int64(-1000000000000ll * i);
          w.add_r_uint32(static_cast<uint32_t>(i) * 1000u);
          w.add_r_uint64(1ull << (20 * i));
          w.add_r_sint32(-i * 100);
          w.add_r_sint64(-(1ll << (20 * i)));
          w.add_r_fixed32(static_cast<uint32_t>(i));
          w.add_r_fixed64(~static_cast<uint64_t>(i));
          w.add_r_sfixed32(-i);
          w.add_r_sfixed64(-i - 1);
          w.add_r_bool(i % 2 == 1);
          w.add_r_string(std::string(static_cast<size_t>(i), 'x'));
          w.add_r_bytes(std::string(1, static_cast<char>(i)));
          w.add_r_color(i == 1 ? rt::Color::delete_ : rt::Color::COLOR_RED);
        }
      },
      &m));
  ASSERT_EQ(m.r_double_size(), 3);
  for (int i = 0; i < 3; i++) {
    EXPECT_EQ(m.r_double(i), i + 0.5);
    EXPECT_EQ(m.r_float(i), static_cast<float>(i) - 0.5f);
    EXPECT_EQ(m.r_int32(i), -i);
    EXPECT_EQ(m.r_int64(i), -1000000000000ll * i);
    EXPECT_EQ(m.r_uint32(i), static_cast<uint32_t>(i) * 1000u);
    EXPECT_EQ(m.r_uint64(i), 1ull << (20 * i));
    EXPECT_EQ(m.r_sint32(i), -i * 100);
    EXPECT_EQ(m.r_sint64(i), -(1ll << (20 * i)));
    EXPECT_EQ(m.r_fixed32(i), static_cast<uint32_t>(i));
    EXPECT_EQ(m.r_fixed64(i), ~static_cast<uint64_t>(i));
    EXPECT_EQ(m.r_sfixed32(i), -i);
    EXPECT_EQ(m.r_sfixed64(i), -i - 1);
    EXPECT_EQ(m.r_bool(i), i % 2 == 1);
    EXPECT_EQ(m.r_string(i), std::string(static_cast<size_t>(i), 'x'));
    EXPECT_EQ(m.r_bytes(i), std::string(1, static_cast<char>(i)));
    EXPECT_EQ(m.r_color(i), i == 1 ? pb::delete_ : pb::COLOR_RED);
  }
  EXPECT_TRUE(m.unknown_fields().empty());
}

TEST(GeneratedCodeTest, RepeatedPacked) {
  pb::AllTypes m;
  ASSERT_TRUE(RoundTrip(
      [](rt::AllTypes w) {
        const double doubles[] = {1.5, -2.0};
        w.set_p_double(doubles, 2);
        const float floats[] = {0.25f};
        w.set_p_float(floats, 1);
        encoding::PackedVarInt v;
        v.Append(int32_t{-3});
        v.Append(int32_t{4});
        w.set_p_int32(v);
        v.Reset();
        v.Append(int64_t{-5000000000ll});
        w.set_p_int64(v);
        v.Reset();
        v.Append(uint32_t{7});
        w.set_p_uint32(v);
        v.Reset();
        v.Append(~uint64_t{0});
        v.Append(uint64_t{0});
        w.set_p_uint64(v);
        encoding::PackedZigZagVarInt z;
        z.Append(-2);
        z.Append(2);
        w.set_p_sint32(z);
        z.Reset();
        z.Append(std::numeric_limits<int64_t>::min());
        w.set_p_sint64(z);
        const uint32_t fixed32[] = {1, 2, 3};
        w.set_p_fixed32(fixed32, 3);
        const uint64_t fixed64[] = {~uint64_t{0}};
        w.set_p_fixed64(fixed64, 1);
        const int32_t sfixed32[] = {-1, 1};
        w.set_p_sfixed32(sfixed32, 2);
        const int64_t sfixed64[] = {-9};
        w.set_p_sfixed64(sfixed64, 1);
        v.Reset();
        v.Append(true);
        v.Append(false);
        w.set_p_bool(v);
        v.Reset();
        v.Append(rt::Color::COLOR_NEGATIVE);
        v.Append(rt::Color::delete_);
        w.set_p_color(v);
      },
      &m));
  ASSERT_EQ(m.p_double_size(), 2);
  EXPECT_EQ(m.p_double(0), 1.5);
  EXPECT_EQ(m.p_double(1), -2.0);
  ASSERT_EQ(m.p_float_size(), 1);
  EXPECT_EQ(m.p_float(0), 0.25f);
  ASSERT_EQ(m.p_int32_size(), 2);
  EXPECT_EQ(m.p_int32(0), -3);
  EXPECT_EQ(m.p_int32(1), 4);
  ASSERT_EQ(m.p_int64_size(), 1);
  EXPECT_EQ(m.p_int64(0), -5000000000ll);
  ASSERT_EQ(m.p_uint32_size(), 1);
  EXPECT_EQ(m.p_uint32(0), 7u);
  ASSERT_EQ(m.p_uint64_size(), 2);
  EXPECT_EQ(m.p_uint64(0), ~uint64_t{0});
  EXPECT_EQ(m.p_uint64(1), 0u);
  ASSERT_EQ(m.p_sint32_size(), 2);
  EXPECT_EQ(m.p_sint32(0), -2);
  EXPECT_EQ(m.p_sint32(1), 2);
  ASSERT_EQ(m.p_sint64_size(), 1);
  EXPECT_EQ(m.p_sint64(0), std::numeric_limits<int64_t>::min());
  ASSERT_EQ(m.p_fixed32_size(), 3);
  EXPECT_EQ(m.p_fixed32(2), 3u);
  ASSERT_EQ(m.p_fixed64_size(), 1);
  EXPECT_EQ(m.p_fixed64(0), ~uint64_t{0});
  ASSERT_EQ(m.p_sfixed32_size(), 2);
  EXPECT_EQ(m.p_sfixed32(0), -1);
  EXPECT_EQ(m.p_sfixed32(1), 1);
  ASSERT_EQ(m.p_sfixed64_size(), 1);
  EXPECT_EQ(m.p_sfixed64(0), -9);
  ASSERT_EQ(m.p_bool_size(), 2);
  EXPECT_TRUE(m.p_bool(0));
  EXPECT_FALSE(m.p_bool(1));
  ASSERT_EQ(m.p_color_size(), 2);
  EXPECT_EQ(m.p_color(0), pb::COLOR_NEGATIVE);
  EXPECT_EQ(m.p_color(1), pb::delete_);
  EXPECT_TRUE(m.unknown_fields().empty());
}

TEST(GeneratedCodeTest, NestedRecursiveMapOneofAndImported) {
  pb::AllTypes m;
  ASSERT_TRUE(RoundTrip(
      [](rt::AllTypes w) {
        rt::AllTypes::Inner inner = w.set_f_inner();
        inner.set_value(1);
        rt::AllTypes::Inner child = inner.set_child();
        child.set_value(2);
        child.set_child().set_label("leaf");
        for (int i = 0; i < 2; i++) {
          rt::AllTypes_Inner r = w.add_r_inner();  // closes f_inner's chain
          r.set_label("r" + std::to_string(i));
        }
        rt::AllTypes::CountsEntry entry = w.add_counts();
        entry.set_key("a");
        entry.set_value(-1);
        entry = w.add_counts();
        entry.set_key("b");
        entry.set_value(2);
        w.set_choice_string("ignored: the later member wins");
        w.set_choice_inner().set_value(9);
        perfetto::protos::rtzero::DebugAnnotation annotation =
            w.set_f_annotation();
        annotation.set_name("imported");
        annotation.set_pointer_value(0x1000);
      },
      &m));
  EXPECT_EQ(m.f_inner().value(), 1);
  EXPECT_EQ(m.f_inner().child().value(), 2);
  EXPECT_EQ(m.f_inner().child().child().label(), "leaf");
  EXPECT_FALSE(m.f_inner().child().child().has_child());
  ASSERT_EQ(m.r_inner_size(), 2);
  EXPECT_EQ(m.r_inner(0).label(), "r0");
  EXPECT_EQ(m.r_inner(1).label(), "r1");
  ASSERT_EQ(m.counts_size(), 2);
  EXPECT_EQ(m.counts().at("a"), -1);
  EXPECT_EQ(m.counts().at("b"), 2);
  EXPECT_EQ(m.choice_case(), pb::AllTypes::kChoiceInner);
  EXPECT_EQ(m.choice_inner().value(), 9);
  EXPECT_EQ(m.f_annotation().name(), "imported");
  EXPECT_EQ(m.f_annotation().pointer_value(), 0x1000u);
  EXPECT_TRUE(m.unknown_fields().empty());
}

TEST(GeneratedCodeTest, MultiByteTagsExactBytes) {
  std::string grouped;
  pb::AllTypes m;
  ASSERT_TRUE(RoundTrip(
      [](rt::AllTypes w) {
        w.set_f_color(rt::Color::COLOR_RED);   // field 16
        w.set_f_three_byte_tag(1);             // field 2048
        w.set_f_four_byte_tag().set_value(5);  // field 262144
        w.set_f_max_field_number("z");         // field 2^29 - 1
      },
      &m, &grouped));
  EXPECT_EQ(grouped,
            std::string("\x80\x01\x01"                // 16 << 3 | 0, 1
                        "\x80\x80\x01\x01"            // 2048 << 3 | 0, 1
                        "\x83\x80\x80\x01"            // 262144 << 3 | 3
                        "\x08\x05"                    //   value = 5
                        "\x84\x80\x80\x01"            // 262144 << 3 | 4
                        "\xfa\xff\xff\xff\x0f\x01z",  // (2^29-1) << 3 | 2
                        24));
  EXPECT_EQ(m.f_color(), pb::COLOR_RED);
  EXPECT_EQ(m.f_three_byte_tag(), 1u);
  EXPECT_EQ(m.f_four_byte_tag().value(), 5);
  EXPECT_EQ(m.f_max_field_number(), "z");
}

// A message that declares extensions is the extended message's writer plus
// the extension fields; libprotobuf reads them back as the extensions.
TEST(GeneratedCodeTest, ExtensionsWriteThroughTheExtendedMessagesWriter) {
  static_assert(rt::AppPacket::kAppInnerFieldNumber == 1500);
  static_assert(rt::AppPacket::kAppDeltaFieldNumber == 1999);
  static_assert(std::is_base_of<perfetto::protos::rtzero::TracePacket,
                                rt::AppPacket>::value);
  static_assert(std::is_base_of<rt::AllTypes, rt::AllTypesExtension>::value);
  PacketCapture capture;
  {
    auto handle = capture.writer()->NewTracePacket();
    rt::AppPacket packet(handle);
    packet.set_timestamp(77);  // a field of TracePacket itself
    rt::AllTypes::Inner inner = packet.set_app_inner();
    inner.set_value(5);
    inner.set_label("in");
    packet.add_app_labels("a");
    packet.add_app_labels("b");
    packet.set_app_delta(-3);
  }
  {
    auto handle = capture.writer()->NewTracePacket();
    rt::AllTypesExtension message(handle);
    message.set_f_uint32(1);
    message.set_ext_value(9);
  }
  std::vector<std::string> packets = capture.Drain();
  ASSERT_EQ(packets.size(), 2u);
  std::string flat;
  ASSERT_TRUE(PacketCapture::Ungroup(packets[0], &flat));
  perfetto::protos::TracePacket packet;
  ASSERT_TRUE(packet.ParseFromString(flat));
  EXPECT_EQ(packet.timestamp(), 77u);
  EXPECT_EQ(packet.GetExtension(pb::AppPacket::app_inner).value(), 5);
  EXPECT_EQ(packet.GetExtension(pb::AppPacket::app_inner).label(), "in");
  ASSERT_EQ(packet.ExtensionSize(pb::AppPacket::app_labels), 2);
  EXPECT_EQ(packet.GetExtension(pb::AppPacket::app_labels, 1), "b");
  EXPECT_EQ(packet.GetExtension(pb::AppPacket::app_delta), -3);
  ASSERT_TRUE(PacketCapture::Ungroup(packets[1], &flat));
  pb::AllTypes all;
  ASSERT_TRUE(all.ParseFromString(flat));
  EXPECT_EQ(all.f_uint32(), 1u);
  EXPECT_EQ(all.GetExtension(pb::AllTypesExtension::ext_value), 9u);
}

}  // namespace
}  // namespace ringtrace
