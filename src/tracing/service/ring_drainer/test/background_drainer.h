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
#include <memory>
#include <thread>

#include "src/tracing/service/ring_drainer/ring_drainer.h"
#include "src/tracing/service/ring_drainer/test/fake_ring.h"
#include "src/tracing/service/ring_drainer/trace_buffer_v2_sink.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

// The setup the pipeline tests share: one shm_ring::TestRing (cursors seeded at
// |start_position|) registered with its own RingDrainer, which feeds a
// TraceBufferV2 in DISCARD mode (a test's accounting never meets
// overwrites) through a TraceBufferV2Sink allowed as |buffer_id|.
struct DrainedRing {
  struct Params {
    uint32_t chunk_size = 256;
    uint32_t num_chunks = 2;
    uint32_t start_position = 0;
    size_t buffer_bytes = 1 << 20;
    ProducerID producer_id = 1;
    BufferID buffer_id = 1;
    uint64_t head_grace_ns = 0;
  };
  explicit DrainedRing(const Params& p);
  DrainedRing(const DrainedRing&) = delete;
  DrainedRing& operator=(const DrainedRing&) = delete;

  shm_ring::TestRing ring;
  std::unique_ptr<trace_buffer::TraceBufferV2> tb;
  TraceBufferV2Sink sink;
  RingDrainer drainer;
  RingId id = 0;
};

// Resolves every reserved position (DrainMode::kFlush passes) on the
// caller's thread until the ring is empty. Bounded; nobody may write
// meanwhile.
void DrainUntilEmpty(RingDrainer* drainer, RingId id);

// Leaves every chunk of a drained, idle ring FreeForWrap for its next
// position: reserves a whole ring of positions without claiming them and
// drains them, so the reader visits every chunk once and reclaims the ones
// still Acknowledged from old scrapes. A writer's next claim then succeeds
// at once. Nobody may write meanwhile.
void SweepRing(const shm_ring::TestRing& ring, RingDrainer* drainer, RingId id);

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
