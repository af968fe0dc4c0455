/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. A stand-in for the tracing service that the test drives step
// by step, for the data source protocol:
//
//   Start(path)     listens at |path| (before returning) and starts a thread
//                   that accepts ONE producer, reads its Hello and answers
//                   with a fresh sealed ring;
//   WaitConnected() joins that thread. From then on everything happens on
//                   the test thread: Send*() puts a message in the
//                   producer's socket, Receive() takes the next message the
//                   producer sent (DrainRequests are counted and skipped;
//                   DataSourceCategories are kept aside, see
//                   declared_categories()),
//                   HasPendingMessage() tells without waiting whether one is
//                   already queued: a send(2) completes into the peer's
//                   queue, so "nothing queued" after the producer could
//                   have sent is a deterministic check, not a timing one.
//
// Every wait is bounded by kWaitMs. The destructor closes the connection
// and the listener (which removes its socket file), so a new
// ScriptedService can listen at the same path: a service restart.

#ifndef SRC_TRACING_PRODUCER_TEST_SCRIPTED_SERVICE_H_
#define SRC_TRACING_PRODUCER_TEST_SCRIPTED_SERVICE_H_

#include <stdint.h>

#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ringtrace/shm_ring_abi.h"
#include "src/tracing/core/shm_ring/shm_region.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/ipc/wire_protocol.h"

namespace ringtrace {
namespace producer {

class ScriptedService {
 public:
  static constexpr int kWaitMs = 10000;

  struct Config {
    shm_ring::RingGeometry geometry{4096, 16};
    uint32_t producer_id = 9;
    uint32_t target_buffer = 0;
  };

  // Null if it cannot listen at |path|.
  static std::unique_ptr<ScriptedService> Start(const std::string& path,
                                                const Config& config);
  static std::unique_ptr<ScriptedService> Start(const std::string& path) {
    return Start(path, Config());
  }
  ~ScriptedService();

  // Joins the handshake thread. False if no producer said Hello within
  // kWaitMs or the handshake failed.
  bool WaitConnected();

  // After WaitConnected(). False if the datagram could not be sent.
  bool Send(const uint8_t* data, size_t size, int fd = -1);
  bool SendStart(const ipc::StartDataSourceMsg& msg);
  bool SendStop(uint32_t instance_id);
  bool SendFlush(uint32_t flush_id);

  // The next message other than a DrainRequest, waiting up to kWaitMs.
  // False on timeout, hang-up (then hung_up() is true) or a datagram that
  // does not decode.
  bool Receive(ipc::Message* msg);
  // Whether a message other than a DrainRequest is queued now (no wait).
  bool HasPendingMessage();
  // Waits (kWaitMs) until the producer hangs up; messages that come first
  // are kept for Receive(). False on timeout.
  bool WaitForHangUp();
  // True once the producer's hang-up was seen; without waiting, reads what
  // is queued first.
  bool hung_up();

  // The categories of every DataSourceCategories read so far, in order,
  // with the data source each named.
  struct Declared {
    std::string data_source;
    ipc::CategoryDescriptor category;
  };
  const std::vector<Declared>& declared_categories() const { return declared_; }
  // Reads (up to kWaitMs) until a category named |name| was declared.
  bool WaitForDeclaredCategory(const std::string& name);

  // The service hangs up (keeps listening).
  void Close();

  uint64_t drain_requests() const { return drain_requests_; }
  uint64_t final_loss_reports() const { return final_loss_reports_; }
  shm_ring::SharedRingRegion* region() { return region_.get(); }
  const ipc::HelloMsg& hello() const { return hello_; }

 private:
  ScriptedService(std::unique_ptr<ipc::UnixSocket> listener,
                  const Config& config);
  bool Handshake();
  // Reads one datagram if one is queued (|wait_ms| >= 0: waits that long
  // for one). Returns false if none came.
  bool ReadOne(int wait_ms);

  const Config config_;
  std::unique_ptr<ipc::UnixSocket> listener_;
  std::unique_ptr<ipc::UnixSocket> conn_;
  std::unique_ptr<shm_ring::SharedRingRegion> region_;
  ipc::HelloMsg hello_;
  std::thread thread_;
  bool handshake_ok_ = false;  // written by the thread before it ends
  bool hung_up_ = false;
  bool bad_datagram_ = false;
  std::deque<ipc::Message> queued_;
  std::vector<Declared> declared_;
  uint64_t drain_requests_ = 0;
  uint64_t final_loss_reports_ = 0;
};

}  // namespace producer
}  // namespace ringtrace

#endif  // SRC_TRACING_PRODUCER_TEST_SCRIPTED_SERVICE_H_
