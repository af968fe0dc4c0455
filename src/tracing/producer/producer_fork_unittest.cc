/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// fork() with a connected Producer: the parent's data stays intact, the
// child's inherited Producer and writers are inert (nothing reaches the
// shared ring, every packet is dropped and counted), and the child connects
// a Producer of its own. The child runs no gtest code: it checks what it can
// and reports through its exit status (a bit per failed check), then
// _exit()s. Runs under ASan and TSan too (docs/service.md, "fork()").

#include <gtest/gtest.h>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/producer.h"
#include "src/tracing/core/encoding/test/proto_test_encoder.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"
#include "src/tracing/producer/test/fake_service.h"

namespace ringtrace {
namespace producer {
namespace {

using encoding::ProtoTestEncoder;
using shm_ring::ReadChunk;
using shm_ring::ResolveResult;
using shm_ring::TestPacketReassembler;
using shm_ring::TestRingReader;
using shm_ring::TraceWriterV2;
using shm_ring::TraceWriterV2Stats;
using shm_ring::WriterID;

namespace rtzero = perfetto::protos::rtzero;

// Appends TracePacket.for_testing { str: |s| } to the packet |message|.
void AppendTestString(encoding::Message* message, const std::string& s) {
  rtzero::TracePacket(message).set_for_testing().set_str(s);
}

// The bytes AppendTestString() writes (group encoded, as the ring holds
// them).
void ExpectTestString(ProtoTestEncoder* e, const std::string& s) {
  ProtoTestEncoder inner;
  inner.BytesField(rtzero::TestEvent::kStrFieldNumber, s);
  e->Group(rtzero::TracePacket::kForTestingFieldNumber, inner);
}

ProducerOptions OptionsFor(const std::string& socket_path) {
  ProducerOptions options;
  options.socket_path = socket_path;
  options.name = "fork_test";
  return options;
}

void Write(TraceWriterV2* w, const std::string& tag, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    auto packet = w->NewTracePacket();
    AppendTestString(packet.get(), tag + std::to_string(i));
  }
}

std::vector<std::string> Expected(const std::string& tag, uint32_t n) {
  std::vector<std::string> out;
  for (uint32_t i = 0; i < n; ++i) {
    ProtoTestEncoder e;
    ExpectTestString(&e, tag + std::to_string(i));
    out.push_back(e.str());
  }
  return out;
}

std::string TwoStrings(const std::string& a, const std::string& b) {
  ProtoTestEncoder e;
  ExpectTestString(&e, a);
  ExpectTestString(&e, b);
  return e.str();
}

// Failed checks of the child, one bit each.
enum ChildFailure : int {
  kNotInert = 1 << 0,
  kStillConnected = 1 << 1,
  kNotRefused = 1 << 2,
  kOpenPacketNotCounted = 1 << 3,
  kOwnConnectFailed = 1 << 4,
  kOwnWriterLost = 1 << 5,
};

// Runs in the child (one thread). |open| is the packet the forking thread
// had begun on |inherited_writer| before fork().
int ChildMain(Producer* inherited,
              TraceWriterV2* inherited_writer,
              TraceWriterV2::TracePacketHandle* open,
              const std::string& own_socket) {
  int failures = 0;
  if (!inherited->stats().inert_after_fork)
    failures |= kNotInert;
  if (inherited->connected())
    failures |= kStillConnected;
  const TraceWriterV2Stats before = inherited_writer->stats();
  // Finishing the open packet writes the child's private pages only; its
  // publication fails there, so it is counted lost (not committed).
  AppendTestString(open->get(), "child-rest");
  open->Finish();
  Write(inherited_writer, "child-inherited-", 10);
  inherited_writer->Flush();
  const TraceWriterV2Stats after = inherited_writer->stats();
  if (after.packets_refused - before.packets_refused != 10)
    failures |= kNotRefused;
  if (after.packets_dropped - before.packets_dropped != 11 ||
      after.packets_committed != before.packets_committed) {
    failures |= kOpenPacketNotCounted;
  }

  base::Status status;
  std::unique_ptr<Producer> own =
      Producer::Connect(OptionsFor(own_socket), &status);
  if (!own)
    return failures | kOwnConnectFailed;
  {
    std::unique_ptr<TraceWriterV2> w = own->NewTraceWriter();
    Write(w.get(), "child-", 20);
    w->Flush();
    if (w->stats().packets_committed != 20 || w->stats().packets_dropped != 0)
      failures |= kOwnWriterLost;
  }
  own.reset();
  return failures;
}

// A thread that writes 3 packets, then holds a packet half written (its
// chunk Acquired) until Release(), then finishes it and writes 3 more.
class HeldPacketThread {
 public:
  explicit HeldPacketThread(Producer* producer)
      : thread_([this, producer] { Run(producer); }) {}

  // Blocks until the thread holds its open packet.
  void WaitHolding() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return holding_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    cv_.notify_all();
  }
  void Join() { thread_.join(); }

  WriterID writer_id() const { return writer_id_; }
  bool held_acquired() const { return held_acquired_; }
  const TraceWriterV2Stats& stats() const { return stats_; }

 private:
  void Run(Producer* producer) {
    std::unique_ptr<TraceWriterV2> w = producer->NewTraceWriter();
    Write(w.get(), "other-before-", 3);
    {
      auto packet = w->NewTracePacket();
      AppendTestString(packet.get(), "other-open-1");
      std::unique_lock<std::mutex> lock(mutex_);
      writer_id_ = w->writer_id();
      held_acquired_ =
          shm_ring::TraceWriterV2Owner::ring_writer(*w).holds_acquired_chunk();
      holding_ = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return released_; });
      AppendTestString(packet.get(), "other-open-2");
    }
    Write(w.get(), "other-after-", 3);
    w->Flush();
    stats_ = w->stats();
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  bool holding_ = false;
  bool released_ = false;
  WriterID writer_id_ = 0;
  bool held_acquired_ = false;
  TraceWriterV2Stats stats_;
  std::thread thread_;  // Last: starts once the fields above exist.
};

// The packets |tag|-before-0..n-1, the open packet |open_a| + |open_b|, then
// |tag|-after-0..n-1.
std::vector<std::string> AroundOpenPacket(const std::string& tag,
                                          uint32_t n,
                                          const std::string& open_a,
                                          const std::string& open_b) {
  std::vector<std::string> want = Expected(tag + "-before-", n);
  want.push_back(TwoStrings(open_a, open_b));
  for (const std::string& p : Expected(tag + "-after-", n))
    want.push_back(p);
  return want;
}

// Everything in |service|'s ring, reassembled per writer; fails the test
// on a data-loss flag or on a chunk of a writer not in |writers| (an empty
// |writers| takes the first chunk's writer as the only one allowed).
TestPacketReassembler DrainRing(FakeService* service,
                                std::vector<WriterID>* writers) {
  TestRingReader reader(service->region()->view());
  std::vector<ReadChunk> chunks;
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  if (writers->empty() && !chunks.empty())
    writers->push_back(chunks[0].writer_id);
  TestPacketReassembler packets;
  for (const ReadChunk& c : chunks) {
    EXPECT_NE(std::find(writers->begin(), writers->end(), c.writer_id),
              writers->end())
        << "writer " << c.writer_id;
    EXPECT_FALSE(c.flags & shm_ring::kFlagDataLoss);
    packets.Add(c);
  }
  return packets;
}

// The child's own producer delivered its 20 packets to its own service
// (one writer, the only one on that ring) and said goodbye with an empty
// final report.
void ExpectChildDelivered(FakeService* service) {
  ASSERT_TRUE(service->WaitForProducerGone());
  EXPECT_EQ(service->final_reports(), 1u);
  EXPECT_TRUE(service->losses().empty());
  std::vector<WriterID> child_writer;
  TestPacketReassembler child = DrainRing(service, &child_writer);
  ASSERT_EQ(child_writer.size(), 1u);
  EXPECT_EQ(child.packets(child_writer[0]), Expected("child-", 20));
}

TEST(ProducerForkTest, ParentIntactChildInertAndConnectsItsOwn) {
  TempDir dir;
  FakeService::Config config_a;
  config_a.geometry = shm_ring::RingGeometry(1024, 64);
  auto service_a = FakeService::Start(dir.File("a.sock"), config_a);
  ASSERT_TRUE(service_a);
  FakeService::Config config_b = config_a;
  config_b.producer_id = 8;
  auto service_b = FakeService::Start(dir.File("b.sock"), config_b);
  ASSERT_TRUE(service_b);

  base::Status status;
  auto producer = Producer::Connect(OptionsFor(dir.File("a.sock")), &status);
  ASSERT_TRUE(producer) << status.message();
  // The reply can reach the producer before the service's thread recorded
  // its ring: region() below needs the latter.
  ASSERT_TRUE(service_a->WaitHelloDone());
  std::unique_ptr<TraceWriterV2> main_writer = producer->NewTraceWriter();
  const WriterID main_id = main_writer->writer_id();
  Write(main_writer.get(), "main-before-", 5);
  main_writer->Flush();

  // Another thread holds an Acquired chunk, a packet half written, across
  // the fork; the forking thread has a packet open too.
  HeldPacketThread other(producer.get());
  other.WaitHolding();
  auto open = main_writer->NewTracePacket();
  AppendTestString(open.get(), "main-open");

  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    _exit(ChildMain(producer.get(), main_writer.get(), &open,
                    dir.File("b.sock")));
  }
  other.Release();
  AppendTestString(open.get(), "parent-rest");
  open.Finish();
  Write(main_writer.get(), "main-after-", 5);
  main_writer->Flush();
  other.Join();

  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFEXITED(wstatus)) << "child status " << wstatus;
  EXPECT_EQ(WEXITSTATUS(wstatus), 0) << "child failure bits";
  EXPECT_TRUE(other.held_acquired());
  EXPECT_FALSE(producer->stats().inert_after_fork);
  EXPECT_TRUE(producer->connected());

  // The parent's ring holds exactly the parent's packets, intact.
  EXPECT_EQ(main_writer->stats().packets_committed, 11u);
  EXPECT_EQ(main_writer->stats().packets_dropped, 0u);
  EXPECT_EQ(other.stats().packets_committed, 7u);
  EXPECT_EQ(other.stats().packets_dropped, 0u);
  std::vector<WriterID> parent_writers = {main_id, other.writer_id()};
  TestPacketReassembler parent = DrainRing(service_a.get(), &parent_writers);
  EXPECT_EQ(parent.packets(main_id),
            AroundOpenPacket("main", 5, "main-open", "parent-rest"));
  EXPECT_EQ(parent.packets(other.writer_id()),
            AroundOpenPacket("other", 3, "other-open-1", "other-open-2"));

  ExpectChildDelivered(service_b.get());

  main_writer.reset();
  producer.reset();
  ASSERT_TRUE(service_a->WaitForProducerGone());
  EXPECT_EQ(service_a->final_reports(), 1u);
}

}  // namespace
}  // namespace producer
}  // namespace ringtrace
