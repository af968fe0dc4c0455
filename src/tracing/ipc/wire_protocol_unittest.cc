/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/ipc/wire_protocol.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace ringtrace {
namespace ipc {
namespace {

std::vector<uint8_t> Bytes(const uint8_t* p, size_t n) {
  return std::vector<uint8_t>(p, p + n);
}

std::vector<uint8_t> EncodedHello(const HelloMsg& msg) {
  uint8_t buf[kMaxMessageSize];
  const size_t n = EncodeHello(msg, buf, sizeof(buf));
  return Bytes(buf, n);
}

base::Status Decode(const std::vector<uint8_t>& bytes, Message* msg) {
  return DecodeMessage(bytes.data(), bytes.size(), msg);
}

// The layout is part of the ABI between producer and service binaries of
// different builds: pin it byte by byte.
TEST(WireProtocolTest, HelloLayoutIsByteExact) {
  HelloMsg hello;
  hello.protocol_version = 1;
  hello.requested_ring_bytes = 0x00040000;
  hello.requested_chunk_size = 0x1000;
  hello.name = "app";
  const std::vector<uint8_t> expected = {
      'R', 'T',  'I', 'P',  // magic
      1,   0,    0,   0,    // type kHello
      19,  0,    0,   0,    // payload: 16 + 3
      1,   0,    0,   0,    // protocol_version
      0,   0,    4,   0,    // requested_ring_bytes 256 KiB
      0,   0x10, 0,   0,    // requested_chunk_size 4096
      3,   0,    0,   0,    // name_size
      'a', 'p',  'p'};
  EXPECT_EQ(EncodedHello(hello), expected);

  Message msg;
  ASSERT_TRUE(Decode(expected, &msg).ok());
  EXPECT_EQ(msg.type, MessageType::kHello);
  EXPECT_EQ(msg.hello.protocol_version, 1u);
  EXPECT_EQ(msg.hello.requested_ring_bytes, 0x40000u);
  EXPECT_EQ(msg.hello.requested_chunk_size, 0x1000u);
  EXPECT_EQ(msg.hello.name, "app");
}

TEST(WireProtocolTest, HelloReplyAndDrainRequestLayouts) {
  HelloReplyMsg reply;
  reply.status = HelloStatus::kTooManyProducers;
  reply.producer_id = 0x01020304;
  reply.chunk_size = 4096;
  reply.num_chunks = 64;
  reply.target_buffer = 7;
  uint8_t buf[kMaxMessageSize];
  size_t n = EncodeHelloReply(reply, buf, sizeof(buf));
  const std::vector<uint8_t> expected_reply = {
      'R', 'T',  'I', 'P', 2, 0, 0, 0, 20, 0, 0, 0,  // header
      2,   0,    0,   0,                             // status
      4,   3,    2,   1,                             // producer_id
      0,   0x10, 0,   0,                             // chunk_size
      64,  0,    0,   0,                             // num_chunks
      7,   0,    0,   0};                            // target_buffer
  EXPECT_EQ(Bytes(buf, n), expected_reply);
  Message msg;
  ASSERT_TRUE(Decode(expected_reply, &msg).ok());
  EXPECT_EQ(msg.type, MessageType::kHelloReply);
  EXPECT_EQ(msg.hello_reply.status, HelloStatus::kTooManyProducers);
  EXPECT_EQ(msg.hello_reply.producer_id, 0x01020304u);
  EXPECT_EQ(msg.hello_reply.chunk_size, 4096u);
  EXPECT_EQ(msg.hello_reply.num_chunks, 64u);
  EXPECT_EQ(msg.hello_reply.target_buffer, 7u);

  n = EncodeDrainRequest(buf, sizeof(buf));
  const std::vector<uint8_t> expected_drain = {'R', 'T', 'I', 'P', 3, 0,
                                               0,   0,   0,   0,   0, 0};
  EXPECT_EQ(Bytes(buf, n), expected_drain);
  ASSERT_TRUE(Decode(expected_drain, &msg).ok());
  EXPECT_EQ(msg.type, MessageType::kDrainRequest);
}

TEST(WireProtocolTest, LossReportLayoutIsByteExact) {
  DrainRequestMsg report;
  report.flags = kLossReportFinal;
  report.num_entries = 1;
  report.entries[0].writer_id = 0x0102;
  report.entries[0].target_buffer = 0x0304;
  report.entries[0].packets_dropped_before_end = 0x0a0b0c0d0e0f1011ull;
  report.entries[0].packets_dropped_after_end = 3;
  report.entries[0].bytes_dropped = 0x100000000ull;
  report.entries[0].stall_timeouts = 5;
  uint8_t buf[kMaxMessageSize];
  const size_t n = EncodeLossReport(report, buf, sizeof(buf));
  const std::vector<uint8_t> expected = {
      'R',  'T',  'I',  'P',  3,    0,    0,    0,    44, 0, 0, 0,  // header
      1,    0,    0,    0,                             // flags: final
      1,    0,    0,    0,                             // num_entries
      2,    1,    4,    3,                             // writer, buffer
      0x11, 0x10, 0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a,  // before end
      3,    0,    0,    0,    0,    0,    0,    0,     // after end
      0,    0,    0,    0,    1,    0,    0,    0,     // bytes
      5,    0,    0,    0,    0,    0,    0,    0};    // stall timeouts
  EXPECT_EQ(Bytes(buf, n), expected);
  Message msg;
  ASSERT_TRUE(Decode(expected, &msg).ok());
  EXPECT_EQ(msg.type, MessageType::kDrainRequest);
  ASSERT_TRUE(msg.drain_request.has_loss_report);
  EXPECT_EQ(msg.drain_request.flags, kLossReportFinal);
  ASSERT_EQ(msg.drain_request.num_entries, 1u);
  const WriterLossEntry& e = msg.drain_request.entries[0];
  EXPECT_EQ(e.writer_id, 0x0102u);
  EXPECT_EQ(e.target_buffer, 0x0304u);
  EXPECT_EQ(e.packets_dropped_before_end, 0x0a0b0c0d0e0f1011ull);
  EXPECT_EQ(e.packets_dropped_after_end, 3u);
  EXPECT_EQ(e.bytes_dropped, 0x100000000ull);
  EXPECT_EQ(e.stall_timeouts, 5u);

  // A plain DrainRequest decodes without a report (a reused Message too).
  const size_t plain = EncodeDrainRequest(buf, sizeof(buf));
  ASSERT_TRUE(DecodeMessage(buf, plain, &msg).ok());
  EXPECT_FALSE(msg.drain_request.has_loss_report);

  // The largest report fits a message.
  report.flags = 0;
  report.num_entries = kMaxLossEntriesPerMessage;
  for (size_t i = 0; i < kMaxLossEntriesPerMessage; i++)
    report.entries[i].writer_id = static_cast<uint32_t>(0xffff - i);
  const size_t full = EncodeLossReport(report, buf, sizeof(buf));
  EXPECT_EQ(full, kHeaderSize + 8 + 36 * kMaxLossEntriesPerMessage);
  ASSERT_TRUE(DecodeMessage(buf, full, &msg).ok());
  EXPECT_EQ(msg.drain_request.num_entries, kMaxLossEntriesPerMessage);
}

TEST(WireProtocolTest, MalformedLossReportsAreRejected) {
  DrainRequestMsg report;
  report.num_entries = 1;
  report.entries[0].writer_id = 7;
  uint8_t buf[kMaxMessageSize];
  const size_t n = EncodeLossReport(report, buf, sizeof(buf));
  ASSERT_GT(n, 0u);
  Message msg;
  ASSERT_TRUE(DecodeMessage(buf, n, &msg).ok());

  // Each mutation of a valid report, and what it breaks.
  struct Mutation {
    const char* what;
    size_t offset;
    uint8_t value;
  };
  const Mutation mutations[] = {
      {"unknown flag", kHeaderSize, 2},
      {"more entries than sent", kHeaderSize + 4, 2},
      {"more entries than allowed", kHeaderSize + 4, 7},
      {"no entry without the final flag", kHeaderSize + 4, 0},
      {"writer id 0", kHeaderSize + 8, 0},
  };
  for (const Mutation& m : mutations) {
    std::vector<uint8_t> bytes(buf, buf + n);
    bytes[m.offset] = m.value;
    EXPECT_FALSE(Decode(bytes, &msg).ok()) << m.what;
  }
  for (size_t cut = kHeaderSize + 1; cut < n; cut++) {
    std::vector<uint8_t> bytes(buf, buf + cut);
    bytes[8] = static_cast<uint8_t>(cut - kHeaderSize);  // consistent size
    EXPECT_FALSE(Decode(bytes, &msg).ok()) << cut;
  }

  // The encoder refuses the same reports.
  report.flags = 2;
  EXPECT_EQ(EncodeLossReport(report, buf, sizeof(buf)), 0u);
  report.flags = 0;
  report.num_entries = 0;
  EXPECT_EQ(EncodeLossReport(report, buf, sizeof(buf)), 0u);
  report.flags = kLossReportFinal;
  EXPECT_EQ(EncodeLossReport(report, buf, sizeof(buf)), kHeaderSize + 8);
  report.num_entries = kMaxLossEntriesPerMessage + 1;
  EXPECT_EQ(EncodeLossReport(report, buf, sizeof(buf)), 0u);
  report.num_entries = 1;
  report.entries[0].writer_id = 0x10000;
  EXPECT_EQ(EncodeLossReport(report, buf, sizeof(buf)), 0u);
  report.entries[0].writer_id = 1;
  report.entries[0].target_buffer = 0x10000;  // not a BufferID
  EXPECT_EQ(EncodeLossReport(report, buf, sizeof(buf)), 0u);
}

TEST(WireProtocolTest, EncodersRefuseWhatTheDecoderWouldReject) {
  HelloMsg hello;
  hello.name = "";
  EXPECT_TRUE(EncodedHello(hello).empty());
  hello.name = std::string(kMaxProducerNameSize + 1, 'x');
  EXPECT_TRUE(EncodedHello(hello).empty());
  hello.name = std::string("tab\there");
  EXPECT_TRUE(EncodedHello(hello).empty());
  hello.name = std::string(kMaxProducerNameSize, 'x');
  EXPECT_EQ(EncodedHello(hello).size(),
            kHeaderSize + 16 + kMaxProducerNameSize);

  uint8_t small[kHeaderSize + 19];
  hello.name = "app";
  EXPECT_EQ(EncodeHello(hello, small, sizeof(small) - 1), 0u);
  EXPECT_EQ(EncodeHello(hello, small, sizeof(small)), sizeof(small));
  EXPECT_EQ(EncodeDrainRequest(small, kHeaderSize - 1), 0u);
  EXPECT_EQ(EncodeHelloReply(HelloReplyMsg(), small, kHeaderSize + 19), 0u);
}

TEST(WireProtocolTest, EveryTruncationAndExtensionIsRejected) {
  HelloMsg hello;
  hello.name = "truncate-me";
  const std::vector<uint8_t> good = EncodedHello(hello);
  Message msg;
  ASSERT_TRUE(Decode(good, &msg).ok());
  for (size_t n = 0; n < good.size(); n++) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + n);
    EXPECT_FALSE(Decode(cut, &msg).ok()) << "accepted " << n << " bytes";
  }
  std::vector<uint8_t> longer = good;
  longer.push_back('x');
  EXPECT_FALSE(Decode(longer, &msg).ok());
}

TEST(WireProtocolTest, MalformedMessagesAreRejectedWithAReason) {
  struct Case {
    const char* what;
    std::vector<uint8_t> bytes;
    const char* reason;  // a word of the expected message
  };
  const std::vector<Case> cases = {
      {"empty", {}, "shorter"},
      {"bad magic", {'R', 'T', 'I', 'X', 3, 0, 0, 0, 0, 0, 0, 0}, "magic"},
      {"unknown type", {'R', 'T', 'I', 'P', 11, 0, 0, 0, 0, 0, 0, 0}, "type"},
      {"type 0", {'R', 'T', 'I', 'P', 0, 0, 0, 0, 0, 0, 0, 0}, "type"},
      {"payload size larger than sent",
       {'R', 'T', 'I', 'P', 3, 0, 0, 0, 1, 0, 0, 0},
       "payload size"},
      {"payload size near 2^32",
       {'R', 'T', 'I', 'P', 3, 0, 0, 0, 0xff, 0xff, 0xff, 0xff},
       "payload size"},
      {"drain request with payload",
       {'R', 'T', 'I', 'P', 3, 0, 0, 0, 1, 0, 0, 0, 0},
       "payload"},
      {"hello shorter than its fixed part",
       {'R', 'T', 'I', 'P', 1, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0},
       "short"},
      {"hello name size lies",
       {'R', 'T', 'I', 'P', 1, 0, 0, 0, 18, 0, 0, 0, 1, 0,   0,
        0,   0,   0,   0,   0, 0, 0, 0, 0,  3, 0, 0, 0, 'a', 'b'},
       "name size"},
      {"hello name unprintable",
       {'R', 'T', 'I', 'P', 1, 0, 0, 0, 18, 0, 0, 0, 1, 0,   0,
        0,   0,   0,   0,   0, 0, 0, 0, 0,  2, 0, 0, 0, 'a', 0},
       "unprintable"},
      {"hello with empty name",
       {'R', 'T', 'I', 'P', 1, 0, 0, 0, 16, 0, 0, 0, 1, 0,
        0,   0,   0,   0,   0, 0, 0, 0, 0,  0, 0, 0, 0, 0},
       "empty"},
      {"reply of the wrong size",
       {'R', 'T', 'I', 'P', 2, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0},
       "expected"},
      {"reply with unknown status",
       {'R', 'T', 'I', 'P', 2, 0, 0, 0, 20, 0, 0, 0, 6, 0, 0, 0,
        0,   0,   0,   0,   0, 0, 0, 0, 0,  0, 0, 0, 0, 0, 0, 0},
       "status"},
  };
  for (const Case& c : cases) {
    Message msg;
    const base::Status s = Decode(c.bytes, &msg);
    EXPECT_FALSE(s.ok()) << c.what;
    EXPECT_NE(s.message().find(c.reason), std::string::npos)
        << c.what << ": " << s.message();
  }

  std::vector<uint8_t> huge(kMaxMessageSize + 1, 0);
  Message msg;
  EXPECT_NE(Decode(huge, &msg).message().find("exceeds"), std::string::npos);
}

std::vector<uint8_t> Encoded(size_t (*encode)(uint32_t, uint8_t*, size_t),
                             uint32_t id) {
  uint8_t buf[kMaxMessageSize];
  return Bytes(buf, encode(id, buf, sizeof(buf)));
}

std::vector<uint8_t> EncodedStart(const StartDataSourceMsg& msg) {
  std::vector<uint8_t> buf(kMaxMessageSize);
  buf.resize(EncodeStartDataSource(msg, buf.data(), buf.size()));
  return buf;
}

TEST(WireProtocolTest, RegisterDataSourceLayoutIsByteExact) {
  RegisterDataSourceMsg reg;
  reg.name = "track_event";
  uint8_t buf[kMaxMessageSize];
  const size_t n = EncodeRegisterDataSource(reg, buf, sizeof(buf));
  const std::vector<uint8_t> expected = {
      'R', 'T', 'I', 'P', 4,   0,   0,   0,   15,  0,   0,  0,  // header
      11,  0,   0,   0,                                         // name_size
      't', 'r', 'a', 'c', 'k', '_', 'e', 'v', 'e', 'n', 't'};
  EXPECT_EQ(Bytes(buf, n), expected);
  Message msg;
  ASSERT_TRUE(Decode(expected, &msg).ok());
  EXPECT_EQ(msg.type, MessageType::kRegisterDataSource);
  EXPECT_EQ(msg.register_data_source.name, "track_event");

  // The longest name fits a producer message.
  reg.name = std::string(kMaxDataSourceNameSize, 'n');
  EXPECT_EQ(EncodeRegisterDataSource(reg, buf, sizeof(buf)),
            kHeaderSize + 4 + kMaxDataSourceNameSize);
  EXPECT_LE(kHeaderSize + 4 + kMaxDataSourceNameSize, kMaxProducerMessageSize);
}

TEST(WireProtocolTest, MalformedRegisterDataSourceIsRejected) {
  RegisterDataSourceMsg reg;
  uint8_t buf[kMaxMessageSize];
  for (const std::string& bad :
       {std::string(), std::string(kMaxDataSourceNameSize + 1, 'x'),
        std::string("new\nline"), std::string("del\x7f"),
        std::string("nul\0", 4)}) {
    reg.name = bad;
    EXPECT_EQ(EncodeRegisterDataSource(reg, buf, sizeof(buf)), 0u) << bad;
    EXPECT_FALSE(IsValidDataSourceName(bad)) << bad;
  }
  reg.name = "ds";
  const size_t n = EncodeRegisterDataSource(reg, buf, sizeof(buf));
  ASSERT_EQ(n, kHeaderSize + 6);
  EXPECT_EQ(EncodeRegisterDataSource(reg, buf, n - 1), 0u);
  const std::vector<uint8_t> good = Bytes(buf, n);
  Message msg;
  // name_size says more, or less, than was sent (payload size consistent).
  for (uint8_t name_size : {0, 1, 3, 0xff}) {
    std::vector<uint8_t> bytes = good;
    bytes[kHeaderSize] = name_size;
    EXPECT_FALSE(Decode(bytes, &msg).ok()) << int(name_size);
  }
  std::vector<uint8_t> huge_size = good;
  huge_size[kHeaderSize + 3] = 0xff;  // name_size near 2^32
  EXPECT_FALSE(Decode(huge_size, &msg).ok());
  // A payload too short for name_size.
  std::vector<uint8_t> short_payload(good.begin(), good.begin() + 14);
  short_payload[8] = 2;
  EXPECT_FALSE(Decode(short_payload, &msg).ok());
  // A trailing byte (payload size consistent).
  std::vector<uint8_t> trailing = good;
  trailing.push_back('x');
  trailing[8] = 7;
  EXPECT_NE(Decode(trailing, &msg).message().find("trailing"),
            std::string::npos);
  // An unprintable byte in the name.
  std::vector<uint8_t> unprintable = good;
  unprintable[kHeaderSize + 5] = 0x80;
  EXPECT_FALSE(Decode(unprintable, &msg).ok());
}

TEST(WireProtocolTest, StartDataSourceLayoutIsByteExact) {
  StartDataSourceMsg start;
  start.instance_id = 0x01020304;
  start.target_buffer = 0xfffe;
  start.clear_period_ms = 5000;
  start.name = "ds";
  start.enabled_categories = {"a*", "b"};
  start.disabled_categories = {"c"};
  start.disabled_tags = {"t*"};
  start.config = std::string("\x0a\x02\x00\xff", 4);  // any bytes
  const std::vector<uint8_t> expected = {
      'R',  'T',  'I', 'P', 5,    0,    0,    0,   64, 0, 0, 0,  // header
      4,    3,    2,   1,                                        // instance_id
      0xfe, 0xff, 0,   0,                             // target_buffer
      0x88, 0x13, 0,   0,                             // clear_period_ms 5000
      2,    0,    0,   0,   'd',  's',                // name
      2,    0,    0,   0,                             // num_enabled
      1,    0,    0,   0,                             // num_disabled
      0,    0,    0,   0,                             // num_enabled_tags
      1,    0,    0,   0,                             // num_disabled_tags
      2,    0,    0,   0,   'a',  '*',                // enabled[0]
      1,    0,    0,   0,   'b',                      // enabled[1]
      1,    0,    0,   0,   'c',                      // disabled[0]
      2,    0,    0,   0,   't',  '*',                // disabled_tags[0]
      4,    0,    0,   0,   0x0a, 0x02, 0x00, 0xff};  // config
  EXPECT_EQ(EncodedStart(start), expected);
  Message msg;
  ASSERT_TRUE(Decode(expected, &msg).ok());
  EXPECT_EQ(msg.type, MessageType::kStartDataSource);
  const StartDataSourceMsg& d = msg.start_data_source;
  EXPECT_EQ(d.instance_id, 0x01020304u);
  EXPECT_EQ(d.target_buffer, 0xfffeu);
  EXPECT_EQ(d.clear_period_ms, 5000u);
  EXPECT_EQ(d.name, "ds");
  EXPECT_EQ(d.enabled_categories, (std::vector<std::string>{"a*", "b"}));
  EXPECT_EQ(d.disabled_categories, (std::vector<std::string>{"c"}));
  EXPECT_TRUE(d.enabled_tags.empty());
  EXPECT_EQ(d.disabled_tags, (std::vector<std::string>{"t*"}));
  EXPECT_EQ(d.config, start.config);

  // Only enabled tags, no config.
  start.config.clear();
  start.enabled_categories.clear();
  start.disabled_categories.clear();
  start.disabled_tags.clear();
  start.enabled_tags = {"slow"};
  const std::vector<uint8_t> tags_only = EncodedStart(start);
  const std::vector<uint8_t> tail = {
      0, 0, 0, 0, 0, 0, 0,   0,   1,   0,   0, 0, 0, 0,
      0, 0, 4, 0, 0, 0, 's', 'l', 'o', 'w', 0, 0, 0, 0};  // config_size 0
  ASSERT_GE(tags_only.size(), tail.size());
  EXPECT_EQ(
      std::vector<uint8_t>(tags_only.end() - tail.size(), tags_only.end()),
      tail);
  ASSERT_TRUE(Decode(tags_only, &msg).ok());
  EXPECT_EQ(msg.start_data_source.enabled_tags,
            (std::vector<std::string>{"slow"}));
  EXPECT_TRUE(msg.start_data_source.config.empty()) << "a reused Message";

  // No pattern at all; a reused Message loses the previous patterns.
  start.enabled_tags.clear();
  const std::vector<uint8_t> bare = EncodedStart(start);
  ASSERT_EQ(bare.size(), kHeaderSize + 16 + 2 + 16 + 4);
  ASSERT_TRUE(Decode(bare, &msg).ok());
  EXPECT_TRUE(msg.start_data_source.enabled_categories.empty());
  EXPECT_TRUE(msg.start_data_source.disabled_categories.empty());
  EXPECT_TRUE(msg.start_data_source.enabled_tags.empty());
  EXPECT_TRUE(msg.start_data_source.disabled_tags.empty());
}

TEST(WireProtocolTest, LargestStartDataSourceFitsAMessage) {
  StartDataSourceMsg start;
  start.instance_id = 1;
  start.name = std::string(kMaxDataSourceNameSize, 'n');
  std::vector<std::string>* const lists[] = {
      &start.enabled_categories, &start.disabled_categories,
      &start.enabled_tags, &start.disabled_tags};
  for (size_t i = 0; i < kMaxCategoryPatterns; i++) {
    std::string pattern(kMaxCategoryPatternSize, 'p');
    pattern[0] = static_cast<char>('A' + i % 26);
    pattern.back() = '*';
    lists[i % 4]->push_back(pattern);
  }
  start.config.assign(kMaxDataSourceConfigSize, '\xa5');
  const std::vector<uint8_t> bytes = EncodedStart(start);
  EXPECT_EQ(bytes.size(), kMaxStartDataSourceSize);
  EXPECT_LE(bytes.size(), kMaxMessageSize);
  Message msg;
  ASSERT_TRUE(Decode(bytes, &msg).ok());
  EXPECT_EQ(msg.start_data_source.enabled_categories, start.enabled_categories);
  EXPECT_EQ(msg.start_data_source.disabled_categories,
            start.disabled_categories);
  EXPECT_EQ(msg.start_data_source.enabled_tags, start.enabled_tags);
  EXPECT_EQ(msg.start_data_source.disabled_tags, start.disabled_tags);
  EXPECT_EQ(msg.start_data_source.config, start.config);

  // One pattern more, or one config byte more, is refused.
  start.config.push_back('x');
  EXPECT_TRUE(EncodedStart(start).empty());
  start.config.pop_back();
  start.enabled_categories.push_back("x");
  EXPECT_TRUE(EncodedStart(start).empty());
  // A buffer one byte short.
  start.enabled_categories.pop_back();
  std::vector<uint8_t> buf(kMaxStartDataSourceSize);
  EXPECT_EQ(EncodeStartDataSource(start, buf.data(), buf.size() - 1), 0u);
  EXPECT_EQ(EncodeStartDataSource(start, buf.data(), buf.size()),
            kMaxStartDataSourceSize);
}

TEST(WireProtocolTest, EncodersRefuseInvalidStartDataSource) {
  StartDataSourceMsg good;
  good.instance_id = 9;
  good.target_buffer = 0xffff;
  good.name = "track_event";
  good.enabled_categories = {"*"};
  ASSERT_FALSE(EncodedStart(good).empty());

  StartDataSourceMsg m = good;
  m.instance_id = 0;
  EXPECT_TRUE(EncodedStart(m).empty()) << "instance id 0";
  m = good;
  m.target_buffer = 0x10000;
  EXPECT_TRUE(EncodedStart(m).empty()) << "target buffer";
  m = good;
  m.name = "";
  EXPECT_TRUE(EncodedStart(m).empty()) << "empty name";
  m = good;
  m.enabled_categories = {""};
  EXPECT_TRUE(EncodedStart(m).empty()) << "empty pattern";
  m = good;
  m.disabled_categories = {std::string(kMaxCategoryPatternSize + 1, 'x')};
  EXPECT_TRUE(EncodedStart(m).empty()) << "long pattern";
  m = good;
  m.disabled_categories = {"tab\t"};
  EXPECT_TRUE(EncodedStart(m).empty()) << "unprintable pattern";
  EXPECT_FALSE(IsValidCategoryPattern("tab\t"));
  EXPECT_TRUE(
      IsValidCategoryPattern(std::string(kMaxCategoryPatternSize, 'x')));
  m = good;
  m.enabled_categories.assign(kMaxCategoryPatterns, "e");
  m.disabled_categories = {"d"};
  EXPECT_TRUE(EncodedStart(m).empty()) << "257 patterns";
  m = good;
  m.enabled_categories.assign(kMaxCategoryPatterns - 1, "e");
  m.disabled_tags = {"d"};
  EXPECT_FALSE(EncodedStart(m).empty()) << "256 patterns";
  m.enabled_tags = {"t"};
  EXPECT_TRUE(EncodedStart(m).empty()) << "257 patterns with tags";
  for (const char* bad : {"a*b", "**", "*x"}) {
    EXPECT_FALSE(IsValidCategoryPattern(bad)) << bad;
    m = good;
    m.enabled_tags = {bad};
    EXPECT_TRUE(EncodedStart(m).empty()) << bad;
  }
  EXPECT_TRUE(IsValidCategoryPattern("*"));
  EXPECT_TRUE(IsValidCategoryPattern("a.b*"));
}

// Writes |v| little-endian at |offset| of |bytes|.
void Poke32(std::vector<uint8_t>* bytes, size_t offset, uint32_t v) {
  for (int i = 0; i < 4; i++)
    (*bytes)[offset + i] = static_cast<uint8_t>(v >> (8 * i));
}

TEST(WireProtocolTest, MalformedStartDataSourceIsRejected) {
  StartDataSourceMsg start;
  start.instance_id = 3;
  start.target_buffer = 1;
  start.name = "ds";
  start.enabled_categories = {"ab"};
  start.disabled_categories = {"c"};
  start.config = "\x08\x01";
  const std::vector<uint8_t> good = EncodedStart(start);
  Message msg;
  ASSERT_TRUE(Decode(good, &msg).ok());
  // Payload offsets: 0 instance, 4 buffer, 8 period, 12 name_size, 16 name,
  // 18 num_enabled, 22 num_disabled, 26 num_enabled_tags, 30
  // num_disabled_tags, 34 size "ab", 38 "ab", 40 size "c", 44 "c", 45
  // config_size, 49 config.
  struct Mutation {
    const char* what;
    size_t offset;
    uint32_t value;
  };
  const Mutation mutations[] = {
      {"instance id 0", 0, 0},
      {"target buffer 65536", 4, 0x10000},
      {"target buffer 2^32-1", 4, 0xffffffff},
      {"name size 0", 12, 0},
      {"name size too large", 12, 3},
      {"name size near 2^32", 12, 0xfffffffc},
      {"more enabled than sent", 18, 2},
      {"fewer enabled than sent", 18, 0},
      {"more disabled than sent", 22, 2},
      {"enabled tags not sent", 26, 1},
      {"disabled tags not sent", 30, 1},
      {"counts summing past the limit", 18, 0x80000000},
      {"counts wrapping 2^32", 22, 0xffffffff},
      {"tag counts wrapping 2^32", 30, 0xffffffff},
      {"257 patterns", 22, 256},
      {"257 patterns with tags", 30, 255},
      {"pattern size 0", 34, 0},
      {"pattern size past the end", 40, 2},
      {"pattern size near 2^32", 40, 0xffffffff},
      {"pattern size above the maximum", 34, 129},
      {"unprintable pattern", 38, 0x1f},
      {"a '*' not at the end", 38, '*'},
      {"unprintable name", 16, 0x7f},
      {"config size past the end", 45, 3},
      {"config size short of the end", 45, 1},
      {"config size near 2^32", 45, 0xfffffffe},
      {"config size above the maximum", 45, 28 * 1024 + 1},
  };
  for (const Mutation& m : mutations) {
    std::vector<uint8_t> bytes = good;
    if (m.offset == 38 || m.offset == 16)
      bytes[kHeaderSize + m.offset] = static_cast<uint8_t>(m.value);
    else
      Poke32(&bytes, kHeaderSize + m.offset, m.value);
    EXPECT_FALSE(Decode(bytes, &msg).ok()) << m.what;
  }
  // Every truncation, with a consistent header, and a trailing byte.
  for (size_t cut = kHeaderSize; cut < good.size(); cut++) {
    std::vector<uint8_t> bytes(good.begin(), good.begin() + cut);
    Poke32(&bytes, 8, static_cast<uint32_t>(cut - kHeaderSize));
    EXPECT_FALSE(Decode(bytes, &msg).ok()) << cut;
  }
  std::vector<uint8_t> longer = good;
  longer.push_back('x');
  Poke32(&longer, 8, static_cast<uint32_t>(longer.size() - kHeaderSize));
  EXPECT_NE(Decode(longer, &msg).message().find("trailing"), std::string::npos);
}

TEST(WireProtocolTest, IdMessageLayouts) {
  struct Case {
    MessageType type;
    size_t (*encode)(uint32_t, uint8_t*, size_t);
    bool id_must_be_nonzero;
  };
  const Case cases[] = {
      {MessageType::kStopDataSource, &EncodeStopDataSource, true},
      {MessageType::kDataSourceStopped, &EncodeDataSourceStopped, true},
      {MessageType::kFlush, &EncodeFlush, false},
      {MessageType::kFlushAck, &EncodeFlushAck, false},
  };
  for (const Case& c : cases) {
    const uint8_t type = static_cast<uint8_t>(c.type);
    const std::vector<uint8_t> expected = {
        'R', 'T', 'I', 'P', type, 0, 0, 0, 4, 0, 0, 0, 0xdd, 0xcc, 0xbb, 0xaa};
    EXPECT_EQ(Encoded(c.encode, 0xaabbccdd), expected) << int(type);
    Message msg;
    ASSERT_TRUE(Decode(expected, &msg).ok()) << int(type);
    EXPECT_EQ(msg.type, c.type);
    EXPECT_EQ(msg.id, 0xaabbccddu);

    // Id 0: refused by both sides where it names an instance.
    std::vector<uint8_t> zero = expected;
    Poke32(&zero, kHeaderSize, 0);
    EXPECT_EQ(Encoded(c.encode, 0).empty(), c.id_must_be_nonzero);
    EXPECT_EQ(Decode(zero, &msg).ok(), !c.id_must_be_nonzero) << int(type);
    // Every other payload size.
    for (size_t n = kHeaderSize; n < expected.size() + 2; n++) {
      if (n == expected.size())
        continue;
      std::vector<uint8_t> bytes(n, 0x11);
      std::copy(expected.begin(), expected.begin() + kHeaderSize,
                bytes.begin());
      Poke32(&bytes, 8, static_cast<uint32_t>(n - kHeaderSize));
      EXPECT_FALSE(Decode(bytes, &msg).ok()) << int(type) << " " << n;
    }
    // Too small a buffer.
    uint8_t buf[kHeaderSize + 4];
    EXPECT_EQ(c.encode(1, buf, sizeof(buf) - 1), 0u);
    EXPECT_EQ(c.encode(1, buf, sizeof(buf)), sizeof(buf));
  }
}

TEST(WireProtocolTest, ProducerMessagesFitTheProducerLimit) {
  HelloMsg hello;
  hello.name = std::string(kMaxProducerNameSize, 'x');
  EXPECT_LE(EncodedHello(hello).size(), kMaxProducerMessageSize);
  DrainRequestMsg report;
  report.num_entries = kMaxLossEntriesPerMessage;
  for (size_t i = 0; i < kMaxLossEntriesPerMessage; i++)
    report.entries[i].writer_id = 1;
  uint8_t buf[kMaxProducerMessageSize];
  EXPECT_GT(EncodeLossReport(report, buf, sizeof(buf)), 0u);
  RegisterDataSourceMsg reg;
  reg.name = std::string(kMaxDataSourceNameSize, 'x');
  EXPECT_GT(EncodeRegisterDataSource(reg, buf, sizeof(buf)), 0u);
  EXPECT_GT(EncodeDataSourceStopped(0xffffffff, buf, sizeof(buf)), 0u);
  EXPECT_GT(EncodeFlushAck(0xffffffff, buf, sizeof(buf)), 0u);
}

std::vector<uint8_t> EncodedCategories(const DataSourceCategoriesMsg& msg) {
  std::vector<uint8_t> buf(kMaxDataSourceCategoriesSize);
  const size_t n = EncodeDataSourceCategories(msg, buf.data(), buf.size());
  buf.resize(n);
  return buf;
}

CategoryDescriptor Cat(const std::string& name,
                       const std::string& description = "",
                       std::vector<std::string> tags = {}) {
  CategoryDescriptor c;
  c.name = name;
  c.description = description;
  c.tags = std::move(tags);
  return c;
}

TEST(WireProtocolTest, DataSourceCategoriesLayoutIsByteExact) {
  DataSourceCategoriesMsg msg;
  msg.data_source = "te";
  msg.categories = {Cat("gfx", "Fr"), Cat("io", "", {"slow", "x"})};
  const std::vector<uint8_t> expected = {
      'R', 'T', 'I', 'P', 10,  0,   0,   0,   54, 0, 0, 0,  // header
      2,   0,   0,   0,   't', 'e',                         // data source
      2,   0,   0,   0,                                     // num_categories
      3,   0,   0,   0,   'g', 'f', 'x',                    // name
      2,   0,   0,   0,   'F', 'r',                         // description
      0,   0,   0,   0,                                     // num_tags
      2,   0,   0,   0,   'i', 'o',                         // name
      0,   0,   0,   0,                                     // no description
      2,   0,   0,   0,                                     // num_tags
      4,   0,   0,   0,   's', 'l', 'o', 'w',               // tag
      1,   0,   0,   0,   'x'};                             // tag
  EXPECT_EQ(EncodedCategories(msg), expected);
  Message decoded;
  ASSERT_TRUE(Decode(expected, &decoded).ok());
  EXPECT_EQ(decoded.type, MessageType::kDataSourceCategories);
  const DataSourceCategoriesMsg& d = decoded.data_source_categories;
  EXPECT_EQ(d.data_source, "te");
  ASSERT_EQ(d.categories.size(), 2u);
  EXPECT_EQ(d.categories[0].name, "gfx");
  EXPECT_EQ(d.categories[0].description, "Fr");
  EXPECT_TRUE(d.categories[0].tags.empty());
  EXPECT_EQ(d.categories[1].name, "io");
  EXPECT_EQ(d.categories[1].description, "");
  EXPECT_EQ(d.categories[1].tags, (std::vector<std::string>{"slow", "x"}));
}

TEST(WireProtocolTest, LargestDataSourceCategoriesFitsItsBound) {
  DataSourceCategoriesMsg msg;
  msg.data_source = std::string(kMaxDataSourceNameSize, 'd');
  for (size_t i = 0; i < kMaxCategoriesPerMessage; i++) {
    CategoryDescriptor c = Cat(std::string(kMaxCategoryNameSize, 'n'),
                               std::string(kMaxCategoryDescriptionSize, ' '));
    c.name[0] = static_cast<char>('a' + i);
    c.tags.assign(kMaxTagsPerCategory, std::string(kMaxCategoryTagSize, 't'));
    msg.categories.push_back(c);
  }
  const std::vector<uint8_t> bytes = EncodedCategories(msg);
  EXPECT_EQ(bytes.size(), kMaxDataSourceCategoriesSize);
  EXPECT_LE(kMaxDataSourceCategoriesSize, kMaxProducerDatagramSize);
  EXPECT_LE(kMaxProducerDatagramSize, kMaxMessageSize);
  Message decoded;
  ASSERT_TRUE(Decode(bytes, &decoded).ok());
  EXPECT_EQ(decoded.data_source_categories.categories.size(),
            kMaxCategoriesPerMessage);
  std::vector<uint8_t> buf(kMaxDataSourceCategoriesSize);
  EXPECT_EQ(EncodeDataSourceCategories(msg, buf.data(), buf.size() - 1), 0u);
  // A datagram past the bound is refused even if it is consistent: the
  // payload of a 17th category appended, the count left at 16.
  std::vector<uint8_t> longer = bytes;
  longer.insert(longer.end(), 4, 0);
  Poke32(&longer, 8, static_cast<uint32_t>(longer.size() - kHeaderSize));
  EXPECT_NE(Decode(longer, &decoded).message().find("exceeds"),
            std::string::npos);
}

TEST(WireProtocolTest, EncodersRefuseInvalidDataSourceCategories) {
  DataSourceCategoriesMsg good;
  good.data_source = "track_event";
  good.categories = {Cat("gfx", "Frames", {"slow"})};
  ASSERT_FALSE(EncodedCategories(good).empty());
  struct Bad {
    const char* what;
    DataSourceCategoriesMsg msg;
  };
  std::vector<Bad> bad;
  auto with = [&](const char* what, auto change) {
    DataSourceCategoriesMsg m = good;
    change(&m);
    bad.push_back({what, m});
  };
  with("no data source", [](auto* m) { m->data_source = ""; });
  with("no categories", [](auto* m) { m->categories.clear(); });
  with("17 categories", [](auto* m) {
    m->categories.clear();
    for (size_t i = 0; i <= kMaxCategoriesPerMessage; i++)
      m->categories.push_back(Cat("c" + std::to_string(i)));
  });
  with("empty name", [](auto* m) { m->categories[0].name = ""; });
  with("name with '*'", [](auto* m) { m->categories[0].name = "gfx*"; });
  with("long name", [](auto* m) {
    m->categories[0].name = std::string(kMaxCategoryNameSize + 1, 'n');
  });
  with("unprintable name", [](auto* m) { m->categories[0].name = "g\nfx"; });
  with("long description", [](auto* m) {
    m->categories[0].description =
        std::string(kMaxCategoryDescriptionSize + 1, 'd');
  });
  with("unprintable description",
       [](auto* m) { m->categories[0].description = "caf\xc3\xa9"; });
  with("five tags", [](auto* m) {
    m->categories[0].tags.assign(kMaxTagsPerCategory + 1, "t");
  });
  with("empty tag", [](auto* m) { m->categories[0].tags = {""}; });
  with("tag with '*'", [](auto* m) { m->categories[0].tags = {"sl*"}; });
  with("long tag", [](auto* m) {
    m->categories[0].tags = {std::string(kMaxCategoryTagSize + 1, 't')};
  });
  for (const Bad& b : bad)
    EXPECT_TRUE(EncodedCategories(b.msg).empty()) << b.what;
  EXPECT_TRUE(IsValidCategoryDescription(""));
  EXPECT_TRUE(IsValidCategoryName(std::string(kMaxCategoryNameSize, 'n')));
  EXPECT_TRUE(IsValidCategoryTag(std::string(kMaxCategoryTagSize, 't')));
}

TEST(WireProtocolTest, MalformedDataSourceCategoriesIsRejected) {
  DataSourceCategoriesMsg msg;
  msg.data_source = "ds";
  msg.categories = {Cat("ab", "d", {"t"})};
  const std::vector<uint8_t> good = EncodedCategories(msg);
  Message decoded;
  ASSERT_TRUE(Decode(good, &decoded).ok());
  // Payload offsets: 0 size "ds", 4 "ds", 6 num_categories, 10 size "ab",
  // 14 "ab", 16 size "d", 20 "d", 21 num_tags, 25 size "t", 29 "t".
  struct Mutation {
    const char* what;
    size_t offset;
    uint32_t value;
    bool byte;
  };
  const Mutation mutations[] = {
      {"data source size 0", 0, 0, false},
      {"data source size past the end", 0, 0xfffffff0, false},
      {"0 categories", 6, 0, false},
      {"17 categories", 6, 17, false},
      {"more categories than sent", 6, 2, false},
      {"count near 2^32", 6, 0xffffffff, false},
      {"name size 0", 10, 0, false},
      {"name size above the maximum", 10, 129, false},
      {"name size near 2^32", 10, 0xffffffff, false},
      {"name with '*'", 14, '*', true},
      {"unprintable name", 15, 0x07, true},
      {"description size past the end", 16, 100, false},
      {"description size above the maximum", 16, 257, false},
      {"unprintable description", 20, 0x80, true},
      {"5 tags", 21, 5, false},
      {"more tags than sent", 21, 2, false},
      {"tag size 0", 25, 0, false},
      {"tag size above the maximum", 25, 65, false},
      {"tag with '*'", 29, '*', true},
      {"unprintable tag", 29, 0x7f, true},
      {"unprintable data source", 4, 0x01, true},
  };
  for (const Mutation& m : mutations) {
    std::vector<uint8_t> bytes = good;
    if (m.byte)
      bytes[kHeaderSize + m.offset] = static_cast<uint8_t>(m.value);
    else
      Poke32(&bytes, kHeaderSize + m.offset, m.value);
    EXPECT_FALSE(Decode(bytes, &decoded).ok()) << m.what;
  }
  for (size_t cut = kHeaderSize; cut < good.size(); cut++) {
    std::vector<uint8_t> bytes(good.begin(), good.begin() + cut);
    Poke32(&bytes, 8, static_cast<uint32_t>(cut - kHeaderSize));
    EXPECT_FALSE(Decode(bytes, &decoded).ok()) << cut;
  }
  std::vector<uint8_t> longer = good;
  longer.push_back('x');
  Poke32(&longer, 8, static_cast<uint32_t>(longer.size() - kHeaderSize));
  EXPECT_NE(Decode(longer, &decoded).message().find("trailing"),
            std::string::npos);
}

TEST(WireProtocolTest, StatusNames) {
  EXPECT_STREQ(HelloStatusToString(HelloStatus::kOk), "ok");
  EXPECT_STREQ(HelloStatusToString(HelloStatus::kVersionMismatch),
               "protocol version mismatch");
  EXPECT_STREQ(HelloStatusToString(static_cast<HelloStatus>(77)),
               "unknown status");
}

}  // namespace
}  // namespace ipc
}  // namespace ringtrace
