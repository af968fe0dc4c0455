/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Helpers of the ServiceCore tests (service_core_unittest.cc,
// service_core_snapshot_unittest.cc): a producer-side mapping of an admitted
// ring, Hello messages, client identities, a core with test options, and a
// core with a default session as `ringtraced --out` runs it.

#ifndef SRC_TRACING_SERVICE_TRACED_TEST_CORE_FIXTURE_H_
#define SRC_TRACING_SERVICE_TRACED_TEST_CORE_FIXTURE_H_

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <utility>

#include "ringtrace/trace_writer_v2.h"
#include "src/tracing/core/shm_ring/shm_region.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"
#include "src/tracing/core/shm_ring/writer_id_allocator.h"
#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/service/traced/service_core.h"
#include "src/tracing/service/traced/tracing_service.h"

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
    target_buffer_ = static_cast<trace_buffer::BufferID>(a.reply.target_buffer);
  }

  // A writer whose chunks target |target_buffer|: by default the one the
  // HelloReply named, as a producer's own writers do.
  std::unique_ptr<shm_ring::TraceWriterV2> NewWriter() {
    return NewWriter(target_buffer_);
  }
  std::unique_ptr<shm_ring::TraceWriterV2> NewWriter(
      trace_buffer::BufferID target_buffer) {
    shm_ring::WriterID id = 0;
    EXPECT_TRUE(ids_.Allocate(&id));
    shm_ring::TraceWriterV2::Options options;
    options.writer_id = id;
    options.target_buffer = target_buffer;
    return shm_ring::TraceWriterV2Owner::Create(region_->view(), options);
  }

 private:
  std::unique_ptr<shm_ring::SharedRingRegion> region_;
  shm_ring::WriterIdAllocator ids_;
  trace_buffer::BufferID target_buffer_ = 0;
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
  return ServiceCore::Options();
}

inline std::unique_ptr<ServiceCore> MakeCore(
    const ServiceCore::Options& options) {
  base::Status status;
  std::unique_ptr<ServiceCore> core = ServiceCore::Create(options, &status);
  EXPECT_TRUE(core) << status.message();
  return core;
}

// A core with a default session (TracingSessions::StartDefaultSession, as
// TracingService starts it for `ringtraced --out`) writing into an
// anonymous file: the producers' own writers write its first buffer.
// Finish() ends it, as the service's stop does, and copies its trace into
// a file of the test's.
class DefaultSessionCore {
 public:
  explicit DefaultSessionCore(
      const ServiceCore::Options& options,
      const perfetto::protos::TraceConfig& config = DefaultOutConfig(1024))
      : core_(MakeCore(options)),
        memfd_(memfd_create("default-session", MFD_CLOEXEC)) {
    EXPECT_TRUE(memfd_.valid());
    if (!core_)
      return;
    const base::Status status = core_->sessions()->StartDefaultSession(
        config, base::ScopedFd(dup(memfd_.get())),
        std::chrono::steady_clock::now(), &id_);
    EXPECT_TRUE(status.ok()) << status.message();
  }

  ServiceCore* get() const { return core_.get(); }
  ServiceCore* operator->() const { return core_.get(); }

  // EndAllSessions and ServiceCore::Finish(), then the default session's
  // trace copied into |out_fd| (-1: nowhere). The session's export status
  // (or Finish()'s error: it runs once).
  base::Status Finish(int out_fd, ExportSummary* summary) {
    ring_drainer::RingStats drainer_stats;
    const base::Status status = core_->Finish(&drainer_stats);
    if (!status.ok())
      return status;
    (void)core_->sessions()->TakeEvents();
    const ServiceCore::DefaultSessionEnd& end =
        core_->sessions()->default_session_end();
    EXPECT_TRUE(end.ended);
    *summary = end.summary;
    if (!end.status.ok() || out_fd < 0)
      return end.status;
    return CopyOut(out_fd);
  }

  // CloneSession of the default session into |out_fd|.
  base::Status Snapshot(int out_fd, ExportSummary* summary) {
    return core_->sessions()->CloneSession(id_, out_fd, summary);
  }
  SessionId id() const { return id_; }

 private:
  base::Status CopyOut(int out_fd) {
    off_t offset = 0;
    const off_t size = lseek(memfd_.get(), 0, SEEK_END);
    while (offset < size) {
      const ssize_t n = sendfile(out_fd, memfd_.get(), &offset,
                                 static_cast<size_t>(size - offset));
      if (n <= 0)
        return base::ErrStatus("sendfile failed");
    }
    return base::OkStatus();
  }

  std::unique_ptr<ServiceCore> core_;
  base::ScopedFd memfd_;
  SessionId id_ = 0;
};
}  // namespace test
}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_TEST_CORE_FIXTURE_H_
