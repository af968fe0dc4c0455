/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// DrainNotifier: turns the ring writers' delegate calls (chunk published,
// position burned, "I need room") into DrainRequests to the service, at most
// one in flight at a time per producer.
//
// Why coalesce: a writer publishes a chunk every few kilobytes, and every
// thread has its own writer. One request per publication would be a system
// call per chunk and a flood of datagrams the service only coalesces again.
// One request that the service has not acted upon yet already covers every
// chunk published after it was sent and before the service's pass reaches
// them, so further requests until then carry no information.
//
// The service never answers a DrainRequest. What the producer can see is the
// ring's read_pos: it moves when the service resolves a position. The rule:
//
//   A request is IN FLIGHT from the moment a thread claims it (the claim
//   records read_pos and the time) until either
//     (a) read_pos differs from the recorded value: the service resolved a
//         position since the claim, so it ran a pass after (or while) the
//         request was sent, or
//     (b) retry_ms have passed since the claim: a request the service
//         dropped, a pass that deferred every head position (head grace),
//         or a full socket buffer must not silence the producer for good.
//   A notification that finds no request in flight claims one with a single
//   CAS on the state word and sends it; every other notification only
//   counts itself as coalesced. The condition is evaluated lazily, by the
//   notifying thread, so nobody needs to "clear" the flag: no thread is
//   ever woken, and nothing runs when no writer publishes.
//
// Guarantees (tested in drain_notifier_unittest.cc):
//   - At most one request per claim; concurrent notifications that find the
//     same expired state race on one CAS and exactly one of them sends.
//   - No stale suppression (no lost wake-up): once (a) or (b) holds, the
//     next notification sends a request, or another thread's concurrent
//     claim, made after (a) or (b) held, does.
//   - An app thread never blocks: the transport sends with MSG_DONTWAIT; a
//     full socket buffer drops the request (counted; the request stays in
//     flight, so the retry rule (b) applies) — a full buffer means the
//     service has unread requests queued anyway.
//   - After the transport reported the service gone, notifications are
//     ignored (counted) and nothing is sent again.
// Fill. A chunk retired by its writer (OnChunkPublished) asks for a drain
// only once the ring holds at least publish_threshold_chunks chunks from
// read_pos up to it, itself included; a retirement below that, or of a
// chunk the service took already, is counted and sends nothing. Without
// the rule a service that answers fast is asked again every chunk or two
// (each pass moves read_pos, which re-arms rule (a)): on a 2-vCPU VM a
// writer emitting 4 M slices/s sent a DrainRequest every 2 chunks, and the
// sends, with the wake-up of the service's thread inside them, were 10% of
// the writer's CPU. With 1/8 of the ring the requests come every eighth of
// a ring and each pass takes that many chunks at once; the service still
// has 7/8 of the ring's time to run before a writer finds it full. A
// flush (OnFlushed), a writer that cannot get a chunk (OnDrainRequested)
// and a burned position always notify; the service's periodic tick and its
// flushes drain the chunks below the threshold.
//
// Notifications only bound latency. Correctness never depends on them: the
// service's periodic tick drains every ring, and its final drain on
// disconnect takes everything. In particular a publication that races with
// another thread's claim (the claim wins, the send goes out, the service's
// pass runs before that publication is visible to it) waits for the next
// request or the service's tick; nothing is lost.
//
// Memory orders: the state word carries all of its data (in-flight bit,
// recorded read_pos, claim time, disconnected bit) and publishes nothing
// else, so every access to it is relaxed; it only decides which thread
// sends. The data the service reads (the chunks) is published by the ring
// writer's release CAS on the chunk state word before the delegate is
// called; the send() system call that follows in the same thread, and the
// service's recv() of it, are ordered by the kernel's socket queue, so a
// request reaches the service after the publications of the thread that
// sent it.
//
// Thread model: Notify() and the RingWriterDelegate methods are called by
// any number of app threads concurrently; they are lock-free and allocate
// nothing. The fast path (coalesced) is two relaxed loads, a clock read and
// an increment of a per-thread stripe of a counter. stats() from any thread.

#ifndef SRC_TRACING_PRODUCER_DRAIN_NOTIFIER_H_
#define SRC_TRACING_PRODUCER_DRAIN_NOTIFIER_H_

#include <stdint.h>

#include <atomic>

#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/producer/striped_counter.h"

namespace ringtrace {
namespace producer {

// Where a DrainRequest goes (the producer's socket, or a test double).
class DrainRequestTransport {
 public:
  enum class SendResult {
    kSent,
    kWouldBlock,    // the socket buffer is full; the request is dropped
    kDisconnected,  // the service is gone; never call again
  };
  virtual ~DrainRequestTransport();
  // Called by any app thread, concurrently with other calls. Must never
  // block.
  virtual SendResult SendDrainRequest() = 0;
};

// A millisecond clock for the retry rule; any epoch. Tests inject their own.
class NotifierClock {
 public:
  virtual ~NotifierClock();
  // Any thread. Must be monotonic (modulo 2^32).
  virtual uint32_t NowMs() = 0;
};

// CLOCK_MONOTONIC_COARSE (a few ns through the vDSO, jiffy resolution, which
// is plenty for a retry interval of milliseconds).
class CoarseMonotonicClock : public NotifierClock {
 public:
  uint32_t NowMs() override;
  static CoarseMonotonicClock* Get();  // a process-wide instance
};

struct DrainNotifierStats {
  uint64_t requests_sent = 0;       // handed to the transport successfully
  uint64_t requests_coalesced = 0;  // notifications covered by one in flight
  uint64_t publications_below_threshold = 0;  // the fill rule: none sent
  uint64_t requests_dropped = 0;  // claimed, but the socket buffer was full
  uint64_t notifications_after_disconnect = 0;  // ignored
  bool disconnected = false;
};

class DrainNotifier : public shm_ring::RingWriterDelegate {
 public:
  // The claim time is kept modulo 2^30 ms (about 12 days) in the state word,
  // so retry_ms must stay well below that.
  static constexpr uint32_t kMaxRetryMs = 1u << 28;

  struct Options {
    // The ring's read_pos (RingView::read_pos()); read as a hint only.
    const std::atomic<uint32_t>* read_pos = nullptr;
    // Rule (b) of the file comment. 0: never suppress (every notification
    // sends; for tests and benchmarks).
    uint32_t retry_ms = 10;
    // The fill rule (see "Fill" above). 0: every publication notifies.
    // Otherwise at most |ring_chunks| (the ring's chunk count, required
    // then).
    uint32_t publish_threshold_chunks = 0;
    uint32_t ring_chunks = 0;
    DrainRequestTransport* transport = nullptr;  // not owned, required
    NotifierClock* clock = nullptr;  // not owned; null: CoarseMonotonicClock
  };

  explicit DrainNotifier(const Options& options);
  ~DrainNotifier() override;
  DrainNotifier(const DrainNotifier&) = delete;
  DrainNotifier& operator=(const DrainNotifier&) = delete;

  // Any app thread: "the service should drain". Never blocks.
  void Notify();

  // shm_ring::RingWriterDelegate (app threads, concurrently): all three mean
  // "please drain"; the service finds out what happened from the ring.
  void OnPositionBurned(uint32_t position) override;
  void OnChunkPublished(uint32_t position) override;
  void OnFlushed(uint32_t position) override;
  void OnDrainRequested() override;

  // Stops sending for good, as if the transport had reported kDisconnected
  // (e.g. the producer saw the socket hang up), and turns on
  // writers_refuse_switch().
  void MarkDisconnected();
  bool disconnected() const;

  // True once the service is known to be gone: the writers' refuse switch
  // (TraceWriterV2::AttachProducerControls). With nobody left to drain the
  // ring, every later packet is dropped at once and counted, whatever the
  // buffer-exhausted policy, instead of filling the ring and then stalling
  // on every chunk.
  const std::atomic<bool>* writers_refuse_switch() const {
    return &refuse_writers_;
  }

  DrainNotifierStats stats() const;

  // Runs inside Notify() after the thread decided to claim a request and
  // before its claim CAS, so that a test can make another notification (or
  // a disconnection) win the race deterministically.
  using BeforeClaimHook = void (*)(void* arg);
  void SetBeforeClaimHookForTesting(BeforeClaimHook hook, void* arg) {
    before_claim_hook_ = hook;
    before_claim_hook_arg_ = arg;
  }

 private:
  // State word layout (all relaxed, see the file comment):
  //   bit 0       in flight
  //   bit 1       disconnected (terminal)
  //   bits 2..31  claim time, ms modulo 2^30
  //   bits 32..63 read_pos when the request was claimed
  static constexpr uint64_t kInFlight = 1u << 0;
  static constexpr uint64_t kDisconnected = 1u << 1;
  static constexpr uint32_t kTimeBits = 30;
  static constexpr uint32_t kTimeMask = (1u << kTimeBits) - 1;
  static uint64_t Claimed(uint32_t now_ms, uint32_t read_pos) {
    return (static_cast<uint64_t>(read_pos) << 32) |
           (static_cast<uint64_t>(now_ms & kTimeMask) << 2) | kInFlight;
  }
  static uint32_t ClaimReadPos(uint64_t s) {
    return static_cast<uint32_t>(s >> 32);
  }
  static uint32_t ClaimTime(uint64_t s) {
    return static_cast<uint32_t>(s >> 2) & kTimeMask;
  }

  void SendClaimed();

  const std::atomic<uint32_t>* const read_pos_;
  const uint32_t retry_ms_;
  const uint32_t publish_threshold_chunks_;
  const uint32_t ring_chunks_;
  DrainRequestTransport* const transport_;
  NotifierClock* const clock_;

  // Written by the claim CAS (once per request) and on disconnection; read
  // by every notification. Alone in its cache line so that the counters'
  // writes do not invalidate it.
  alignas(64) std::atomic<uint64_t> state_{0};

  // Set with the disconnected bit; read by every writer's NewTracePacket().
  alignas(64) std::atomic<bool> refuse_writers_{false};

  // Fast-path counters, striped per thread.
  StripedCounter coalesced_;
  StripedCounter below_threshold_;
  StripedCounter after_disconnect_;
  // Slow-path counters (one per system call; no striping needed).
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> dropped_{0};

  BeforeClaimHook before_claim_hook_ = nullptr;
  void* before_claim_hook_arg_ = nullptr;
};

}  // namespace producer
}  // namespace ringtrace

#endif  // SRC_TRACING_PRODUCER_DRAIN_NOTIFIER_H_
