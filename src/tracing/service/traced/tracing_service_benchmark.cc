/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Connection handshake latency of the tracing service, as a producer sees
// it: connect, Hello, HelloReply with the ring's memfd, map the ring. The
// service side creates, seals and maps a memfd and registers the ring with
// the drain loop.
//
// BM_TracingServiceHandshakeBaseline is the floor of the same exchange
// without the service: a Hello-sized datagram one way and a reply carrying
// an fd back over a SOCK_SEQPACKET socketpair, both ends in this thread.
// No bytes are moved that a bytes/s figure would describe, so neither sets
// SetBytesProcessed; read the times per iteration side by side.

#include <benchmark/benchmark.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "src/base/test/temp_dir.h"
#include "src/tracing/service/traced/test/test_client.h"
#include "src/tracing/service/traced/tracing_service.h"

namespace ringtrace {
namespace traced {
namespace {

// Handshakes per service instance, safely below the 65535 ProducerIDs one
// service can ever assign.
constexpr uint64_t kHandshakesPerService = 60000;

class BenchService {
 public:
  BenchService(base::TempDir* dir, uint32_t ring_kb) {
    options_.socket_path = dir->File("bench.sock");
    options_.out_path = dir->File("bench.pftrace");
    options_.out_config = DefaultOutConfig(256);
    options_.core.ring_limits.default_ring_bytes = ring_kb * 1024;
    options_.core.ring_limits.max_ring_bytes =
        ring_kb * 1024 > (16u << 20) ? ring_kb * 1024 : (16u << 20);
    service_.reset(new TracingService(options_));
    ok_ = service_->Start().ok();
  }
  ~BenchService() {
    if (ok_)
      (void)service_->Stop(nullptr);
  }
  bool ok() const { return ok_; }
  const std::string& socket_path() const { return options_.socket_path; }
  // Waits until the service has no producer left.
  bool WaitIdle() {
    return service_->WaitForStats(
        [](const ServiceStats& s) {
          return s.producers.producers_connected == 0;
        },
        test::kTestTimeoutMs);
  }

 private:
  TracingService::Options options_;
  std::unique_ptr<TracingService> service_;
  bool ok_ = false;
};

void BM_TracingServiceHandshake(benchmark::State& state) {
  const uint32_t ring_kb = static_cast<uint32_t>(state.range(0));
  base::TempDir dir;
  std::unique_ptr<BenchService> service(new BenchService(&dir, ring_kb));
  if (!service->ok()) {
    state.SkipWithError("cannot start the service");
    return;
  }
  uint64_t handshakes = 0;
  for (auto _ : state) {
    if (handshakes == kHandshakesPerService) {
      state.PauseTiming();
      service.reset();
      service.reset(new BenchService(&dir, ring_kb));
      handshakes = 0;
      state.ResumeTiming();
      if (!service->ok()) {
        state.SkipWithError("cannot restart the service");
        break;
      }
    }
    test::TestClient client;
    if (!client.Connect(service->socket_path()) || !client.Hello("bench") ||
        client.reply().status != ipc::HelloStatus::kOk) {
      state.SkipWithError("handshake failed");
      break;
    }
    ++handshakes;
    benchmark::DoNotOptimize(client.region()->base());
    // Teardown (the final drain of an empty ring) is not timed.
    state.PauseTiming();
    client.Disconnect();
    const bool idle = service->WaitIdle();
    state.ResumeTiming();
    if (!idle) {
      state.SkipWithError("the service did not see the disconnect");
      break;
    }
  }
}

void BM_TracingServiceHandshakeBaseline(benchmark::State& state) {
  std::unique_ptr<ipc::UnixSocket> producer, service;
  if (!ipc::UnixSocket::Pair(&producer, &service)) {
    state.SkipWithError("socketpair failed");
    return;
  }
  const int memfd =
      static_cast<int>(syscall(SYS_memfd_create, "bench", MFD_CLOEXEC));
  if (memfd < 0) {
    state.SkipWithError("memfd_create failed");
    return;
  }
  uint8_t hello[ipc::kMaxMessageSize] = {};
  ipc::HelloMsg msg;
  msg.name = "bench";
  const size_t hello_size = ipc::EncodeHello(msg, hello, sizeof(hello));
  uint8_t reply[ipc::kMaxMessageSize] = {};
  const size_t reply_size =
      ipc::EncodeHelloReply(ipc::HelloReplyMsg(), reply, sizeof(reply));
  uint8_t buf[ipc::kMaxMessageSize];
  for (auto _ : state) {
    size_t size = 0;
    base::ScopedFd fd;
    base::Status status;
    if (!producer->Send(hello, hello_size).ok() ||
        service->Receive(buf, sizeof(buf), &size, &fd, &status) !=
            ipc::UnixSocket::RecvResult::kMessage ||
        !service->Send(reply, reply_size, memfd).ok() ||
        producer->Receive(buf, sizeof(buf), &size, &fd, &status) !=
            ipc::UnixSocket::RecvResult::kMessage ||
        !fd.valid()) {
      state.SkipWithError("exchange failed");
      break;
    }
    benchmark::DoNotOptimize(fd.get());
  }
  close(memfd);
}

BENCHMARK(BM_TracingServiceHandshake)->Arg(64)->Arg(1024)->UseRealTime();
BENCHMARK(BM_TracingServiceHandshakeBaseline);

}  // namespace
}  // namespace traced
}  // namespace ringtrace
