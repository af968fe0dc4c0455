/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/producer/drain_notifier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/producer/test/fake_drain_transport.h"

namespace ringtrace {
namespace producer {
namespace {

using SendResult = DrainRequestTransport::SendResult;

class ProducerDrainNotifierTest : public ::testing::Test {
 protected:
  static constexpr uint32_t kRetryMs = 10;

  DrainNotifier::Options MakeOptions(uint32_t retry_ms = kRetryMs) {
    DrainNotifier::Options options;
    options.read_pos = &read_pos_;
    options.retry_ms = retry_ms;
    options.transport = &transport_;
    options.clock = &clock_;
    return options;
  }
  void AdvanceReadPos() { read_pos_.fetch_add(1, std::memory_order_relaxed); }

  std::atomic<uint32_t> read_pos_{0};
  FakeDrainTransport transport_;
  FakeNotifierClock clock_;
};

TEST_F(ProducerDrainNotifierTest, FirstNotificationSendsThenCoalesces) {
  DrainNotifier notifier(MakeOptions());
  notifier.Notify();
  EXPECT_EQ(transport_.calls(), 1u);
  for (int i = 0; i < 100; ++i)
    notifier.Notify();
  // read_pos and the clock stand still: the request is still in flight.
  EXPECT_EQ(transport_.calls(), 1u);
  const DrainNotifierStats s = notifier.stats();
  EXPECT_EQ(s.requests_sent, 1u);
  EXPECT_EQ(s.requests_coalesced, 100u);
  EXPECT_EQ(s.requests_dropped, 0u);
  EXPECT_FALSE(s.disconnected);
}

TEST_F(ProducerDrainNotifierTest, DelegateCallsAreNotifications) {
  DrainNotifier notifier(MakeOptions());
  shm_ring::RingWriterDelegate* delegate = &notifier;
  delegate->OnChunkPublished(7);
  AdvanceReadPos();
  delegate->OnPositionBurned(8);
  AdvanceReadPos();
  delegate->OnDrainRequested();
  delegate->OnDrainRequested();
  EXPECT_EQ(transport_.calls(), 3u);
  EXPECT_EQ(notifier.stats().requests_coalesced, 1u);
}

// The fill rule: a retired chunk asks for a drain only from
// publish_threshold_chunks chunks of fill on (read_pos up to it, itself
// included), never for a chunk the service has passed; other delegate
// calls always notify.
TEST_F(ProducerDrainNotifierTest,
       RetiredChunksBelowTheFillThresholdSendNothing) {
  DrainNotifier::Options options = MakeOptions(/*retry_ms=*/0);
  options.ring_chunks = 16;
  options.publish_threshold_chunks = 4;
  DrainNotifier notifier(options);
  shm_ring::RingWriterDelegate* delegate = &notifier;
  read_pos_.store(100, std::memory_order_relaxed);
  delegate->OnChunkPublished(100);  // fill 1
  delegate->OnChunkPublished(102);  // fill 3
  EXPECT_EQ(transport_.calls(), 0u);
  delegate->OnChunkPublished(103);  // fill 4: the threshold
  EXPECT_EQ(transport_.calls(), 1u);
  delegate->OnChunkPublished(115);  // fill 16: the whole ring
  EXPECT_EQ(transport_.calls(), 2u);
  delegate->OnChunkPublished(99);            // the service has passed it
  delegate->OnChunkPublished(116 + 0x8000);  // not a position of this ring
  EXPECT_EQ(transport_.calls(), 2u);
  delegate->OnDrainRequested();  // a writer without room
  delegate->OnPositionBurned(100);
  delegate->OnFlushed(100);  // the app's flush, fill 1
  EXPECT_EQ(transport_.calls(), 5u);
  const DrainNotifierStats s = notifier.stats();
  EXPECT_EQ(s.publications_below_threshold, 4u);
  EXPECT_EQ(s.requests_sent, 5u);
  // Positions wrap modulo 2^32: the fill is still counted from read_pos.
  read_pos_.store(0xfffffffeu, std::memory_order_relaxed);
  delegate->OnChunkPublished(0xffffffffu);  // fill 2
  EXPECT_EQ(transport_.calls(), 5u);
  delegate->OnChunkPublished(1);  // fill 4
  EXPECT_EQ(transport_.calls(), 6u);
}

// Rule (a): the service resolved a position since the claim.
TEST_F(ProducerDrainNotifierTest, ReadPosMoveReArmsExactlyOnce) {
  DrainNotifier notifier(MakeOptions());
  notifier.Notify();
  for (uint32_t round = 1; round <= 5; ++round) {
    notifier.Notify();  // still in flight
    EXPECT_EQ(transport_.calls(), round);
    AdvanceReadPos();
    notifier.Notify();  // no lost wake-up: this one must send
    EXPECT_EQ(transport_.calls(), round + 1);
    notifier.Notify();  // and the claim records the new read_pos
    EXPECT_EQ(transport_.calls(), round + 1);
  }
}

// Rule (b): the retry interval ran out.
TEST_F(ProducerDrainNotifierTest, RetryIntervalReArms) {
  DrainNotifier notifier(MakeOptions());
  clock_.Set(1000);
  notifier.Notify();
  clock_.Set(1000 + kRetryMs - 1);
  notifier.Notify();
  EXPECT_EQ(transport_.calls(), 1u);
  clock_.Set(1000 + kRetryMs);
  notifier.Notify();
  EXPECT_EQ(transport_.calls(), 2u);
  notifier.Notify();
  EXPECT_EQ(transport_.calls(), 2u);
}

// The claim time is kept modulo 2^30 ms, the clock is modulo 2^32.
TEST_F(ProducerDrainNotifierTest, RetryIntervalAcrossClockWraps) {
  DrainNotifier notifier(MakeOptions());
  for (uint32_t start : {0xffff'fffau, (1u << 30) - 3, (1u << 31) - 1}) {
    clock_.Set(start);
    AdvanceReadPos();
    notifier.Notify();
    const uint32_t before = transport_.calls();
    clock_.Set(start + kRetryMs - 1);
    notifier.Notify();
    EXPECT_EQ(transport_.calls(), before) << start;
    clock_.Set(start + kRetryMs);
    notifier.Notify();
    EXPECT_EQ(transport_.calls(), before + 1) << start;
  }
}

TEST_F(ProducerDrainNotifierTest, RetryZeroSendsEveryTime) {
  DrainNotifier notifier(MakeOptions(/*retry_ms=*/0));
  for (int i = 0; i < 10; ++i)
    notifier.Notify();
  EXPECT_EQ(transport_.calls(), 10u);
  EXPECT_EQ(notifier.stats().requests_coalesced, 0u);
}

TEST_F(ProducerDrainNotifierTest, FullSocketDropsAndCountsAndRetriesLater) {
  DrainNotifier notifier(MakeOptions());
  transport_.set_result(SendResult::kWouldBlock);
  clock_.Set(50);
  notifier.Notify();
  notifier.Notify();  // the dropped request still counts as in flight
  DrainNotifierStats s = notifier.stats();
  EXPECT_EQ(transport_.calls(), 1u);
  EXPECT_EQ(s.requests_sent, 0u);
  EXPECT_EQ(s.requests_dropped, 1u);
  EXPECT_EQ(s.requests_coalesced, 1u);
  EXPECT_FALSE(s.disconnected);

  transport_.set_result(SendResult::kSent);
  clock_.Set(50 + kRetryMs);
  notifier.Notify();
  s = notifier.stats();
  EXPECT_EQ(transport_.calls(), 2u);
  EXPECT_EQ(s.requests_sent, 1u);
  EXPECT_EQ(s.requests_dropped, 1u);
}

TEST_F(ProducerDrainNotifierTest, TransportDisconnectStopsSendingForGood) {
  DrainNotifier notifier(MakeOptions(/*retry_ms=*/0));
  notifier.Notify();
  transport_.set_result(SendResult::kDisconnected);
  notifier.Notify();
  EXPECT_TRUE(notifier.disconnected());
  transport_.set_result(SendResult::kSent);
  for (int i = 0; i < 5; ++i) {
    AdvanceReadPos();
    notifier.Notify();
  }
  EXPECT_EQ(transport_.calls(), 2u);
  const DrainNotifierStats s = notifier.stats();
  EXPECT_EQ(s.requests_sent, 1u);
  EXPECT_EQ(s.notifications_after_disconnect, 5u);
  EXPECT_TRUE(s.disconnected);
}

TEST_F(ProducerDrainNotifierTest, MarkDisconnectedStopsSending) {
  DrainNotifier notifier(MakeOptions());
  EXPECT_FALSE(notifier.disconnected());
  notifier.MarkDisconnected();
  EXPECT_TRUE(notifier.disconnected());
  notifier.Notify();
  EXPECT_EQ(transport_.calls(), 0u);
  EXPECT_EQ(notifier.stats().notifications_after_disconnect, 1u);
}

// The claim race, both outcomes, forced in one thread: the hook runs between
// the decision to claim and the claim CAS.
struct RaceHook {
  DrainNotifier* notifier = nullptr;
  enum class Action { kNothing, kOtherNotification, kDisconnect } action;
  int runs = 0;

  static void Run(void* arg) {
    RaceHook* self = static_cast<RaceHook*>(arg);
    if (self->runs++ > 0)
      return;  // only the outer notification's claim is raced
    switch (self->action) {
      case Action::kNothing:
        break;
      case Action::kOtherNotification:
        self->notifier->Notify();  // claims and sends first
        break;
      case Action::kDisconnect:
        self->notifier->MarkDisconnected();
        break;
    }
  }
};

TEST_F(ProducerDrainNotifierTest, ClaimRaceUncontendedClaimSends) {
  DrainNotifier notifier(MakeOptions());
  RaceHook hook{&notifier, RaceHook::Action::kNothing};
  notifier.SetBeforeClaimHookForTesting(&RaceHook::Run, &hook);
  notifier.Notify();
  EXPECT_EQ(hook.runs, 1);
  EXPECT_EQ(transport_.calls(), 1u);
  EXPECT_EQ(notifier.stats().requests_coalesced, 0u);
}

TEST_F(ProducerDrainNotifierTest, ClaimRaceLostToAnotherThreadIsCoalesced) {
  DrainNotifier notifier(MakeOptions());
  // Once with no request in flight, once with an expired one (rule a).
  for (int expired = 0; expired < 2; ++expired) {
    RaceHook hook{&notifier, RaceHook::Action::kOtherNotification};
    notifier.SetBeforeClaimHookForTesting(&RaceHook::Run, &hook);
    const uint32_t before = transport_.calls();
    notifier.Notify();
    EXPECT_EQ(hook.runs, 2);  // outer and inner notification decided to claim
    // Exactly one of the two sent: the inner one won the CAS.
    EXPECT_EQ(transport_.calls(), before + 1);
    EXPECT_EQ(notifier.stats().requests_coalesced,
              static_cast<uint64_t>(expired + 1));
    notifier.SetBeforeClaimHookForTesting(nullptr, nullptr);
    AdvanceReadPos();
  }
}

TEST_F(ProducerDrainNotifierTest, ClaimRaceLostToDisconnectionSendsNothing) {
  DrainNotifier notifier(MakeOptions());
  RaceHook hook{&notifier, RaceHook::Action::kDisconnect};
  notifier.SetBeforeClaimHookForTesting(&RaceHook::Run, &hook);
  notifier.Notify();
  EXPECT_EQ(transport_.calls(), 0u);
  EXPECT_EQ(notifier.stats().notifications_after_disconnect, 1u);
}

// Several app threads notify in bursts; between bursts the "service"
// advances read_pos once. Every burst sends exactly one request (no lost
// wake-up, no duplicate), whatever the interleaving: the clock stands still,
// so rule (a) alone decides, and all threads that see the expired state race
// on one CAS.
TEST_F(ProducerDrainNotifierTest, ConcurrentBurstsSendOneRequestPerBurst) {
  constexpr uint32_t kThreads = 4;
  constexpr uint32_t kPerThread = 500;
  constexpr uint32_t kBursts = 20;
  DrainNotifier notifier(MakeOptions());
  ThreadBarrier barrier(kThreads + 1);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (uint32_t b = 0; b < kBursts; ++b) {
        barrier.Wait();  // burst starts
        for (uint32_t i = 0; i < kPerThread; ++i)
          notifier.Notify();
        barrier.Wait();  // burst done
      }
    });
  }
  for (uint32_t b = 0; b < kBursts; ++b) {
    barrier.Wait();
    barrier.Wait();
    EXPECT_EQ(transport_.calls(), b + 1) << "burst " << b;
    AdvanceReadPos();
  }
  for (std::thread& t : threads)
    t.join();
  const DrainNotifierStats s = notifier.stats();
  EXPECT_EQ(s.requests_sent, kBursts);
  EXPECT_EQ(s.requests_coalesced, kBursts * (kThreads * kPerThread - 1));
}

// Concurrent notifications while the transport reports the service gone:
// the transport is asked at most until the first failure is recorded and
// every notification is accounted for exactly once.
TEST_F(ProducerDrainNotifierTest, ConcurrentNotificationsAcrossDisconnect) {
  constexpr uint32_t kThreads = 4;
  constexpr uint32_t kPerThread = 500;
  DrainNotifier notifier(MakeOptions(/*retry_ms=*/0));
  transport_.set_result(SendResult::kDisconnected);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (uint32_t i = 0; i < kPerThread; ++i)
        notifier.Notify();
    });
  }
  for (std::thread& t : threads)
    t.join();
  const DrainNotifierStats s = notifier.stats();
  EXPECT_TRUE(s.disconnected);
  EXPECT_EQ(s.requests_sent, 0u);
  // Each transport call was a claim that then saw the failure; every other
  // notification was ignored (or coalesced behind a claim in progress).
  EXPECT_GE(transport_.calls(), 1u);
  EXPECT_LE(transport_.calls(), kThreads);
  EXPECT_EQ(transport_.calls() + s.notifications_after_disconnect +
                s.requests_coalesced,
            kThreads * kPerThread);
}

}  // namespace
}  // namespace producer
}  // namespace ringtrace
