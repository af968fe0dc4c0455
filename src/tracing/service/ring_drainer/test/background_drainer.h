/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Test support: drains one ring of a RingDrainer on its own thread, the way
// the service's drain thread would, for the multi-threaded pipeline tests.
//
// Passes are DrainMode::kNormal while writers run and DrainMode::kFlush once
// WritersDone() was called; the thread yields when a pass found nothing and
// ends at Stop(). The RingDrainer must not be used by anyone else until
// Stop() returned (it is single-threaded).

#ifndef SRC_TRACING_SERVICE_RING_DRAINER_TEST_BACKGROUND_DRAINER_H_
#define SRC_TRACING_SERVICE_RING_DRAINER_TEST_BACKGROUND_DRAINER_H_

#include <atomic>
#include <thread>

#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/ring_drainer/test/fake_ring.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

// Resolves every reserved position (DrainMode::kFlush passes) on the
// caller's thread until the ring is empty. Bounded; nobody may write
// meanwhile.
void DrainUntilEmpty(RingDrainer* drainer, RingId id);

// Leaves every chunk of a drained, idle ring FreeForWrap for its next
// position: reserves a whole ring of positions without claiming them and
// drains them, so the reader visits every chunk once and reclaims the ones
// still Acknowledged from old scrapes. A writer's next claim then succeeds
// at once. Nobody may write meanwhile.
void SweepRing(const FakeRing& ring, RingDrainer* drainer, RingId id);

class BackgroundDrainer {
 public:
  BackgroundDrainer(RingDrainer* drainer, RingId id);
  ~BackgroundDrainer();

  // Any thread: from now on every pass resolves every reserved position.
  void WritersDone();
  // Ends the thread, then drains the ring until it is empty on the caller's
  // thread. Idempotent.
  void Stop();

 private:
  void Run();

  RingDrainer* const drainer_;
  const RingId id_;
  std::atomic<bool> writers_done_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_RING_DRAINER_TEST_BACKGROUND_DRAINER_H_
