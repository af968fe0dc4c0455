/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Helpers of the ServiceCore tests (service_core_unittest.cc,
// service_core_snapshot_unittest.cc): a producer-side mapping of an admitted
// ring, Hello messages, client identities and a core with test options.

#ifndef SRC_TRACING_SERVICE_TRACED_TEST_CORE_FIXTURE_H_
#define SRC_TRACING_SERVICE_TRACED_TEST_CORE_FIXTURE_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>

#include "ringtrace/trace_writer_v2.h"
#include "src/tracing/core/shm_ring/shm_region.h"
#include "src/tracing/core/shm_ring/writer_id_allocator.h"
#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/service/traced/service_core.h"

namespace ringtrace {
namespace traced {
namespace test {

// A ring on the producer's side: the admitted memfd mapped a second time,
// as a producer process would (the core keeps its own mapping).
class ProducerSide {
 public:
  explicit ProducerSide(const ServiceCore::Admission& a) {
    base::Status status;
    region_ = shm_ring::SharedRingRegion::MapFd(
        dup(a.ring_fd),
        shm_ring::RingGeometry(a.reply.chunk_size, a.reply.num_chunks),
        &status);
    EXPECT_TRUE(region_) << status.message();
  }

  // A writer whose chunks target |target_buffer|.
  std::unique_ptr<shm_ring::TraceWriterV2> NewWriter(
      trace_buffer::BufferID target_buffer = kTargetBuffer) {
    shm_ring::WriterID id = 0;
    EXPECT_TRUE(ids_.Allocate(&id));
    shm_ring::TraceWriterV2::Options options;
    options.writer_id = id;
    options.target_buffer = target_buffer;
    return std::unique_ptr<shm_ring::TraceWriterV2>(
        new shm_ring::TraceWriterV2(region_->view(), options));
  }

 private:
  std::unique_ptr<shm_ring::SharedRingRegion> region_;
  shm_ring::WriterIdAllocator ids_;
};

inline ipc::HelloMsg MakeHello(uint32_t ring_bytes = 0,
                               uint32_t chunk_size = 0) {
  ipc::HelloMsg hello;
  hello.name = "test producer";
  hello.requested_ring_bytes = ring_bytes;
  hello.requested_chunk_size = chunk_size;
  return hello;
}

inline ring_drainer::ClientIdentity Identity(int32_t pid, int32_t uid) {
  ring_drainer::ClientIdentity identity;
  identity.pid = pid;
  identity.uid = uid;
  return identity;
}

inline ServiceCore::Options CoreOptions() {
  ServiceCore::Options options;
  options.buffer_kb = 1024;
  return options;
}

inline std::unique_ptr<ServiceCore> MakeCore(
    const ServiceCore::Options& options) {
  base::Status status;
  std::unique_ptr<ServiceCore> core = ServiceCore::Create(options, &status);
  EXPECT_TRUE(core) << status.message();
  return core;
}
}  // namespace test
}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_TEST_CORE_FIXTURE_H_
