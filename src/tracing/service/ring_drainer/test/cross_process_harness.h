/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The harness of the cross-process drainer tests
// (ring_drainer_cross_process_unittest.cc): self-verifying packets and their
// read-back, the results page a forked child producer shares with the
// parent, and the parent's side of one ring (Service). The tests' design and
// the rules that keep them deterministic are in that file's comment.

#ifndef SRC_TRACING_SERVICE_RING_DRAINER_TEST_CROSS_PROCESS_HARNESS_H_
#define SRC_TRACING_SERVICE_RING_DRAINER_TEST_CROSS_PROCESS_HARNESS_H_

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ringtrace/logging.h"
#include "ringtrace/trace_writer_v2.h"
#include "src/base/test/subprocess.h"
#include "src/base/time.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/shm_region.h"
#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/ring_drainer/test/background_drainer.h"
#include "src/tracing/service/ring_drainer/test/child_process.h"
#include "src/tracing/service/ring_drainer/test/loss_ledger.h"
#include "src/tracing/service/ring_drainer/trace_buffer_v2_sink.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

using base::Subprocess;
using shm_ring::BufferExhaustedPolicy;
using shm_ring::RingGeometry;
using shm_ring::RingView;
using shm_ring::TraceWriterV2;
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

// Exit codes of the child (besides test::kChildOk and
// Subprocess::kOrphanedExitCode).
constexpr int kChildParentTimeout = 71;  // the parent never did its part

// Self-verifying packets.

// Body length of packet |seq|: every fourth packet is 4-12 KiB, so it spans
// two to four 4 KiB chunks; the others are 0-600 bytes.
uint32_t BodyLen(uint32_t writer, uint32_t seq);

std::string BodyFor(uint32_t writer, uint32_t seq, uint32_t len);

// FNV-1a over the writer, the sequence number and the body.
uint32_t Checksum(uint32_t writer, uint32_t seq, const std::string& body);

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
                 uint32_t len);

void FlushWriter(TraceWriterV2* w, test::LossLedger* ledger);

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
std::map<WriterID, std::vector<Received>> ReadBack(TraceBufferV2* tb);

// Processes and shared memory.

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

void PublishState(SharedResults* results, ChildState state);

void Report(const TraceWriterV2& w, WriterReport* out);

TraceWriterV2::Options WriterOptions(WriterID id, BufferExhaustedPolicy p);

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
    sink_ = std::make_unique<TraceBufferV2Sink>(tb_.get());
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
  // FUTEX_WAIT (registered in num_writers_waiting, and asleep; the drainer
  // needs RingDrainerOptions::wake_writers_early = false), and counts
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
    const uint64_t deadline = base::MonotonicNs() + kDeadlineNs;
    while (!child->Ended()) {
      if (base::MonotonicNs() > deadline) {
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
  std::unique_ptr<TraceBufferV2Sink> sink_;
  RingDrainer drainer_;
  RingId id_ = 0;
};

// The producer's ring: a memfd mapped MAP_SHARED (the child inherits this
// mapping across fork(), as a producer process holds its own).
std::unique_ptr<shm_ring::SharedRingRegion> CreateProducerRing();

// Waits until |word| holds |value| (true), or the deadline passes or, in
// the parent, |child| ends first (false). acquire; pairs with the other
// process's release store of the word (PublishState(), parent_draining).
bool WaitFor(const std::atomic<uint32_t>& word,
             uint32_t value,
             Subprocess* child = nullptr);

std::vector<uint32_t> Seqs(const std::vector<Received>& packets);

std::vector<uint32_t> Iota(uint32_t n);

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_RING_DRAINER_TEST_CROSS_PROCESS_HARNESS_H_
