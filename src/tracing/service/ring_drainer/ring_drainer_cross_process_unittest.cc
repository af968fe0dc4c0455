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

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "protos/perfetto/trace/trace_packet.pb.h"
#include "src/base/logging.h"
#include "src/base/test/subprocess.h"
#include "src/tracing/core/shm_ring/ring_wait.h"
#include "src/tracing/core/shm_ring/shm_region.h"
#include "src/tracing/core/shm_ring/trace_writer_v2.h"
#include "src/tracing/core/shm_ring/ungrouper.h"
#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/ring_drainer/test/background_drainer.h"
#include "src/tracing/service/ring_drainer/test/child_process.h"
#include "src/tracing/service/ring_drainer/test/loss_ledger.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/traced/trace_buffer_v2_sink.h"

namespace ringtrace {
namespace ring_drainer {
namespace {

using base::MonotonicNs;
using base::Subprocess;
using shm_ring::BufferExhaustedPolicy;
using shm_ring::ChunkState;
using shm_ring::MakeDataWord;
using shm_ring::RingGeometry;
using shm_ring::RingView;
using shm_ring::StateWord;
using shm_ring::TraceWriterV2;
using test::kChildOk;
using test::ProcessState;
using test::SharedObject;
using trace_buffer::TraceBufferV2;

constexpr BufferID kBufferId = 1;
constexpr ProducerID kProducerId = 7;
// 8 x 4 KiB: 32 KiB, far less than any test writes through it.
constexpr uint32_t kChunkSize = 4096;
constexpr uint32_t kNumChunks = 8;
// Every wait of either process ends by then; a bug fails the test instead of
// hanging CI. Normal runs take a small fraction of it, even under TSan.
constexpr uint64_t kDeadlineNs = 20'000'000'000ull;
// Longer than any wait for the drainer in a passing run. A stall that times
// out drops data, so the lossless tests fail if a wake-up never arrives
// (e.g. a private futex would never be woken from the other process).
constexpr uint32_t kStallTimeoutMs = 5000;

// Field numbers of perfetto.protos.TracePacket / TestEvent / TestPayload.
constexpr uint32_t kTimestamp = 8;
constexpr uint32_t kForTesting = 900;
constexpr uint32_t kTestStr = 1;
constexpr uint32_t kTestSeqValue = 2;
constexpr uint32_t kTestCounter = 3;
constexpr uint32_t kTestPayload = 5;
constexpr uint32_t kPayloadNested = 2;
constexpr uint32_t kPayloadSingleString = 4;
constexpr uint32_t kPayloadSingleInt = 5;
constexpr uint32_t kPayloadRepeatedInts = 6;

// Exit codes of the child (besides test::kChildOk and
// Subprocess::kOrphanedExitCode).
constexpr int kChildParentTimeout = 71;  // the parent never did its part

// ---------------------------------------------------------------------------
// Self-verifying packets.
// ---------------------------------------------------------------------------

// Body length of packet |seq|: every fourth packet is 4-12 KiB, so it spans
// two to four 4 KiB chunks; the others are 0-600 bytes.
uint32_t BodyLen(uint32_t writer, uint32_t seq) {
  if (seq % 4 == 3)
    return 4096 + (seq * 977 + writer * 131) % 8192;
  return (seq * 131 + writer * 17) % 600;
}

std::string BodyFor(uint32_t writer, uint32_t seq, uint32_t len) {
  std::string s(len, '\0');
  for (uint32_t i = 0; i < len; ++i)
    s[i] = static_cast<char>('a' + (writer * 7 + seq + i) % 26);
  return s;
}

// FNV-1a over the writer, the sequence number and the body.
uint32_t Checksum(uint32_t writer, uint32_t seq, const std::string& body) {
  uint32_t h = 2166136261u;
  auto mix = [&h](uint8_t b) { h = (h ^ b) * 16777619u; };
  for (int i = 0; i < 4; ++i)
    mix(static_cast<uint8_t>(writer >> (8 * i)));
  for (int i = 0; i < 4; ++i)
    mix(static_cast<uint8_t>(seq >> (8 * i)));
  for (char c : body)
    mix(static_cast<uint8_t>(c));
  return h;
}

// Writes packet |seq| of |writer| with a body of |len| bytes: the timestamp,
// then TestEvent { seq_value, str = body, payload { single_int = writer,
// repeated_ints = seq, nested { single_string }, single_string }, counter =
// seq << 32 | checksum }, nested messages as groups. With a |ledger| every
// call into |w| is reported to it (test/loss_ledger.h); the nested messages
// are finalized before the packet is finished, so finishing it is the only
// call that ends the packet.
void WritePacket(TraceWriterV2* w,
                 test::LossLedger* ledger,
                 uint32_t writer,
                 uint32_t seq,
                 uint32_t len) {
  const std::string body = BodyFor(writer, seq, len);
  // Without a ledger the calls simply run.
  auto step = [&](auto&& call) {
    if (ledger)
      ledger->Step(call);
    else
      call();
  };
  auto new_packet = [w] { return w->NewTracePacket(); };
  auto packet = ledger ? ledger->Open(seq, new_packet) : new_packet();
  shm_ring::Message* ev = nullptr;
  shm_ring::Message* payload = nullptr;
  shm_ring::Message* nested = nullptr;
  step([&] { packet->AppendVarInt(kTimestamp, 1000 + seq); });
  step([&] { ev = packet->BeginNestedMessage(kForTesting); });
  step([&] { ev->AppendVarInt(kTestSeqValue, seq); });
  step([&] { ev->AppendString(kTestStr, body); });
  step([&] { payload = ev->BeginNestedMessage(kTestPayload); });
  step([&] { payload->AppendVarInt(kPayloadSingleInt, writer); });
  step([&] { payload->AppendVarInt(kPayloadRepeatedInts, seq); });
  step([&] { nested = payload->BeginNestedMessage(kPayloadNested); });
  step([&] { nested->AppendString(kPayloadSingleString, "deep"); });
  step([&] { payload->AppendString(kPayloadSingleString, "after-nested"); });
  step([&] {
    ev->AppendVarInt(kTestCounter, static_cast<uint64_t>(seq) << 32 |
                                       Checksum(writer, seq, body));
  });
  step([&] { ev->Finalize(); });
  if (ledger && ledger->packet_open())
    ledger->PacketFinished();
  packet.Finish();
  if (ledger)
    ledger->AfterCall();
}

void FlushWriter(TraceWriterV2* w, test::LossLedger* ledger) {
  w->Flush();
  if (ledger)
    ledger->AfterCall();
}

// A packet as the service received it.
struct Received {
  uint32_t seq = 0;
  uint32_t loss = 0;  // previous_packet_dropped
};

// Reads every packet of |tb| (one read pass), ungroups it, parses it with
// libprotobuf and checks that it is intact: its writer matches the
// sequence's WriterID, its checksum matches its body, and body, timestamp
// and nested messages are exactly what the writer wrote. Intact packets are
// returned per WriterID in read order; a broken one is a test failure.
std::map<WriterID, std::vector<Received>> ReadBack(TraceBufferV2* tb) {
  std::map<WriterID, std::vector<Received>> out;
  shm_ring::Ungrouper ungrouper;
  std::vector<shm_ring::ConstBytes> slices;
  trace_buffer::TracePacket packet;
  trace_buffer::PacketSequenceProperties props;
  uint32_t loss = 0;
  tb->BeginRead();
  while (tb->ReadNextTracePacket(&packet, &props, &loss)) {
    slices.clear();
    for (const auto& s : packet.slices())
      slices.push_back({s.data, s.size});
    shm_ring::Ungrouper::SlicesResult converted;
    if (!ungrouper.UngroupSlices(slices.data(), slices.size(), &converted)
             .ok() ||
        converted.pass_through) {
      ADD_FAILURE() << "writer " << props.writer_id << ": bad groups ("
                    << shm_ring::UngroupErrorName(ungrouper.last_error())
                    << ")";
      continue;
    }
    perfetto::protos::TracePacket proto;
    if (!proto.ParseFromArray(converted.converted.data,
                              static_cast<int>(converted.converted.size)) ||
        !proto.has_for_testing()) {
      ADD_FAILURE() << "writer " << props.writer_id << ": unparsable packet";
      continue;
    }
    const auto& ev = proto.for_testing();
    const uint32_t writer = static_cast<uint32_t>(ev.payload().single_int());
    const uint32_t seq = ev.seq_value();
    SCOPED_TRACE(testing::Message() << "writer " << writer << " seq " << seq);
    const bool intact =
        writer == props.writer_id &&
        ev.counter() == (static_cast<uint64_t>(seq) << 32 |
                         Checksum(writer, seq, ev.str())) &&
        ev.str() ==
            BodyFor(writer, seq, static_cast<uint32_t>(ev.str().size())) &&
        proto.timestamp() == 1000u + seq &&
        ev.payload().repeated_ints_size() == 1 &&
        ev.payload().repeated_ints(0) == static_cast<int32_t>(seq) &&
        ev.payload().single_string() == "after-nested" &&
        ev.payload().nested_size() == 1 &&
        ev.payload().nested(0).single_string() == "deep";
    if (!intact) {
      ADD_FAILURE() << "damaged packet: " << proto.ShortDebugString();
      continue;
    }
    out[props.writer_id].push_back({seq, loss});
  }
  return out;
}

// ---------------------------------------------------------------------------
// Processes and shared memory.
// ---------------------------------------------------------------------------

// What a child writer reports, copied from its TraceWriterV2.
struct WriterReport {
  shm_ring::TraceWriterV2Stats trace;
  shm_ring::RingWriterStats ring;
};

enum ChildState : uint32_t {
  kStarting = 0,
  kPhaseOneDone = 1,  // drop test: the first batch was written
  kHolding = 2,       // kill test: the open packets are in place
  kDone = 3,          // finished and flushed; the reports are final
};

constexpr uint32_t kMaxPackets = 1024;

// The results page, in shared memory. The child writes its reports (plain
// data) and then publishes a state with a release store; the parent reads
// the reports after its acquire load of that state (and after waitpid()).
struct SharedResults {
  static_assert(std::atomic<uint32_t>::is_always_lock_free,
                "shared across processes");
  std::atomic<uint32_t> state{kStarting};  // ChildState, child -> parent
  // NewTracePacket() calls so far, child -> parent; a progress hint only.
  std::atomic<uint32_t> packets_begun{0};
  // Parent -> child: the parent drains from now on (drop test).
  std::atomic<uint32_t> parent_draining{0};
  WriterReport writers[2];
  // Drop test: lost[s] is 1 if the child's LossLedger says s was lost.
  uint8_t lost[kMaxPackets] = {};
  uint32_t at_risk = 0;  // finished packets the ledger saw unpublished
};

void PublishState(SharedResults* results, ChildState state) {
  // release; pairs with the parent's acquire load in WaitFor() or after the
  // child ended: the reports written before are visible.
  results->state.store(state, std::memory_order_release);
}

void Report(const TraceWriterV2& w, WriterReport* out) {
  out->trace = w.stats();
  out->ring = w.ring_writer().stats();
}

TraceWriterV2::Options WriterOptions(WriterID id, BufferExhaustedPolicy p) {
  TraceWriterV2::Options o;
  o.writer_id = id;
  o.target_buffer = kBufferId;
  o.policy = p;
  o.stall_timeout_ms = kStallTimeoutMs;
  return o;
}

// The service's side of one ring: its own mapping of the producer's memfd
// (another address than the producer's), a TraceBufferV2 and a RingDrainer
// that drains the ring into it.
class Service {
 public:
  Service(int memfd, const RingGeometry& g, const RingDrainerOptions& opts)
      : size_(static_cast<size_t>(g.MappingSize())), drainer_(opts) {
    base_ = static_cast<uint8_t*>(
        mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0));
    RT_CHECK(base_ != MAP_FAILED);
    view_ = RingView(base_, g);
    tb_ = TraceBufferV2::Create(8 << 20,
                                TraceBufferV2::OverwritePolicy::kDiscard);
    RT_CHECK(tb_);
    sink_ = std::make_unique<traced::TraceBufferV2Sink>(tb_.get());
    RingConfig config;
    config.view = view_;
    config.producer_id = kProducerId;
    config.allowed_buffers = {{kBufferId, sink_.get()}};
    id_ = drainer_.AddRing(config);
  }
  ~Service() {
    drainer_.RemoveRing(id_);  // before its mapping goes
    munmap(base_, size_);
  }

  const RingView& view() const { return view_; }
  TraceBufferV2* tb() const { return tb_.get(); }
  RingStats stats() const { return drainer_.ring_stats(id_); }

  // Bounded passes until the ring has nothing more right now; returns the
  // positions resolved.
  uint32_t DrainAvailable() {
    uint32_t resolved = 0;
    for (int i = 0; i < 64; ++i) {
      const PassResult r = drainer_.DrainRing(id_);
      resolved += r.positions_resolved;
      if (!r.more)
        break;
    }
    return resolved;
  }
  // Once the producer has exited or was killed: resolves every reserved
  // position (DrainMode::kFlush), as the service does for a dead producer.
  void DrainDeadProducer() { test::DrainUntilEmpty(&drainer_, id_); }

  static constexpr uint32_t kAlwaysLockStep = UINT32_MAX;

  // The child is registered in num_writers_waiting and asleep in the kernel
  // (state 'S'). The child is single-threaded, and while it is registered
  // its only blocking call is FUTEX_WAIT (ring_wait.h, W4): registered and
  // asleep means asleep on the futex.
  bool SleepsOnTheFutex(const Subprocess& child) const {
    // relaxed: only a hint, confirmed by the process state; the drainer's
    // wake-up runs the real protocol (fence, then its own load).
    return view_.num_writers_waiting()->load(std::memory_order_relaxed) != 0 &&
           ProcessState(child.pid()) == 'S';
  }
  // ... and there is nothing left to drain: it should have been woken.
  bool SleepsOnDrainedRing(const Subprocess& child) const {
    // relaxed: a diagnostic only.
    return SleepsOnTheFutex(child) &&
           view_.read_pos()->load(std::memory_order_relaxed) ==
               view_.write_pos()->load(std::memory_order_relaxed);
  }

  // Drains while |child| runs, until it ends or the deadline passes (then
  // it is killed; returns false).
  //
  // While the child has begun fewer than |lock_step_packets| packets (or
  // always, with kAlwaysLockStep), drains ONLY while the child sleeps in
  // FUTEX_WAIT (registered in num_writers_waiting, and asleep), and counts
  // the drains that moved read_pos then in *sleeping_wakes: each of them
  // ended with a FUTEX_WAKE for the sleeper. Such a drain cannot race the
  // writer: a stalled writer holds no Acquired chunk, so every reserved
  // position is Complete or a hole, and the writer sleeps until the
  // FUTEX_WAKE that ends the pass. It never scrapes. After that, drains as
  // fast as it can.
  bool DrainWhileRunning(Subprocess* child,
                         const SharedResults* results,
                         uint32_t lock_step_packets = 0,
                         uint64_t* sleeping_wakes = nullptr) {
    const uint64_t deadline = MonotonicNs() + kDeadlineNs;
    while (!child->Ended()) {
      if (MonotonicNs() > deadline) {
        if (SleepsOnDrainedRing(*child)) {
          RT_ELOG(
              "the child sleeps in FUTEX_WAIT on a drained ring: the "
              "drainer's FUTEX_WAKE never reached it");
        }
        child->Kill();
        return false;
      }
      // relaxed: a progress hint; nothing is read on its strength.
      const bool lock_step = results->packets_begun.load(
                                 std::memory_order_relaxed) < lock_step_packets;
      if (lock_step && !SleepsOnTheFutex(*child)) {
        usleep(20);
        continue;
      }
      const uint32_t resolved = DrainAvailable();
      // A lock-step drain that moved read_pos woke the sleeping child (the
      // drainer issued FUTEX_WAKE after the pass: it saw the registration).
      if (lock_step && resolved != 0)
        ++*sleeping_wakes;
      if (resolved != 0)
        continue;
      if (lock_step)
        usleep(20);  // it is still asleep: let it wake up
      else
        sched_yield();
    }
    return true;
  }

 private:
  size_t size_;
  uint8_t* base_ = nullptr;
  RingView view_;
  std::unique_ptr<TraceBufferV2> tb_;
  std::unique_ptr<traced::TraceBufferV2Sink> sink_;
  RingDrainer drainer_;
  RingId id_ = 0;
};

// The producer's ring: a memfd mapped MAP_SHARED (the child inherits this
// mapping across fork(), as a producer process holds its own).
std::unique_ptr<shm_ring::SharedRingRegion> CreateProducerRing() {
  base::Status status;
  auto region = shm_ring::SharedRingRegion::CreateMemfd(
      RingGeometry(kChunkSize, kNumChunks), &status);
  RT_CHECK(region);
  return region;
}

// Waits until |word| holds |value| (true), or the deadline passes or, in
// the parent, |child| ends first (false). acquire; pairs with the other
// process's release store of the word (PublishState(), parent_draining).
bool WaitFor(const std::atomic<uint32_t>& word,
             uint32_t value,
             Subprocess* child = nullptr) {
  const uint64_t deadline = MonotonicNs() + kDeadlineNs;
  while (word.load(std::memory_order_acquire) != value) {
    if ((child && child->Ended()) || MonotonicNs() > deadline)
      return false;
    usleep(50);
  }
  return true;
}

std::vector<uint32_t> Seqs(const std::vector<Received>& packets) {
  std::vector<uint32_t> seqs;
  for (const Received& p : packets)
    seqs.push_back(p.seq);
  return seqs;
}

std::vector<uint32_t> Iota(uint32_t n) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i)
    v[i] = i;
  return v;
}

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
    TraceWriterV2 w(ring, o);
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
  TraceWriterV2 w1(ring, WriterOptions(1, BufferExhaustedPolicy::kStall));
  TraceWriterV2 w2(ring, WriterOptions(2, BufferExhaustedPolicy::kStall));
  TraceWriterV2 idle(ring, WriterOptions(4, BufferExhaustedPolicy::kStall));
  for (uint32_t seq = 0; seq < kKilledIdleFinished; ++seq)
    WritePacket(&idle, nullptr, 4, seq, 50 + seq);
  for (uint32_t seq = 0; seq < kKilledW1Finished; ++seq)
    WritePacket(&w1, nullptr, 1, seq, kKilledW1Lens[seq]);
  w1.Flush();
  auto open1 = w1.NewTracePacket();
  open1->AppendVarInt(kTimestamp, 1000 + kKilledW1Finished);
  open1->BeginNestedMessage(kForTesting)
      ->AppendString(kTestStr, std::string(6000, 'x'));
  for (uint32_t seq = 0; seq < kKilledW2Finished; ++seq)
    WritePacket(&w2, nullptr, 2, seq, 100 + seq);
  auto open2 = w2.NewTracePacket();
  open2->AppendVarInt(kTimestamp, 1000 + kKilledW2Finished);
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
    TraceWriterV2 w(ring, WriterOptions(3, BufferExhaustedPolicy::kStall));
    for (uint32_t seq = 0; seq < kSurvivorPackets; ++seq)
      WritePacket(&w, nullptr, 3, seq, BodyLen(3, seq));
    w.Flush();
    Report(w, &results->writers[0]);
  }
  PublishState(results, kDone);
  return kChildOk;
}

TEST(RingDrainerCrossProcessTest, KilledProducerLeavesHolesNotAHang) {
  if (ProcessState(getpid()) == 0)
    GTEST_SKIP() << "needs /proc/<pid>/stat to see the child sleep";
  auto region = CreateProducerRing();
  const RingGeometry g = region->view().geometry();
  RingDrainerOptions options;
  options.head_grace_ns = kDeadlineNs * 3;  // no scrape while writers live
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

  // What was delivered: every packet finished (and published) before the
  // kill, the idle writer's included, none of the two open ones, and all of
  // the survivor's.
  auto received = ReadBack(service.tb());
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
    const WriterReport& r = results->writers[w];
    const uint32_t finished = w == 0 ? kKilledW1Finished : kKilledW2Finished;
    EXPECT_EQ(r.trace.packets_begun, finished + 1) << "writer " << w + 1;
    EXPECT_EQ(r.trace.packets_committed, finished) << "writer " << w + 1;
    EXPECT_EQ(r.trace.packets_dropped, 0u) << "writer " << w + 1;
    EXPECT_EQ(received[static_cast<WriterID>(w + 1)].size(), finished);
  }
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
    TraceWriterV2 w(ring, WriterOptions(1, BufferExhaustedPolicy::kDrop));
    test::LossLedger ledger(&w.ring_writer());
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
}  // namespace ring_drainer
}  // namespace ringtrace
