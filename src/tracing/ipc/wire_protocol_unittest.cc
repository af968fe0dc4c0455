/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/ipc/wire_protocol.h"

#include <gtest/gtest.h>

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
      2,    1,    0,    0,                             // writer_id
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
      {"writer id above 65535", kHeaderSize + 8 + 2, 1},
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
      {"unknown type", {'R', 'T', 'I', 'P', 9, 0, 0, 0, 0, 0, 0, 0}, "type"},
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
       {'R', 'T', 'I', 'P', 2, 0, 0, 0, 20, 0, 0, 0, 5, 0, 0, 0,
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
