/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/ftrace/page_parser.h"

#include <string.h>

#include <vector>

#include <gtest/gtest.h>

#include "src/traced_probes/ftrace/test/page_builder.h"

namespace ringtrace {
namespace ftrace {
namespace {

using test::PageBuilder;

struct Parsed {
  PageError header_error = PageError::kNone;
  PageHeader header;
  std::vector<uint64_t> timestamps;
  std::vector<std::vector<uint8_t>> records;
  PageError error = PageError::kNone;
};

Parsed ParseAll(const std::vector<uint8_t>& page,
                const HeaderPage& layout = HeaderPage()) {
  Parsed p;
  p.header_error = ParsePageHeader(page.data(), page.size(), layout, &p.header);
  if (p.header_error != PageError::kNone)
    return p;
  PageEventIterator it(page.data(), layout, p.header);
  RawEvent e;
  while (it.Next(&e)) {
    // Every record lies inside the page.
    EXPECT_GE(e.data, page.data());
    EXPECT_LE(e.data + e.size, page.data() + page.size());
    p.timestamps.push_back(e.timestamp);
    p.records.emplace_back(e.data, e.data + e.size);
  }
  p.error = it.error();
  return p;
}

std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i++)
    v[i] = static_cast<uint8_t>(seed + i);
  return v;
}

TEST(PageParserTest, KernelConstants) {
  // Bits and type values of kernel/trace/ring_buffer.c and
  // include/linux/ring_buffer.h.
  EXPECT_EQ(kMissedEvents, 0x80000000u);
  EXPECT_EQ(kMissedStored, 0x40000000u);
  EXPECT_EQ(kTypeDataMax, 28u);
  EXPECT_EQ(kTypePadding, 29u);
  EXPECT_EQ(kTypeTimeExtend, 30u);
  EXPECT_EQ(kTypeTimeStamp, 31u);
  EXPECT_EQ(kTimeShift, 27u);
  EXPECT_EQ(kTimeStampMsb, 0xf800000000000000ull);
}

TEST(PageParserTest, EmptyPage) {
  const Parsed p = ParseAll(PageBuilder().SetTimestamp(77).Build());
  ASSERT_EQ(p.header_error, PageError::kNone);
  EXPECT_EQ(p.header.timestamp, 77u);
  EXPECT_EQ(p.header.data_length, 0u);
  EXPECT_FALSE(p.header.lost_events);
  EXPECT_TRUE(p.records.empty());
  EXPECT_EQ(p.error, PageError::kNone);
}

TEST(PageParserTest, DataEventsAccumulateDeltas) {
  const std::vector<uint8_t> a = Bytes(8, 1);
  const std::vector<uint8_t> b = Bytes(64, 50);
  const std::vector<uint8_t> c = Bytes(112, 9);  // the largest type_len form
  const std::vector<uint8_t> d = Bytes(116, 3);  // needs the length word
  const std::vector<uint8_t> page = PageBuilder()
                                        .SetTimestamp(1000)
                                        .AddEvent(5, a)
                                        .AddEvent(0, b)
                                        .AddEvent((1u << 27) - 1, c)
                                        .AddEvent(10, d)
                                        .Build();
  const Parsed p = ParseAll(page);
  ASSERT_EQ(p.header_error, PageError::kNone);
  EXPECT_EQ(p.error, PageError::kNone);
  ASSERT_EQ(p.records.size(), 4u);
  EXPECT_EQ(p.records[0], a);
  EXPECT_EQ(p.records[1], b);
  EXPECT_EQ(p.records[2], c);
  EXPECT_EQ(p.records[3], d);
  EXPECT_EQ(p.timestamps[0], 1005u);
  EXPECT_EQ(p.timestamps[1], 1005u);
  EXPECT_EQ(p.timestamps[2], 1005u + (1u << 27) - 1);
  EXPECT_EQ(p.timestamps[3], 1015u + (1u << 27) - 1);
  // The type_len forms: 8 bytes -> 2, 112 -> 28; 116 -> 0 plus length.
  uint32_t w;
  memcpy(&w, page.data() + 16, 4);
  EXPECT_EQ(w & 31, 2u);
}

TEST(PageParserTest, LengthWordFormAndPaddedRecords) {
  const std::vector<uint8_t> odd = Bytes(13, 7);
  const Parsed p = ParseAll(PageBuilder()
                                .AddEvent(1, odd, /*force_length_word=*/true)
                                .AddEvent(1, odd)
                                .Build());
  ASSERT_EQ(p.records.size(), 2u);
  // Both forms carry the record padded to 4 bytes.
  for (const auto& r : p.records) {
    ASSERT_EQ(r.size(), 16u);
    EXPECT_TRUE(std::equal(odd.begin(), odd.end(), r.begin()));
  }
}

TEST(PageParserTest, TimeExtendAddsToTheRunningTime) {
  const uint64_t extend = (uint64_t{3} << 40) + 12345;
  const Parsed p = ParseAll(PageBuilder()
                                .SetTimestamp(100)
                                .AddEvent(1, Bytes(8, 0))
                                .AddTimeExtend(extend)
                                .AddEvent(7, Bytes(8, 0))
                                .AddEvent(2, Bytes(8, 0))
                                .Build());
  ASSERT_EQ(p.timestamps.size(), 3u);
  EXPECT_EQ(p.timestamps[0], 101u);
  EXPECT_EQ(p.timestamps[1], 101u + extend + 7);
  EXPECT_EQ(p.timestamps[2], 101u + extend + 9);
}

TEST(PageParserTest, AbsoluteTimeStampReplacesTheRunningTime) {
  const uint64_t abs = (uint64_t{1} << 50) + 99;
  const Parsed p = ParseAll(PageBuilder()
                                .SetTimestamp(5000)
                                .AddEvent(1, Bytes(8, 0))
                                .AddTimeStamp(abs)
                                .AddEvent(4, Bytes(8, 0))
                                .Build());
  ASSERT_EQ(p.timestamps.size(), 2u);
  EXPECT_EQ(p.timestamps[0], 5001u);
  EXPECT_EQ(p.timestamps[1], abs + 4);
}

TEST(PageParserTest, AbsoluteTimeStampTakesTheTopBitsFromTheRunningTime) {
  // A clock with the top 5 bits set: the stamp carries only 59 bits.
  const uint64_t msb = uint64_t{0x18} << 59;  // bits 62 and 63
  const uint64_t page_ts = msb | 1000;
  {
    const Parsed p = ParseAll(PageBuilder()
                                  .SetTimestamp(page_ts)
                                  .AddTimeStamp(msb | 5000)
                                  .AddEvent(0, Bytes(8, 0))
                                  .Build());
    ASSERT_EQ(p.timestamps.size(), 1u);
    EXPECT_EQ(p.timestamps[0], msb | 5000);
  }
  {
    // The low 59 bits wrapped since the running time: carry into the top.
    const uint64_t low_max = (uint64_t{1} << 59) - 10;
    const Parsed p = ParseAll(PageBuilder()
                                  .SetTimestamp(msb | low_max)
                                  .AddTimeStamp(3)
                                  .AddEvent(0, Bytes(8, 0))
                                  .Build());
    ASSERT_EQ(p.timestamps.size(), 1u);
    EXPECT_EQ(p.timestamps[0], (msb | 3) + (uint64_t{1} << 59));
  }
}

TEST(PageParserTest, PaddingIsSkippedWithoutItsDelta) {
  const std::vector<uint8_t> a = Bytes(8, 1);
  const std::vector<uint8_t> b = Bytes(20, 2);
  const Parsed p = ParseAll(PageBuilder()
                                .SetTimestamp(10)
                                .AddEvent(1, a)
                                .AddPadding(24, /*time_delta=*/500)
                                .AddEvent(2, b)
                                .Build());
  EXPECT_EQ(p.error, PageError::kNone);
  ASSERT_EQ(p.records.size(), 2u);
  EXPECT_EQ(p.records[1], b);
  EXPECT_EQ(p.timestamps[1], 13u);
}

TEST(PageParserTest, NullPaddingEndsThePage) {
  const Parsed p = ParseAll(PageBuilder()
                                .AddEvent(1, Bytes(8, 1))
                                .AddNullPadding()
                                .AddEvent(1, Bytes(8, 2))
                                .Build());
  EXPECT_EQ(p.error, PageError::kNone);
  EXPECT_EQ(p.records.size(), 1u);
}

TEST(PageParserTest, LostEventsFlagAndStoredCount) {
  {
    const Parsed p = ParseAll(
        PageBuilder().SetLost(false, 0).AddEvent(1, Bytes(8, 0)).Build());
    ASSERT_EQ(p.header_error, PageError::kNone);
    EXPECT_TRUE(p.header.lost_events);
    EXPECT_FALSE(p.header.lost_count_stored);
    EXPECT_EQ(p.header.data_length, 12u);
    EXPECT_EQ(p.records.size(), 1u);
  }
  {
    const Parsed p = ParseAll(
        PageBuilder().SetLost(true, 4242).AddEvent(1, Bytes(8, 0)).Build());
    ASSERT_EQ(p.header_error, PageError::kNone);
    EXPECT_TRUE(p.header.lost_events);
    EXPECT_TRUE(p.header.lost_count_stored);
    EXPECT_EQ(p.header.lost_count, 4242u);
    // The stored count is after the data, not an event.
    EXPECT_EQ(p.header.data_length, 12u);
    EXPECT_EQ(p.records.size(), 1u);
  }
}

// What a 64-bit kernel writes for a page with lost events (read from
// trace_pipe_raw after an overrun): the flags sign-extended into the upper
// half. Only the low 32 bits count.
TEST(PageParserTest, CommitUpperHalfIsIgnored) {
  PageBuilder b;
  b.AddEvent(1, Bytes(8, 0));
  const uint64_t kernel_form = 0xffffffffc0000000ull | b.data_size();
  std::vector<uint8_t> page = b.Build();
  memcpy(page.data() + 8, &kernel_form, 8);
  const uint64_t count = 1909;
  memcpy(page.data() + 16 + b.data_size(), &count, 8);
  Parsed p = ParseAll(page);
  ASSERT_EQ(p.header_error, PageError::kNone);
  EXPECT_TRUE(p.header.lost_events);
  EXPECT_TRUE(p.header.lost_count_stored);
  EXPECT_EQ(p.header.lost_count, 1909u);
  EXPECT_EQ(p.header.data_length, 12u);
  EXPECT_EQ(p.records.size(), 1u);
  // A kernel that adds the flag unsigned, and junk above: the same page.
  const uint64_t other_form = 0x12345678c0000000ull | b.data_size();
  memcpy(page.data() + 8, &other_form, 8);
  p = ParseAll(page);
  ASSERT_EQ(p.header_error, PageError::kNone);
  EXPECT_EQ(p.header.lost_count, 1909u);
  // The builder writes the kernel's form.
  uint64_t built;
  const std::vector<uint8_t> from_builder =
      PageBuilder().SetLost(true, 5).AddEvent(1, Bytes(8, 0)).Build();
  memcpy(&built, from_builder.data() + 8, 8);
  EXPECT_EQ(built, kernel_form);
}

TEST(PageParserTest, ThirtyTwoBitLayout) {
  HeaderPage layout;
  layout.commit_size = 4;
  layout.data_offset = 12;
  const std::vector<uint8_t> r = Bytes(24, 4);
  const std::vector<uint8_t> page = PageBuilder(4096, layout)
                                        .SetTimestamp(9)
                                        .SetLost(true, 3)
                                        .AddEvent(1, r)
                                        .Build();
  const Parsed p = ParseAll(page, layout);
  ASSERT_EQ(p.header_error, PageError::kNone);
  EXPECT_EQ(p.header.lost_count, 3u);
  ASSERT_EQ(p.records.size(), 1u);
  EXPECT_EQ(p.records[0], r);
  EXPECT_EQ(p.timestamps[0], 10u);
}

TEST(PageParserTest, InvalidHeaders) {
  const std::vector<uint8_t> good = PageBuilder().Build();
  PageHeader h;
  EXPECT_EQ(ParsePageHeader(good.data(), 15, HeaderPage(), &h),
            PageError::kShortPage);
  EXPECT_EQ(ParsePageHeader(good.data(), 0, HeaderPage(), &h),
            PageError::kShortPage);
  // Data longer than the page.
  EXPECT_EQ(ParseAll(PageBuilder().OverrideCommit(4081).Build()).header_error,
            PageError::kInvalidPageHeader);
  // Bits 27..29 are not flags: a length past any page.
  EXPECT_EQ(ParseAll(PageBuilder().OverrideCommit(uint64_t{1} << 29).Build())
                .header_error,
            PageError::kInvalidPageHeader);
  // A full page has no room for a stored count.
  EXPECT_EQ(ParseAll(PageBuilder()
                         .OverrideCommit(4080 | kMissedEvents | kMissedStored)
                         .Build())
                .header_error,
            PageError::kInvalidPageHeader);
  // Exactly room for it.
  EXPECT_EQ(ParseAll(PageBuilder()
                         .OverrideCommit(4072 | kMissedEvents | kMissedStored)
                         .Build())
                .header_error,
            PageError::kNone);
  // STORED without MISSED is not something the kernel writes.
  EXPECT_EQ(ParseAll(PageBuilder().OverrideCommit(kMissedStored).Build())
                .header_error,
            PageError::kInvalidPageHeader);
  HeaderPage odd;
  odd.commit_size = 2;
  EXPECT_EQ(ParsePageHeader(good.data(), good.size(), odd, &h),
            PageError::kInvalidPageHeader);
}

// Each malformed event ends the parse with its error; the events before it
// are kept.
TEST(PageParserTest, MalformedEvents) {
  struct Case {
    const char* what;
    std::vector<uint32_t> words;
    size_t extra_bytes;  // raw bytes after the words (a cut word)
    PageError error;
  };
  const std::vector<Case> cases = {
      {"cut header", {}, 2, PageError::kShortEventHeader},
      {"padding without length",
       {29u | (1u << 5)},
       0,
       PageError::kShortPaddingLength},
      {"padding length 0",
       {29u | (1u << 5), 0},
       0,
       PageError::kInvalidPaddingLength},
      {"padding past the end",
       {29u | (1u << 5), 100},
       0,
       PageError::kInvalidPaddingLength},
      {"time extend cut", {30u}, 0, PageError::kShortTimeExtend},
      {"time stamp cut", {31u}, 0, PageError::kShortTimeStamp},
      {"data without length", {0u}, 0, PageError::kShortDataLength},
      {"data length 0", {0u, 0}, 0, PageError::kZeroDataLength},
      {"data length 4", {0u, 4}, 0, PageError::kZeroDataLength},
      {"data length past the end",
       {0u, 12, 1},
       0,
       PageError::kInvalidDataLength},
      {"type_len past the end", {28u, 1, 2}, 0, PageError::kInvalidDataLength},
  };
  for (const Case& c : cases) {
    PageBuilder b;
    b.SetTimestamp(1).AddEvent(3, Bytes(8, 5));
    for (uint32_t w : c.words)
      b.AddWord(w);
    b.AddRaw(std::vector<uint8_t>(c.extra_bytes, 0xaa));
    const Parsed p = ParseAll(b.Build());
    ASSERT_EQ(p.header_error, PageError::kNone) << c.what;
    EXPECT_EQ(p.error, c.error) << c.what;
    EXPECT_EQ(p.records.size(), 1u) << c.what;
    EXPECT_NE(PageErrorName(p.error), std::string("unknown"));
  }
}

TEST(PageParserTest, TimeOverflowIsAnError) {
  const Parsed p = ParseAll(PageBuilder()
                                .SetTimestamp(~uint64_t{0} - 2)
                                .AddEvent(1, Bytes(8, 0))
                                .AddEvent(5, Bytes(8, 0))
                                .Build());
  EXPECT_EQ(p.records.size(), 1u);
  EXPECT_EQ(p.error, PageError::kTimeOverflow);
  const Parsed q = ParseAll(
      PageBuilder().SetTimestamp(~uint64_t{0} - 2).AddTimeExtend(100).Build());
  EXPECT_EQ(q.error, PageError::kTimeOverflow);
}

// Every commit length, and every byte of a valid page set to values that
// hit each type_len: the parse ends, within data_length / 4 steps, with
// every record inside the page.
TEST(PageParserTest, CorruptionNeverEscapesThePage) {
  PageBuilder b;
  b.SetTimestamp(1 << 20)
      .AddEvent(1, Bytes(8, 1))
      .AddTimeExtend(1 << 28)
      .AddEvent(2, Bytes(116, 2))
      .AddPadding(16)
      .AddTimeStamp(5 << 20)
      .AddEvent(3, Bytes(40, 3));
  const size_t used = b.data_size();
  const std::vector<uint8_t> valid = b.Build();
  ASSERT_EQ(ParseAll(valid).records.size(), 3u);

  for (size_t len = 0; len <= used + 8; len++) {
    std::vector<uint8_t> page = valid;
    const uint64_t commit = len;
    memcpy(page.data() + 8, &commit, 8);
    const Parsed p = ParseAll(page);
    ASSERT_EQ(p.header_error, PageError::kNone);
    EXPECT_LE(p.records.size(), len / 4);
  }
  const uint8_t values[] = {0x00, 0x01, 0x1c, 0x1d, 0x1e, 0x1f, 0x7f, 0xff};
  size_t errors = 0;
  for (size_t at = 16; at < 16 + used; at++) {
    for (uint8_t v : values) {
      std::vector<uint8_t> page = valid;
      page[at] = v;
      const Parsed p = ParseAll(page);
      ASSERT_EQ(p.header_error, PageError::kNone);
      EXPECT_LE(p.records.size(), used / 4);
      if (p.error != PageError::kNone)
        errors++;
    }
  }
  EXPECT_GT(errors, 0u);  // the corruptions were seen, not all benign
}

}  // namespace
}  // namespace ftrace
}  // namespace ringtrace
