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
