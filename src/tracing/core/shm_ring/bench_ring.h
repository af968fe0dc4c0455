/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY (benchmarks). A ring in a real memfd MAP_SHARED mapping, and a
// delegate that plays the reader synchronously: whenever half of the ring has
// been published (counted through the writer's delegate), it resolves every
// outstanding position with the spec 5.3 test reader WITHOUT copying payload
// (state transitions and read_pos only). That cost runs inside the writer's
// call, hence inside the timed loop: chunk turnover is included.

#ifndef SRC_TRACING_CORE_SHM_RING_BENCH_RING_H_
#define SRC_TRACING_CORE_SHM_RING_BENCH_RING_H_

#include <stdlib.h>
#include <string.h>

#include <memory>

#include "src/base/test/benchmark_utils.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/shm_region.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"

namespace ringtrace {
namespace shm_ring {

// Perfetto's default shared memory buffer size per producer.
constexpr uint32_t kBenchRingBytes = 256 << 10;

// Drains the whole ring every |every| publications.
class BulkDrainer : public RingWriterDelegate {
 public:
  BulkDrainer(const RingView& ring, uint32_t every)
      : reader_(ring), every_(every) {
    reader_.set_copy_payload(false);
  }
  void OnChunkPublished(uint32_t) override {
    if (++published_ >= every_) {
      published_ = 0;
      reader_.DrainAll(nullptr);
    }
  }
  void OnDrainRequested() override { reader_.DrainAll(nullptr); }

 private:
  TestRingReader reader_;
  uint32_t every_;
  uint32_t published_ = 0;
};

struct BenchRing {
  BenchRing(uint32_t chunk_size, uint32_t ring_bytes) {
    uint32_t num_chunks = ring_bytes / chunk_size;
    if (bench::IsBenchmarkFunctionalOnly())
      num_chunks = 8;
    base::Status status;
    region = SharedRingRegion::CreateMemfd(RingGeometry(chunk_size, num_chunks),
                                           &status);
    if (!region)
      abort();
    memset(region->base(), 0, region->size());  // fault the pages in
    drainer.reset(new BulkDrainer(region->view(), num_chunks / 2));
  }
  RingWriter::Options options() {
    RingWriter::Options o;
    o.writer_id = 1;
    o.delegate = drainer.get();
    return o;
  }
  std::unique_ptr<SharedRingRegion> region;
  std::unique_ptr<BulkDrainer> drainer;
};

}  // namespace shm_ring
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_SHM_RING_BENCH_RING_H_
