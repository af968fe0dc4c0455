/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/test/background_drainer.h"

#include "ringtrace/logging.h"

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

void BackgroundDrainer::Stop() {
  if (!thread_.joinable())
    return;
  // release; pairs with the acquire load in Run().
  stop_.store(true, std::memory_order_release);
  thread_.join();
  DrainUntilEmpty(drainer_, id_);
}

namespace {

RingDrainerOptions DrainerOptions(uint64_t head_grace_ns) {
  RingDrainerOptions options;
  options.head_grace_ns = head_grace_ns;
  return options;
}

}  // namespace

DrainedRing::DrainedRing(const Params& p)
    : ring(p.chunk_size, p.num_chunks),
      tb(trace_buffer::TraceBufferV2::Create(
          p.buffer_bytes,
          trace_buffer::TraceBufferV2::OverwritePolicy::kDiscard)),
      sink(tb.get()),
      drainer(DrainerOptions(p.head_grace_ns)) {
  RT_CHECK(tb);
  ring.SeedPositions(p.start_position);
  RingConfig config;
  config.view = ring.view();
  config.initial_read_pos = p.start_position;
  config.producer_id = p.producer_id;
  config.allowed_buffers = {{p.buffer_id, &sink}};
  id = drainer.AddRing(config);
}

void DrainUntilEmpty(RingDrainer* drainer, RingId id) {
  // Bounded: nobody writes, so each pass resolves positions or ends the
  // loop (kRetryLater needs a writer racing the reader).
  for (uint32_t i = 0; i < 1'000'000; ++i) {
    const PassResult r = drainer->DrainRing(id, DrainMode::kFlush);
    if (r.rings_stopped || (r.positions_resolved == 0 && !r.more))
      return;
  }
  RT_CHECK(false);  // A ring nobody writes cannot stay busy.
}

void SweepRing(const shm_ring::TestRing& ring,
               RingDrainer* drainer,
               RingId id) {
  FakeWriter sweeper(ring.view(), /*writer_id=*/0xffff);
  for (uint32_t i = 0; i < ring.geometry().num_chunks; ++i) {
    uint32_t position;
    RT_CHECK(sweeper.Reserve(&position));  // The ring is drained: room.
  }
  DrainUntilEmpty(drainer, id);
}

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace
