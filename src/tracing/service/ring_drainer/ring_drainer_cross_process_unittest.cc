/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The producer and the service in two PROCESSES, as in production. The ring
// is a memfd that the producer maps MAP_SHARED (SharedRingRegion) and that
// the service maps a second time, at another address, as it would after
// receiving the fd. A writer stalled on a full ring sleeps on the shared
// futex (read_pos) and the service's drainer wakes it from its own process.
//
// Each test fork()s a child producer that uses only the ring, TraceWriterV2
// and a shared results page (its writer stats, progress, and which packets
// it lost). The parent is the service: a RingDrainer on the test thread
// feeds a TraceBufferV2, whose packets are read back, ungrouped and parsed
// with libprotobuf. Each packet carries its writer, sequence number, a body
// derived from them and a checksum: exactly-once, in-order, intact delivery
// is checked packet by packet.
//
// Deterministic and safe for CI:
//  - the parent is single-threaded when it forks: nothing here creates a
//    thread, and Subprocess::Fork() refuses to fork a process with other
//    threads (TSan's own background thread aside; TSan supports fork() and
//    sees only the parent);
//  - the child runs no gtest code: it _exit()s with a status code, dies
//    with its parent (PR_SET_PDEATHSIG), and each of its waits is bounded;
//  - each wait of the parent is bounded, and Subprocess kills (SIGKILL)
//    and reaps the child on every path, a failed ASSERT included;
//  - asserted outcomes are forced by step sequencing through the shared
//    page and the ring's words (drain only while the child sleeps in
//    FUTEX_WAIT; kill only once it holds its open packets), not by luck.

#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/logging.h"
#include "ringtrace/trace_writer_v2.h"
#include "src/base/test/subprocess.h"
#include "src/base/time.h"
#include "src/tracing/core/shm_ring/ring_wait.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/shm_region.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"
#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/ring_drainer/test/background_drainer.h"
#include "src/tracing/service/ring_drainer/test/child_process.h"
#include "src/tracing/service/ring_drainer/test/cross_process_harness.h"
#include "src/tracing/service/ring_drainer/test/loss_ledger.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {
namespace {

namespace pz = ::perfetto::protos::rtzero;
using base::MonotonicNs;
using shm_ring::ChunkState;
using shm_ring::MakeDataWord;
using shm_ring::StateWord;

// ---------------------------------------------------------------------------
// 1. kStall is lossless across processes, and the wake-up crosses them.
// ---------------------------------------------------------------------------

constexpr uint32_t kStallPackets = 400;

// Child: one kStall writer writes kStallPackets packets (about 0.9 MB) into
// the 32 KiB ring, flushing every 16 packets.
//
// In the free-running half the drainer still scrapes the writer's open
// chunk now and then, despite the head grace: when the writer reuses its
// cached Complete chunk while the reader consumes it (spec 5.2), the reader's
// CAS fails and its redispatch resolves the now Acquired chunk at once; and a
// pass that starts while the writer is registered as stalled resolves every
// position, even one the writer claims during that pass. kStall relocates
// each scrape losslessly, but after max_relocations_per_packet (default 3)
// in one packet the writer drops the suffix by design. The bound is raised
// here so that a run of unlucky scrapes cannot turn into loss: this test is
// about the cross-process path, not that bound (RingWriter's tests cover
// it).
int StallingProducer(const RingView& ring, SharedResults* results) {
  {
    TraceWriterV2::Options o = WriterOptions(1, BufferExhaustedPolicy::kStall);
    o.max_relocations_per_packet = 1000;
    std::unique_ptr<TraceWriterV2> w_owned =
        shm_ring::TraceWriterV2Owner::Create(ring, o);
    TraceWriterV2& w = *w_owned;
    for (uint32_t seq = 0; seq < kStallPackets; ++seq) {
      // relaxed: a progress hint for the parent (DrainWhileRunning).
      results->packets_begun.store(seq + 1, std::memory_order_relaxed);
      WritePacket(&w, nullptr, 1, seq, BodyLen(1, seq));
      if (seq % 16 == 15)
        w.Flush();
    }
    w.Flush();
    Report(w, &results->writers[0]);
  }
  PublishState(results, kDone);
  return kChildOk;
}

TEST(RingDrainerCrossProcessTest, StallIsLosslessAndWokenAcrossProcesses) {
  if (ProcessState(getpid()) == 0)
    GTEST_SKIP() << "needs /proc/<pid>/stat to see the child sleep";
  uint64_t total_bytes = 0;
  for (uint32_t seq = 0; seq < kStallPackets; ++seq)
    total_bytes += BodyLen(1, seq);
  ASSERT_GT(total_bytes, 20u * kChunkSize * kNumChunks);

  auto region = CreateProducerRing();
  // A head grace far beyond the test: the drainer does not scrape the
  // writer's open chunk just because it caught up with the writer. It
  // resolves everything (spec 5.3) in a pass that starts while the writer is
  // stalled.
  RingDrainerOptions options;
  options.head_grace_ns = kDeadlineNs * 3;
  // Lock step: the writer sleeps through every pass (no early wake).
  options.wake_writers_early = false;
  Service service(region->fd(), region->view().geometry(), options);
  SharedObject<SharedResults> results;

  Subprocess child;
  ASSERT_TRUE(child.Fork(
      [&] { return StallingProducer(region->view(), results.get()); }));
  // First half in lock step: the parent drains only while the child sleeps
  // in FUTEX_WAIT on the full ring, so each of those stalls can end only by
  // the drainer's FUTEX_WAKE from this process (or by the stall timeout,
  // which would drop data and fail the test). Second half free-running, as
  // a service runs.
  uint64_t sleeping_wakes = 0;
  ASSERT_TRUE(service.DrainWhileRunning(&child, results.get(),
                                        kStallPackets / 2, &sleeping_wakes))
      << "the child producer did not finish in time";
  ASSERT_TRUE(child.ExitedOk()) << child.DescribeStatus();
  // acquire; pairs with the child's release store in PublishState().
  ASSERT_EQ(results->state.load(std::memory_order_acquire), kDone);
  service.DrainDeadProducer();

  // Every packet exactly once, in order, intact, with no loss reported.
  auto received = ReadBack(service.tb());
  ASSERT_EQ(received.size(), 1u);
  const std::vector<Received>& got = received[1];
  EXPECT_EQ(Seqs(got), Iota(kStallPackets));
  for (const Received& p : got)
    EXPECT_EQ(p.loss, 0u) << "seq " << p.seq;

  // The child's own accounting agrees exactly.
  const WriterReport& r = results->writers[0];
  EXPECT_EQ(r.trace.packets_begun, kStallPackets);
  EXPECT_EQ(r.trace.packets_committed, kStallPackets);
  EXPECT_EQ(r.trace.packets_dropped, 0u);
  EXPECT_EQ(r.trace.bytes_dropped, 0u);
  EXPECT_EQ(r.ring.loss_events, 0u);

  // The cross-process wake path really ran: the child stalled, the drainer
  // issued FUTEX_WAKE at least once per drain of the sleeping child, and no
  // stall ever timed out.
  const RingStats s = service.stats();
  EXPECT_GE(sleeping_wakes, 1u);
  EXPECT_GE(r.ring.stalls, sleeping_wakes);
  EXPECT_EQ(r.ring.stall_timeouts, 0u);
  EXPECT_GE(s.writer_wakeups, sleeping_wakes);
  EXPECT_EQ(s.reader.protocol_errors, 0u);
  EXPECT_EQ(service.tb()->stats().abi_violations, 0u);
  EXPECT_EQ(service.tb()->stats().chunks_discarded, 0u);
  RT_LOG(
      "cross-process stall: %llu bytes, %llu stalls, %llu drains of the "
      "sleeping child, %llu wakes, %llu scrapes",
      static_cast<unsigned long long>(total_bytes),
      static_cast<unsigned long long>(r.ring.stalls),
      static_cast<unsigned long long>(sleeping_wakes),
      static_cast<unsigned long long>(s.writer_wakeups),
      static_cast<unsigned long long>(s.reader.scrapes));
}

// ---------------------------------------------------------------------------
// 2. A producer killed in the middle of its packets.
// ---------------------------------------------------------------------------

// Writer 1's finished packets. Packet 1 spans two chunks.
constexpr uint32_t kKilledW1Lens[] = {100, 5000, 20, 300, 2000, 0};
constexpr uint32_t kKilledW1Finished = 6;
static_assert(sizeof(kKilledW1Lens) / sizeof(kKilledW1Lens[0]) ==
              kKilledW1Finished);
constexpr uint32_t kKilledW2Finished = 4;
// Writer 4 (the idle one) ends this many packets and never flushes.
constexpr uint32_t kKilledIdleFinished = 3;
constexpr uint32_t kSurvivorPackets = 60;

// Child: two writers leave one open packet each, in the two shapes a dead
// writer can leave behind, then it waits to be killed. All of it fits in
// the ring, so nothing stalls and nobody needs to drain meanwhile (the
// parent does not, so the layout is exactly this):
//  - writer 4 ends kKilledIdleFinished packets and goes idle: no Flush(),
//    never destroyed. EndPacket() published each of them, so its chunk is
//    Complete(4, kKilledIdleFinished) and the dead producer's drain takes
//    them all;
//  - writer 1 finishes kKilledW1Finished packets and flushes them, then
//    writes 6000 bytes into a packet it never finishes: the head is
//    published (continues-on-next) and the tail is open in a chunk that
//    stays Acquired(1, 0);
//  - writer 2 finishes kKilledW2Finished small packets, begins another and
//    calls Flush(): the finished ones are published and the chunk is reused
//    for the open one, so it stays Acquired(2, kKilledW2Finished).
int ProducerKilledMidPacket(const RingView& ring, SharedResults* results) {
  std::unique_ptr<TraceWriterV2> w1_owned =
      shm_ring::TraceWriterV2Owner::Create(
          ring, WriterOptions(1, BufferExhaustedPolicy::kStall));
  TraceWriterV2& w1 = *w1_owned;
  std::unique_ptr<TraceWriterV2> w2_owned =
      shm_ring::TraceWriterV2Owner::Create(
          ring, WriterOptions(2, BufferExhaustedPolicy::kStall));
  TraceWriterV2& w2 = *w2_owned;
  std::unique_ptr<TraceWriterV2> idle_owned =
      shm_ring::TraceWriterV2Owner::Create(
          ring, WriterOptions(4, BufferExhaustedPolicy::kStall));
  TraceWriterV2& idle = *idle_owned;
  for (uint32_t seq = 0; seq < kKilledIdleFinished; ++seq)
    WritePacket(&idle, nullptr, 4, seq, 50 + seq);
  for (uint32_t seq = 0; seq < kKilledW1Finished; ++seq)
    WritePacket(&w1, nullptr, 1, seq, kKilledW1Lens[seq]);
  w1.Flush();
  auto open1 = w1.NewTracePacket();
  open1->AppendVarInt(pz::TracePacket::kTimestampFieldNumber,
                      1000 + kKilledW1Finished);
  open1->BeginNestedMessage(pz::TracePacket::kForTestingFieldNumber)
      ->AppendString(pz::TestEvent::kStrFieldNumber, std::string(6000, 'x'));
  for (uint32_t seq = 0; seq < kKilledW2Finished; ++seq)
    WritePacket(&w2, nullptr, 2, seq, 100 + seq);
  auto open2 = w2.NewTracePacket();
  open2->AppendVarInt(pz::TracePacket::kTimestampFieldNumber,
                      1000 + kKilledW2Finished);
  w2.Flush();
  Report(w1, &results->writers[0]);
  Report(w2, &results->writers[1]);
  PublishState(results, kHolding);
  // Wait for SIGKILL, bounded: a parent that never kills us must not leave
  // us behind.
  const uint64_t deadline = MonotonicNs() + kDeadlineNs;
  while (MonotonicNs() < deadline)
    usleep(1000);
  return kChildParentTimeout;
}

// Child: a writer that starts after the first producer died and writes
// kSurvivorPackets packets with kStall. It must go around the ring several
// times, past the chunks the dead writers pinned.
int SurvivingProducer(const RingView& ring, SharedResults* results) {
  {
    std::unique_ptr<TraceWriterV2> w_owned =
        shm_ring::TraceWriterV2Owner::Create(
            ring, WriterOptions(3, BufferExhaustedPolicy::kStall));
    TraceWriterV2& w = *w_owned;
    for (uint32_t seq = 0; seq < kSurvivorPackets; ++seq)
      WritePacket(&w, nullptr, 3, seq, BodyLen(3, seq));
    w.Flush();
    Report(w, &results->writers[0]);
  }
  PublishState(results, kDone);
  return kChildOk;
}

// What the kill test's service delivered: every packet finished (and
// published) before the kill, the idle writer's included, none of the two
// open ones, and all of the survivor's.
void ExpectFinishedPacketsDelivered(Service* service,
                                    const SharedResults& results) {
  auto received = ReadBack(service->tb());
  EXPECT_EQ(received.size(), 4u);
  EXPECT_EQ(Seqs(received[1]), Iota(kKilledW1Finished));
  EXPECT_EQ(Seqs(received[2]), Iota(kKilledW2Finished));
  EXPECT_EQ(Seqs(received[4]), Iota(kKilledIdleFinished));
  EXPECT_EQ(Seqs(received[3]), Iota(kSurvivorPackets));
  for (const auto& [writer, packets] : received) {
    for (const Received& p : packets)
      EXPECT_EQ(p.loss, 0u) << "writer " << writer << " seq " << p.seq;
  }
  // Honest accounting: each dead writer had begun one packet more than it
  // committed, and dropped none; that packet in progress is exactly what
  // the service does not deliver (writer 1's published head is not
  // delivered as a packet either).
  for (uint32_t w = 0; w < 2; ++w) {
    const WriterReport& r = results.writers[w];
    const uint32_t finished = w == 0 ? kKilledW1Finished : kKilledW2Finished;
    EXPECT_EQ(r.trace.packets_begun, finished + 1) << "writer " << w + 1;
    EXPECT_EQ(r.trace.packets_committed, finished) << "writer " << w + 1;
    EXPECT_EQ(r.trace.packets_dropped, 0u) << "writer " << w + 1;
    EXPECT_EQ(received[static_cast<WriterID>(w + 1)].size(), finished);
  }
}

TEST(RingDrainerCrossProcessTest, KilledProducerLeavesHolesNotAHang) {
  if (ProcessState(getpid()) == 0)
    GTEST_SKIP() << "needs /proc/<pid>/stat to see the child sleep";
  auto region = CreateProducerRing();
  const RingGeometry g = region->view().geometry();
  RingDrainerOptions options;
  options.head_grace_ns = kDeadlineNs * 3;  // no scrape while writers live
  // Lock step: the writer sleeps through every pass (no early wake).
  options.wake_writers_early = false;
  Service service(region->fd(), g, options);
  const RingView& view = service.view();
  SharedObject<SharedResults> results;

  Subprocess child;
  ASSERT_TRUE(child.Fork(
      [&] { return ProducerKilledMidPacket(region->view(), results.get()); }));
  ASSERT_TRUE(WaitFor(results->state, kHolding, &child))
      << "the child producer never got its packets open";
  // The layout the child left (its last two positions), seen through the
  // service's own mapping. relaxed: the child is done writing (its state
  // store was acquired above).
  const uint32_t end = view.write_pos()->load(std::memory_order_relaxed);
  const uint32_t idx1 = g.ChunkIndex(end - 2);
  const uint32_t idx2 = g.ChunkIndex(end - 1);
  auto word = [&](uint32_t idx) {
    return view.chunk_state(idx)->load(std::memory_order_relaxed);
  };
  const StateWord w1_open = word(idx1);
  const StateWord w2_open = word(idx2);
  ASSERT_EQ(shm_ring::GetState(w1_open), ChunkState::kAcquired);
  ASSERT_EQ(shm_ring::GetWriterId(w1_open), 1u);
  ASSERT_EQ(shm_ring::GetNumFragments(w1_open), 0u);
  ASSERT_EQ(shm_ring::GetState(w2_open), ChunkState::kAcquired);
  ASSERT_EQ(shm_ring::GetWriterId(w2_open), 2u);
  ASSERT_EQ(shm_ring::GetNumFragments(w2_open), kKilledW2Finished);

  child.Kill();
  ASSERT_TRUE(child.KilledBy(SIGKILL)) << child.DescribeStatus();

  // The service drains the dead producer's ring. Both open chunks are
  // scraped: writer 2's published prefix is taken, writer 1's chunk gives
  // nothing (a hole). Nobody will ever acknowledge them: they stay
  // RewriteRequested, pinned, and the reader went on past them.
  service.DrainDeadProducer();
  EXPECT_EQ(word(idx1), MakeDataWord(ChunkState::kRewriteRequested,
                                     shm_ring::GetFormat(w1_open),
                                     shm_ring::GetFlags(w1_open), 0, 1));
  EXPECT_EQ(
      word(idx2),
      MakeDataWord(ChunkState::kRewriteRequested, shm_ring::GetFormat(w2_open),
                   shm_ring::GetFlags(w2_open), kKilledW2Finished, 2));
  RingStats s = service.stats();
  EXPECT_EQ(s.reader.positions_resolved, end);
  EXPECT_EQ(s.reader.scrapes, 2u);
  EXPECT_EQ(s.reader.holes, 1u);

  // Another producer writes on: every time it comes round to a pinned chunk
  // its claim fails and burns the position, which the reader resolves as a
  // hole. Exactly those positions are burned; nothing else is lost. The
  // parent drains in lock step with it (only while it sleeps on the full
  // ring), so no scrape of its open chunks can blur the count.
  SharedObject<SharedResults> survivor_results;
  Subprocess survivor;
  ASSERT_TRUE(survivor.Fork([&] {
    return SurvivingProducer(region->view(), survivor_results.get());
  }));
  uint64_t sleeping_wakes = 0;
  ASSERT_TRUE(service.DrainWhileRunning(&survivor, survivor_results.get(),
                                        Service::kAlwaysLockStep,
                                        &sleeping_wakes))
      << "the surviving producer did not finish in time";
  ASSERT_TRUE(survivor.ExitedOk()) << survivor.DescribeStatus();
  // acquire; pairs with the child's release store in PublishState().
  ASSERT_EQ(survivor_results->state.load(std::memory_order_acquire), kDone);
  service.DrainDeadProducer();
  const uint32_t survivor_end =
      view.write_pos()->load(std::memory_order_relaxed);
  uint32_t pinned_positions = 0;
  for (uint32_t p = end; p != survivor_end; ++p) {
    const uint32_t idx = g.ChunkIndex(p);
    pinned_positions += (idx == idx1 || idx == idx2) ? 1 : 0;
  }
  EXPECT_GE(pinned_positions, 4u);  // round the ring at least twice
  const WriterReport& rs = survivor_results->writers[0];
  EXPECT_EQ(rs.ring.burned_positions, pinned_positions);
  EXPECT_EQ(rs.trace.packets_begun, kSurvivorPackets);
  EXPECT_EQ(rs.trace.packets_committed, kSurvivorPackets);
  EXPECT_EQ(rs.trace.packets_dropped, 0u);
  EXPECT_EQ(rs.ring.stall_timeouts, 0u);
  EXPECT_GE(sleeping_wakes, 1u);
  s = service.stats();
  EXPECT_EQ(s.reader.positions_resolved, survivor_end);
  EXPECT_EQ(s.reader.scrapes, 2u);
  EXPECT_EQ(s.reader.holes, 1u + pinned_positions);
  EXPECT_EQ(s.reader.protocol_errors, 0u);
  EXPECT_EQ(word(idx1), MakeDataWord(ChunkState::kRewriteRequested,
                                     shm_ring::GetFormat(w1_open),
                                     shm_ring::GetFlags(w1_open), 0, 1));

  ExpectFinishedPacketsDelivered(&service, *results.get());
  EXPECT_EQ(service.tb()->stats().abi_violations, 0u);
}

// ---------------------------------------------------------------------------
// 3. kDrop across processes: every packet is delivered or counted dropped.
// ---------------------------------------------------------------------------

constexpr uint32_t kDropPhaseOnePackets = 60;  // ~140 KiB, 4x the ring
constexpr uint32_t kDropPackets = 300;

// Child: one kDrop writer. The first kDropPhaseOnePackets packets go into
// the ring while nobody drains, so it must drop; the rest race the parent's
// eager drainer (it scrapes open chunks; relocations may drop suffixes). A
// LossLedger works out which packets were lost, and the child reports them.
int DroppingProducer(const RingView& ring, SharedResults* results) {
  {
    std::unique_ptr<TraceWriterV2> w_owned =
        shm_ring::TraceWriterV2Owner::Create(
            ring, WriterOptions(1, BufferExhaustedPolicy::kDrop));
    TraceWriterV2& w = *w_owned;
    test::LossLedger ledger(&shm_ring::TraceWriterV2Owner::ring_writer(w));
    for (uint32_t seq = 0; seq < kDropPackets; ++seq) {
      if (seq == kDropPhaseOnePackets) {
        FlushWriter(&w, &ledger);
        PublishState(results, kPhaseOneDone);
        if (!WaitFor(results->parent_draining, 1))
          return kChildParentTimeout;
      }
      WritePacket(&w, &ledger, 1, seq, BodyLen(1, seq));
      if (seq % 8 == 7)
        FlushWriter(&w, &ledger);
    }
    FlushWriter(&w, &ledger);
    Report(w, &results->writers[0]);
    for (uint32_t seq : ledger.lost())
      results->lost[seq] = 1;
    results->at_risk = static_cast<uint32_t>(ledger.at_risk());
  }
  PublishState(results, kDone);
  return kChildOk;
}

TEST(RingDrainerCrossProcessTest, DropPolicyAccountsForEveryPacket) {
  static_assert(kDropPackets <= kMaxPackets, "SharedResults::lost too small");
  auto region = CreateProducerRing();
  Service service(region->fd(), region->view().geometry(), {});  // eager
  SharedObject<SharedResults> results;

  Subprocess child;
  ASSERT_TRUE(child.Fork(
      [&] { return DroppingProducer(region->view(), results.get()); }));
  ASSERT_TRUE(WaitFor(results->state, kPhaseOneDone, &child))
      << "the child producer never finished its first batch";
  // release; pairs with the child's acquire load in WaitFor().
  results->parent_draining.store(1, std::memory_order_release);
  ASSERT_TRUE(service.DrainWhileRunning(&child, results.get()))
      << "the child producer did not finish in time";
  ASSERT_TRUE(child.ExitedOk()) << child.DescribeStatus();
  // acquire; pairs with the child's release store in PublishState().
  ASSERT_EQ(results->state.load(std::memory_order_acquire), kDone);
  service.DrainDeadProducer();

  auto is_lost = [&](uint32_t seq) { return results->lost[seq] != 0; };
  uint32_t num_lost = 0;
  for (uint32_t seq = 0; seq < kDropPackets; ++seq)
    num_lost += is_lost(seq);
  auto received = ReadBack(service.tb());
  ASSERT_EQ(received.size(), 1u);
  const std::vector<Received>& got = received[1];
  // In order, each at most once; what is missing is exactly what the writer
  // lost, and a gap is reported on the next packet delivered.
  uint32_t next = 0;
  for (const Received& p : got) {
    ASSERT_GE(p.seq, next) << "out of order or duplicated";
    EXPECT_FALSE(is_lost(p.seq)) << "seq " << p.seq << " arrived, yet lost";
    for (uint32_t missing = next; missing < p.seq; ++missing)
      EXPECT_TRUE(is_lost(missing)) << "seq " << missing << " vanished";
    if (p.seq > next) {
      EXPECT_NE(p.loss & trace_buffer::kDataLossPresent, 0u)
          << "unreported loss before seq " << p.seq;
    }
    next = p.seq + 1;
  }
  for (uint32_t missing = next; missing < kDropPackets; ++missing)
    EXPECT_TRUE(is_lost(missing)) << "seq " << missing << " vanished";

  // The exact identity, from the child's own stats.
  const WriterReport& r = results->writers[0];
  EXPECT_EQ(r.trace.packets_begun, kDropPackets);
  EXPECT_EQ(got.size() + r.trace.packets_dropped, r.trace.packets_begun);
  EXPECT_EQ(r.trace.packets_committed, got.size());
  EXPECT_EQ(r.trace.packets_dropped, num_lost);
  EXPECT_EQ(results->at_risk, 0u);
  // Both outcomes happened: the first batch overflowed the ring.
  EXPECT_GT(num_lost, 0u);
  EXPECT_GT(got.size(), 0u);
  const RingStats s = service.stats();
  EXPECT_EQ(s.reader.protocol_errors, 0u);
  EXPECT_EQ(service.tb()->stats().abi_violations, 0u);
  EXPECT_EQ(service.tb()->stats().chunks_discarded, 0u);
  RT_LOG(
      "cross-process drop: %zu delivered, %u lost, %llu scrapes, %llu "
      "relocations, %llu suffixes dropped",
      got.size(), num_lost, static_cast<unsigned long long>(s.reader.scrapes),
      static_cast<unsigned long long>(r.ring.relocations),
      static_cast<unsigned long long>(r.ring.suffixes_dropped));
}

}  // namespace
}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace
