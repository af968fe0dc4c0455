/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. A stand-in for the tracing service, speaking the wire protocol
// with the raw encoders (src/tracing/ipc/wire_protocol.h), on its own thread:
//
//   Start(path)  listens at |path| (before returning, so a Connect() that
//                follows finds it);
//   thread       accepts ONE producer, reads its Hello, answers with a fresh
//                sealed ring (SharedRingRegion::CreateMemfd) or, per the
//                config, with no answer at all; then counts DrainRequests
//                until the producer hangs up or the test calls
//                CloseConnection().
//
// The service keeps its own mapping of the ring (region()), so a test can
// read what the producer wrote with TestRingReader, as the real service's
// drainer would.
//
// Every wait is bounded (kWaitMs); the destructor stops and joins the
// thread. Thread model: the public methods are called by the test thread.

#ifndef SRC_TRACING_PRODUCER_TEST_FAKE_SERVICE_H_
#define SRC_TRACING_PRODUCER_TEST_FAKE_SERVICE_H_

#include <stdint.h>

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "ringtrace/producer.h"
#include "ringtrace/shm_ring_abi.h"
#include "ringtrace/status.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/core/shm_ring/shm_region.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/ipc/wire_protocol.h"

namespace ringtrace {
namespace producer {

// The tests of this directory (and the example app's) name it unqualified.
using base::TempDir;

class FakeService {
 public:
  // Upper bound of every wait, so that a broken test fails instead of
  // hanging. Never reached by a passing test.
  static constexpr int kWaitMs = 10000;

  struct Config {
    shm_ring::RingGeometry geometry{4096, 16};
    uint32_t producer_id = 7;
    uint32_t target_buffer = 2;
    // False: read the Hello, never answer (the producer's timeout).
    bool reply = true;
    // Not kOk: answer with this refusal (no fd) and hang up.
    ipc::HelloStatus status = ipc::HelloStatus::kOk;
  };

  // Null if it cannot listen at |path|.
  static std::unique_ptr<FakeService> Start(const std::string& path,
                                            const Config& config);
  ~FakeService();

  // Waits until the service answered the Hello (or decided not to). False on
  // a protocol error or if that did not happen within kWaitMs.
  bool WaitHelloDone();
  // After WaitHelloDone(): what the producer asked for, and the ring.
  ipc::HelloMsg hello();
  shm_ring::SharedRingRegion* region();

  uint64_t drain_requests();
  // Waits until at least |n| DrainRequests arrived. False after kWaitMs.
  bool WaitForDrainRequests(uint64_t n);
  // Waits until the producer hung up. False after kWaitMs.
  bool WaitForProducerGone();
  // The latest loss counters reported per WriterID (every DrainRequest's
  // entries, in arrival order), and how many datagrams carried the final
  // flag.
  std::map<uint32_t, ipc::WriterLossEntry> losses();
  uint64_t final_reports();
  uint64_t loss_entries_received();
  // The service "dies": closes the producer's connection (and stops
  // listening) now. Returns once the socket is closed.
  void CloseConnection();

 private:
  FakeService(std::unique_ptr<ipc::UnixSocket> listener, const Config& config);
  void Run();
  bool Serve();  // accept, Hello, reply; false on a protocol error

  const Config config_;
  std::unique_ptr<ipc::UnixSocket> listener_;  // service thread only
  std::unique_ptr<ipc::UnixSocket> conn_;      // service thread only
  std::thread thread_;

  std::mutex mutex_;
  std::condition_variable cv_;
  // Guarded by mutex_.
  bool stop_ = false;
  bool close_requested_ = false;
  bool closed_ = false;
  bool hello_done_ = false;
  bool protocol_error_ = false;
  bool producer_gone_ = false;
  uint64_t drain_requests_ = 0;
  std::map<uint32_t, ipc::WriterLossEntry> losses_;
  uint64_t final_reports_ = 0;
  uint64_t loss_entries_received_ = 0;
  ipc::HelloMsg hello_;
  std::unique_ptr<shm_ring::SharedRingRegion> region_;
};

// The setup most producer tests share: a FakeService on "svc.sock" in a
// private directory and a Producer connected to it.
struct FakeConnection {
  TempDir dir;
  std::unique_ptr<FakeService> service;
  std::unique_ptr<Producer> producer;

  // Starts the service with |config| and connects with |options| (whose
  // socket_path is set here). Returns what failed, if anything.
  base::Status Connect(const FakeService::Config& config,
                       ProducerOptions options);
};

// Open file descriptors of this process (entries of /proc/self/fd), for
// leak checks.
int CountOpenFds();

}  // namespace producer
}  // namespace ringtrace

#endif  // SRC_TRACING_PRODUCER_TEST_FAKE_SERVICE_H_
