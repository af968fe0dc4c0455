/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/packed_repeated.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/tracing/core/encoding/test/packet_capture.h"

namespace ringtrace {
namespace encoding {
namespace {

std::string Bytes(const internal::PackedBuffer& buffer) {
  return std::string(reinterpret_cast<const char*>(buffer.data()),
                     buffer.size());
}

enum class SmallEnum : int32_t { kMinusOne = -1, kTwo = 2 };

TEST(PackedRepeatedTest, VarIntEncodingsMatchProtobuf) {
  PackedVarInt packed;
  EXPECT_EQ(packed.size(), 0u);
  packed.Append(uint32_t{0});
  packed.Append(uint32_t{300});
  packed.Append(true);
  packed.Append(int32_t{-1});  // sign-extended: ten bytes
  packed.Append(SmallEnum::kTwo);
  packed.Append(SmallEnum::kMinusOne);  // int32 on the wire: ten bytes
  EXPECT_EQ(Bytes(packed),
            std::string("\x00"
                        "\xac\x02"
                        "\x01"
                        "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"
                        "\x02"
                        "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
                        25));
  packed.Reset();
  EXPECT_EQ(packed.size(), 0u);
  packed.Append(~uint64_t{0});
  EXPECT_EQ(Bytes(packed),
            std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10));
}

TEST(PackedRepeatedTest, ZigZagEncodings) {
  PackedZigZagVarInt packed;
  packed.Append(0);
  packed.Append(-1);
  packed.Append(1);
  packed.Append(-64);
  packed.Append(64);
  packed.Append(INT64_MIN);
  EXPECT_EQ(Bytes(packed),
            std::string("\x00"
                        "\x01"
                        "\x02"
                        "\x7f"
                        "\x80\x01"
                        "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
                        16));
}

TEST(PackedRepeatedTest, FieldsOnTheWire) {
  PacketCapture capture;
  {
    auto handle = capture.writer()->NewTracePacket();
    PackedVarInt varints;
    varints.Append(uint32_t{1});
    varints.Append(uint32_t{150});
    handle->AppendBytes(4, varints.data(), varints.size());
    const uint32_t fixed[] = {1, 0x01020304};
    AppendPackedFixed(handle.get(), 5, fixed, 2);
    const double doubles[] = {1.0};
    AppendPackedFixed(handle.get(), 6, doubles, 1);
    AppendPackedFixed(handle.get(), 7, fixed, 0);  // empty: length 0
  }
  const std::vector<std::string> packets = capture.Drain();
  ASSERT_EQ(packets.size(), 1u);
  EXPECT_EQ(packets[0], std::string("\x22\x03\x01\x96\x01"
                                    "\x2a\x08\x01\x00\x00\x00\x04\x03\x02\x01"
                                    "\x32\x08\x00\x00\x00\x00\x00\x00\xf0\x3f"
                                    "\x3a\x00",
                                    27));
}

}  // namespace
}  // namespace encoding
}  // namespace ringtrace
