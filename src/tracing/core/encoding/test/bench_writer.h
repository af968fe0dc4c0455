/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY (benchmarks). A TraceWriterV2 over a private 256 KiB test ring
// whose delegate plays the reader synchronously (state transitions and
// read_pos only, no payload copy) whenever half of the ring has been
// published, so chunk turnover is inside the timed loop and nothing is lost.

#ifndef SRC_TRACING_CORE_ENCODING_TEST_BENCH_WRITER_H_
#define SRC_TRACING_CORE_ENCODING_TEST_BENCH_WRITER_H_

#include <stdint.h>

#include <memory>

#include "ringtrace/trace_writer_v2.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/test_ring.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"

namespace ringtrace {
namespace encoding {

class HalfRingDrainer : public shm_ring::RingWriterDelegate {
 public:
  HalfRingDrainer(const shm_ring::RingView& ring, uint32_t num_chunks)
      : reader_(ring), every_(num_chunks / 2) {
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
  shm_ring::TestRingReader reader_;
  uint32_t every_;
  uint32_t published_ = 0;
};

struct BenchWriter {
  static constexpr uint32_t kChunkSize = 4096;
  static constexpr uint32_t kNumChunks = 64;

  BenchWriter()
      : ring(kChunkSize, kNumChunks), drainer(ring.view(), kNumChunks) {
    shm_ring::TraceWriterV2::Options options;
    options.writer_id = 1;
    options.delegate = &drainer;
    writer = shm_ring::TraceWriterV2Owner::Create(ring.view(), options);
  }
  shm_ring::TestRing ring;
  HalfRingDrainer drainer;
  std::unique_ptr<shm_ring::TraceWriterV2> writer;
};

}  // namespace encoding
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_ENCODING_TEST_BENCH_WRITER_H_
