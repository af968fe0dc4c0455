/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/producer/drain_notifier.h"

#include <time.h>

#include "ringtrace/logging.h"
#include "src/base/time.h"

namespace ringtrace {
namespace producer {

DrainRequestTransport::~DrainRequestTransport() = default;
NotifierClock::~NotifierClock() = default;

uint32_t CoarseMonotonicClock::NowMs() {
  // Modulo 2^32 by design (see NotifierClock).
  return static_cast<uint32_t>(base::CoarseMonotonicMs());
}

CoarseMonotonicClock* CoarseMonotonicClock::Get() {
  static CoarseMonotonicClock* const clock = new CoarseMonotonicClock();
  return clock;
}

DrainNotifier::DrainNotifier(const Options& options)
    : read_pos_(options.read_pos),
      retry_ms_(options.retry_ms),
      publish_threshold_chunks_(options.publish_threshold_chunks),
      ring_chunks_(options.ring_chunks),
      transport_(options.transport),
      clock_(options.clock ? options.clock : CoarseMonotonicClock::Get()) {
  RT_CHECK(read_pos_ != nullptr);
  RT_CHECK(transport_ != nullptr);
  RT_CHECK(retry_ms_ <= kMaxRetryMs);
  RT_CHECK(publish_threshold_chunks_ <= ring_chunks_);
}

DrainNotifier::~DrainNotifier() = default;

void DrainNotifier::Notify() {
  // relaxed: the state word publishes nothing but itself (file comment); it
  // pairs with the relaxed claim CAS below and MarkDisconnected().
  uint64_t s = state_.load(std::memory_order_relaxed);
  if (RT_UNLIKELY(s & kDisconnected)) {
    after_disconnect_.Increment();
    return;
  }
  // relaxed: a hint for rule (a); nothing is read on the strength of it. The
  // service's release store of read_pos pairs with the ring writer's
  // acquire loads, not with this one.
  const uint32_t read_pos = read_pos_->load(std::memory_order_relaxed);
  const uint32_t now_ms = clock_->NowMs();
  if (s & kInFlight) {
    const bool serviced = read_pos != ClaimReadPos(s);             // rule (a)
    const uint32_t elapsed = (now_ms - ClaimTime(s)) & kTimeMask;  // (b)
    if (RT_LIKELY(!serviced && elapsed < retry_ms_)) {
      coalesced_.Increment();
      return;
    }
  }
  if (RT_UNLIKELY(before_claim_hook_ != nullptr))
    before_claim_hook_(before_claim_hook_arg_);
  // relaxed (success and failure): only decides which thread sends; pairs
  // with the relaxed load above in other threads. A failure means another
  // thread claimed a request after the expiry we saw, or the service went
  // away: either way this notification is covered (file comment).
  if (!state_.compare_exchange_strong(s, Claimed(now_ms, read_pos),
                                      std::memory_order_relaxed,
                                      std::memory_order_relaxed)) {
    if (s & kDisconnected)
      after_disconnect_.Increment();
    else
      coalesced_.Increment();
    return;
  }
  SendClaimed();
}

void DrainNotifier::SendClaimed() {
  switch (transport_->SendDrainRequest()) {
    case DrainRequestTransport::SendResult::kSent:
      // relaxed: stats only; pairs with the load in stats().
      sent_.fetch_add(1, std::memory_order_relaxed);
      return;
    case DrainRequestTransport::SendResult::kWouldBlock:
      // The request stays claimed: rule (b) re-arms it.
      // relaxed: stats only; pairs with the load in stats().
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    case DrainRequestTransport::SendResult::kDisconnected:
      MarkDisconnected();
      return;
  }
}

void DrainNotifier::OnPositionBurned(uint32_t) {
  Notify();
}

void DrainNotifier::OnChunkPublished(uint32_t position) {
  if (publish_threshold_chunks_ != 0) {
    // relaxed: a hint, as in Notify().
    const uint32_t read_pos = read_pos_->load(std::memory_order_relaxed);
    // The chunks from read_pos up to this one, this one included; 0, or
    // more than the ring holds, when the service has taken it already.
    const uint32_t fill = static_cast<uint32_t>(position + 1 - read_pos);
    if (fill < publish_threshold_chunks_ || fill > ring_chunks_) {
      below_threshold_.Increment();
      return;
    }
  }
  Notify();
}

void DrainNotifier::OnFlushed(uint32_t) {
  Notify();
}

void DrainNotifier::OnDrainRequested() {
  Notify();
}

void DrainNotifier::MarkDisconnected() {
  // relaxed: the bit is terminal and guards nothing; pairs with the relaxed
  // loads and CAS in Notify(), which stop sending once they see it.
  state_.fetch_or(kDisconnected, std::memory_order_relaxed);
  // relaxed: the switch guards no data; pairs with the writers' relaxed
  // loads in TraceWriterV2::NewTracePacket().
  refuse_writers_.store(true, std::memory_order_relaxed);
}

bool DrainNotifier::disconnected() const {
  // relaxed: see MarkDisconnected().
  return state_.load(std::memory_order_relaxed) & kDisconnected;
}

DrainNotifierStats DrainNotifier::stats() const {
  DrainNotifierStats stats;
  // relaxed: counters only; pair with the relaxed increments.
  stats.requests_sent = sent_.load(std::memory_order_relaxed);
  stats.requests_dropped = dropped_.load(std::memory_order_relaxed);
  stats.requests_coalesced = coalesced_.Sum();
  stats.publications_below_threshold = below_threshold_.Sum();
  stats.notifications_after_disconnect = after_disconnect_.Sum();
  stats.disconnected = disconnected();
  return stats;
}

}  // namespace producer
}  // namespace ringtrace
