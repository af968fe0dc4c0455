/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/test/background_drainer.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

BackgroundDrainer::BackgroundDrainer(RingDrainer* drainer, RingId id)
    : drainer_(drainer), id_(id), thread_([this] { Run(); }) {}

BackgroundDrainer::~BackgroundDrainer() {
  Stop();
}

void BackgroundDrainer::WritersDone() {
  // release; pairs with the acquire load in Run(): the writers' last
  // publications happen before the kFlush passes.
  writers_done_.store(true, std::memory_order_release);
}

void BackgroundDrainer::Run() {
  for (;;) {
    // acquire; pairs with the release store in WritersDone().
    const bool flush = writers_done_.load(std::memory_order_acquire);
    const PassResult r = drainer_->DrainRing(
        id_, flush ? DrainMode::kFlush : DrainMode::kNormal);
    if (r.rings_stopped)
      return;
    if (r.positions_resolved == 0 && !r.more) {
      // acquire; pairs with the release store in Stop().
      if (stop_.load(std::memory_order_acquire))
        return;
      std::this_thread::yield();
    }
  }
}

bool BackgroundDrainer::WaitUntilDrained(const FakeRing& ring) {
  // Bounded; each turn gives the drain thread the CPU.
  for (uint32_t i = 0; i < 20'000'000; ++i) {
    if (ring.read_pos() == ring.write_pos())
      return true;
    std::this_thread::yield();
  }
  return false;
}

void BackgroundDrainer::Stop() {
  if (!thread_.joinable())
    return;
  // release; pairs with the acquire load in Run().
  stop_.store(true, std::memory_order_release);
  thread_.join();
  // Bounded: nobody writes any more, so each pass resolves positions or
  // ends the loop.
  for (uint32_t i = 0; i < 1'000'000; ++i) {
    const PassResult r = drainer_->DrainRing(id_, DrainMode::kFlush);
    if (r.rings_stopped || (r.positions_resolved == 0 && !r.more))
      return;
  }
}

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace
