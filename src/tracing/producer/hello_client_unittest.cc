/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The Hello round trip against a scripted service on the other end of a
// socketpair: the test queues the service's reply (well-formed or broken)
// before the producer asks, so no thread and no timing is involved.

#include "src/tracing/producer/hello_client.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "src/tracing/core/shm_ring/writer_loss_area.h"
#include "src/tracing/ipc/test/raw_send.h"
#include "src/tracing/producer/test/fake_service.h"

namespace ringtrace {
namespace producer {
namespace {

using base::ScopedFd;
using ipc::HelloReplyMsg;
using ipc::HelloStatus;
using ipc::UnixSocket;
using shm_ring::RingGeometry;

constexpr RingGeometry kGeometry(4096, 8);

// A memfd of |size| bytes with |seals| applied.
ScopedFd MakeMemfd(uint64_t size, int seals) {
  ScopedFd fd(static_cast<int>(syscall(SYS_memfd_create, "hello_client_test",
                                       MFD_CLOEXEC | MFD_ALLOW_SEALING)));
  EXPECT_TRUE(fd.valid());
  EXPECT_EQ(ftruncate(fd.get(), static_cast<off_t>(size)), 0);
  if (seals) {
    EXPECT_EQ(fcntl(fd.get(), F_ADD_SEALS, seals), 0);
  }
  return fd;
}

ScopedFd MakeRingMemfd() {
  return MakeMemfd(kGeometry.MappingSize() + shm_ring::kWriterLossAreaSize,
                   F_SEAL_SHRINK | F_SEAL_GROW);
}

std::string EncodeReply(const HelloReplyMsg& reply) {
  uint8_t buf[ipc::kMaxMessageSize];
  const size_t n = ipc::EncodeHelloReply(reply, buf, sizeof(buf));
  EXPECT_GT(n, 0u);
  return std::string(reinterpret_cast<const char*>(buf), n);
}

HelloReplyMsg GoodReply() {
  HelloReplyMsg reply;
  reply.producer_id = 42;
  reply.chunk_size = kGeometry.chunk_size;
  reply.num_chunks = kGeometry.num_chunks;
  reply.target_buffer = 3;
  return reply;
}

// Sends |bytes| with every fd of |fds| attached (UnixSocket::Send attaches
// at most one; a hostile service may attach more).
void SendRaw(UnixSocket* s, const std::string& bytes, std::vector<int> fds) {
  ASSERT_TRUE(
      ipc::test::SendRawWithFds(s->fd(), bytes.data(), bytes.size(), fds));
}

bool SameFile(int a, int b) {
  struct stat sa, sb;
  return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

ProducerOptions Options() {
  ProducerOptions options;
  options.name = "hello_test";
  options.requested_ring_bytes = 1 << 20;
  options.requested_chunk_size = 8192;
  options.connect_timeout_ms = 5000;  // replies are queued in advance
  return options;
}

TEST(ProducerHandshakeTest, GoodReplyMapsTheRingTheServiceSent) {
  std::unique_ptr<UnixSocket> producer_end, service_end;
  ASSERT_TRUE(UnixSocket::Pair(&producer_end, &service_end));
  const int fds_before = CountOpenFds();
  ScopedFd ring = MakeRingMemfd();
  SendRaw(service_end.get(), EncodeReply(GoodReply()), {ring.get()});

  HandshakeResult result;
  base::Status status = Handshake(producer_end.get(), Options(), &result);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(result.reply.producer_id, 42u);
  EXPECT_EQ(result.reply.target_buffer, 3u);
  ASSERT_TRUE(result.region);
  EXPECT_EQ(result.region->view().geometry().chunk_size, kGeometry.chunk_size);
  EXPECT_EQ(result.region->view().geometry().num_chunks, kGeometry.num_chunks);
  EXPECT_TRUE(SameFile(result.region->fd(), ring.get()));
  // The same memory: a word stored through the service's mapping shows up
  // in the producer's.
  void* service_map = mmap(nullptr, kGeometry.MappingSize(),
                           PROT_READ | PROT_WRITE, MAP_SHARED, ring.get(), 0);
  ASSERT_NE(service_map, MAP_FAILED);
  shm_ring::RingView service_view(static_cast<uint8_t*>(service_map),
                                  kGeometry);
  service_view.read_pos()->store(1234, std::memory_order_relaxed);
  EXPECT_EQ(result.region->view().read_pos()->load(std::memory_order_relaxed),
            1234u);
  munmap(service_map, kGeometry.MappingSize());

  // What the producer said.
  uint8_t buf[ipc::kMaxMessageSize];
  size_t size = 0;
  ScopedFd no_fd;
  ASSERT_EQ(service_end->Receive(buf, sizeof(buf), &size, &no_fd, &status),
            UnixSocket::RecvResult::kMessage);
  EXPECT_FALSE(no_fd.valid());
  ipc::Message hello;
  ASSERT_TRUE(ipc::DecodeMessage(buf, size, &hello).ok());
  ASSERT_EQ(hello.type, ipc::MessageType::kHello);
  EXPECT_EQ(hello.hello.protocol_version, ipc::kProtocolVersion);
  EXPECT_EQ(hello.hello.name, "hello_test");
  EXPECT_EQ(hello.hello.requested_ring_bytes, 1u << 20);
  EXPECT_EQ(hello.hello.requested_chunk_size, 8192u);

  // The region holds the one received fd; nothing else stayed open.
  ring.reset();
  EXPECT_EQ(CountOpenFds(), fds_before + 1);
  result.region.reset();
  EXPECT_EQ(CountOpenFds(), fds_before);
}

// One broken service behaviour: what it queues, and what the producer must
// say about it.
struct BrokenReply {
  const char* what;
  // Queues the service's side of the exchange on |service_end|.
  std::function<void(UnixSocket* service_end)> act;
  const char* expected_message;  // a substring of the Status message
  uint32_t timeout_ms = 5000;
};

std::string Corrupt(std::string bytes, size_t offset) {
  bytes[offset] = static_cast<char>(bytes[offset] ^ 0xff);
  return bytes;
}

void SendWithRing(UnixSocket* s, const std::string& bytes) {
  ScopedFd ring = MakeRingMemfd();
  SendRaw(s, bytes, {ring.get()});
}  // our copy is closed; the one in flight is the producer's to close

// Replies whose bytes are wrong.
void AddMalformedReplies(std::vector<BrokenReply>* cases_out) {
  std::vector<BrokenReply>& cases = *cases_out;
  cases.push_back({"bad magic",
                   [](UnixSocket* s) {
                     SendWithRing(s, Corrupt(EncodeReply(GoodReply()), 0));
                   },
                   "malformed HelloReply"});
  cases.push_back({"a DrainRequest instead of the reply",
                   [](UnixSocket* s) {
                     uint8_t buf[ipc::kMaxMessageSize];
                     const size_t n = ipc::EncodeDrainRequest(buf, sizeof(buf));
                     SendWithRing(s,
                                  std::string(reinterpret_cast<char*>(buf), n));
                   },
                   "expected a HelloReply, got message type 3"});
  cases.push_back({"a Hello instead of the reply",
                   [](UnixSocket* s) {
                     ipc::HelloMsg hello;
                     hello.name = "echo";
                     uint8_t buf[ipc::kMaxMessageSize];
                     const size_t n = ipc::EncodeHello(hello, buf, sizeof(buf));
                     SendWithRing(s,
                                  std::string(reinterpret_cast<char*>(buf), n));
                   },
                   "expected a HelloReply, got message type 1"});
  cases.push_back({"short reply",
                   [](UnixSocket* s) {
                     std::string r = EncodeReply(GoodReply());
                     r.pop_back();
                     SendWithRing(s, r);
                   },
                   "malformed HelloReply"});
  cases.push_back(
      {"reply with a trailing byte",
       [](UnixSocket* s) { SendWithRing(s, EncodeReply(GoodReply()) + "x"); },
       "malformed HelloReply"});
  cases.push_back({"datagram larger than any message",
                   [](UnixSocket* s) {
                     SendWithRing(
                         s, EncodeReply(GoodReply()) + std::string(300, 'x'));
                   },
                   "receiving HelloReply"});
  cases.push_back({"refusal (with an fd attached anyway)",
                   [](UnixSocket* s) {
                     HelloReplyMsg r = GoodReply();
                     r.status = HelloStatus::kTooManyProducers;
                     SendWithRing(s, EncodeReply(r));
                   },
                   "refused the producer"});
}

// Replies whose ring fd is missing, doubled or not a usable ring.
void AddBadRingFds(std::vector<BrokenReply>* cases_out) {
  std::vector<BrokenReply>& cases = *cases_out;
  cases.push_back(
      {"no fd", [](UnixSocket* s) { SendRaw(s, EncodeReply(GoodReply()), {}); },
       "no ring fd"});
  cases.push_back({"two fds",
                   [](UnixSocket* s) {
                     ScopedFd a = MakeRingMemfd();
                     ScopedFd b = MakeRingMemfd();
                     SendRaw(s, EncodeReply(GoodReply()), {a.get(), b.get()});
                   },
                   "2 fds attached"});
  cases.push_back({"file smaller than the mapping",
                   [](UnixSocket* s) {
                     ScopedFd small =
                         MakeMemfd(kGeometry.MappingSize() +
                                       shm_ring::kWriterLossAreaSize - 1,
                                   F_SEAL_SHRINK | F_SEAL_GROW);
                     SendRaw(s, EncodeReply(GoodReply()), {small.get()});
                   },
                   "too small"});
  cases.push_back(
      {"file not sealed against shrinking",
       [](UnixSocket* s) {
         ScopedFd unsealed = MakeMemfd(
             kGeometry.MappingSize() + shm_ring::kWriterLossAreaSize, 0);
         SendRaw(s, EncodeReply(GoodReply()), {unsealed.get()});
       },
       "not sealed"});
  cases.push_back({"a pipe instead of a memfd",
                   [](UnixSocket* s) {
                     int p[2];
                     ASSERT_EQ(pipe(p), 0);
                     ScopedFd r(p[0]), w(p[1]);
                     SendRaw(s, EncodeReply(GoodReply()), {r.get()});
                   },
                   "cannot map the ring"});
}

// Well-formed replies with values out of range, and no reply at all.
void AddBadValuesAndSilence(std::vector<BrokenReply>* cases_out) {
  std::vector<BrokenReply>& cases = *cases_out;
  cases.push_back({"invalid chunk size",
                   [](UnixSocket* s) {
                     HelloReplyMsg r = GoodReply();
                     r.chunk_size = 100;
                     SendWithRing(s, EncodeReply(r));
                   },
                   "invalid ring geometry"});
  cases.push_back({"num_chunks not a power of two",
                   [](UnixSocket* s) {
                     HelloReplyMsg r = GoodReply();
                     r.num_chunks = 3;
                     SendWithRing(s, EncodeReply(r));
                   },
                   "invalid ring geometry"});
  cases.push_back({"a ring larger than the producer accepts (32 TiB)",
                   [](UnixSocket* s) {
                     HelloReplyMsg r = GoodReply();
                     r.chunk_size = 32768;
                     r.num_chunks = 1u << 30;
                     SendWithRing(s, EncodeReply(r));
                   },
                   "exceeds the producer's limit"});
  cases.push_back({"producer id beyond a ProducerID",
                   [](UnixSocket* s) {
                     HelloReplyMsg r = GoodReply();
                     r.producer_id = kMaxProducerID + 1;
                     SendWithRing(s, EncodeReply(r));
                   },
                   "not a ProducerID"});
  cases.push_back({"target buffer beyond a BufferID",
                   [](UnixSocket* s) {
                     HelloReplyMsg r = GoodReply();
                     r.target_buffer = 0x10000;
                     SendWithRing(s, EncodeReply(r));
                   },
                   "not a BufferID"});
  cases.push_back({"hang-up without a reply",
                   [](UnixSocket* s) { shutdown(s->fd(), SHUT_WR); },
                   "closed the connection"});
  cases.push_back({"no reply at all", [](UnixSocket*) {},
                   "did not answer the Hello within 20 ms", 20});
}

std::vector<BrokenReply> BrokenReplies() {
  std::vector<BrokenReply> cases;
  AddMalformedReplies(&cases);
  AddBadRingFds(&cases);
  AddBadValuesAndSilence(&cases);
  return cases;
}

TEST(ProducerHandshakeTest, BrokenRepliesFailClearlyAndLeakNoFd) {
  for (const BrokenReply& c : BrokenReplies()) {
    SCOPED_TRACE(c.what);
    std::unique_ptr<UnixSocket> producer_end, service_end;
    ASSERT_TRUE(UnixSocket::Pair(&producer_end, &service_end));
    const int fds_before = CountOpenFds();
    c.act(service_end.get());
    ProducerOptions options = Options();
    options.connect_timeout_ms = c.timeout_ms;
    HandshakeResult result;
    const base::Status status = Handshake(producer_end.get(), options, &result);
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find(c.expected_message), std::string::npos)
        << status.message();
    EXPECT_FALSE(result.region);
    EXPECT_EQ(CountOpenFds(), fds_before);
  }
}

TEST(ProducerHandshakeTest, InvalidNameSendsNothing) {
  std::unique_ptr<UnixSocket> producer_end, service_end;
  ASSERT_TRUE(UnixSocket::Pair(&producer_end, &service_end));
  for (const std::string& name :
       {std::string(), std::string(65, 'n'), std::string("tab\there")}) {
    ProducerOptions options = Options();
    options.name = name;
    HandshakeResult result;
    const base::Status status = Handshake(producer_end.get(), options, &result);
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find("invalid producer name"), std::string::npos)
        << status.message();
  }
  service_end->SetNonBlocking(true);
  uint8_t buf[ipc::kMaxMessageSize];
  size_t size = 0;
  base::Status status;
  EXPECT_EQ(service_end->Receive(buf, sizeof(buf), &size, nullptr, &status),
            UnixSocket::RecvResult::kWouldBlock);
}

}  // namespace
}  // namespace producer
}  // namespace ringtrace
