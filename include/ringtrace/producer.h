/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The producer library: what an instrumented app links to write trace
// packets for a running ringtrace service (ringtraced). Design and protocol:
// docs/service.md.
//
//   ringtrace::ProducerOptions options;
//   options.socket_path = "/run/ringtrace/producer.sock";
//   options.name = "my_app";
//   base::Status status;
//   auto producer = ringtrace::Producer::Connect(options, &status);
//   if (!producer) { ...status.message()...; }
//   // On each thread that traces:
//   std::unique_ptr<ringtrace::shm_ring::TraceWriterV2> writer =
//       producer->NewTraceWriter(&status);
//   { auto packet = writer->NewTracePacket(); packet->AppendVarInt(8, ts); }
//   writer->Flush();
//
// Connect() does the Hello round trip with the service (bounded by
// connect_timeout_ms), validates the reply and maps the shared ring the
// service created for this producer. Every writer then writes into that ring
// without any system call; when writers publish chunks or run out of room,
// the library sends the service a DrainRequest, coalesced so that at most
// one is in flight per producer, and never blocking the app thread
// (src/tracing/producer/drain_notifier.h has the exact rule).
//
// When the service goes away (it exits, crashes or hangs up), the producer
// notices on its next DrainRequest (or connected()), marks itself
// disconnected and stops sending; the ring stays mapped: nothing crashes and
// nothing hangs. Nobody drains the ring any more, so from then on every new
// packet is dropped at once and counted (TraceWriterV2Stats::
// packets_refused), whatever buffer_exhausted_policy says: a stall could
// only wait for nobody. A packet already begun finishes as usual (at most
// one stall of stall_timeout_ms). A Producer never reconnects; an app that
// wants to trace again connects a new one.
//
// Losses reach the trace: the producer reports its writers' cumulative loss
// counters (packets dropped before and after they ended, bytes, stall
// timeouts) to the service, piggybacked on DrainRequests whenever a counter
// changed, and in a final report when the Producer is destroyed. The
// service writes them into the trace's TraceStats per producer and writer
// (docs/service.md, "Loss reports").
//
// fork(): the library registers pthread_atfork handlers. In the child, every
// Producer inherited from the parent (and its writers) becomes inert: its
// ring mapping is replaced by private memory, it never uses the socket
// again, connected() is false, and every packet its writers are asked to
// write is dropped and counted. Writers of threads that do not exist in the
// child must simply never be used (nor destroyed). The child may Connect() a
// Producer of its own. docs/service.md, "fork()".
//
// The packet guarantee. Once a packet has ended (its TracePacketHandle went
// out of scope, or Finish() returned), it is published in the shared ring:
// it is in the service's final trace, in any snapshot taken after that
// moment, and in the trace even if the app is then SIGKILLed, frozen or
// never calls Flush() — or its loss is counted (the writer's stats, the
// producer's loss reports in TraceStats) and flagged on the sequence's next
// packet (previous_packet_dropped). Tested with real processes in
// src/tracing/test/packet_guarantee_unittest.cc; design in
// docs/ring-protocol.md section 11.4.
//
// Lifetime: every writer must be destroyed before its Producer (the writers
// write into the Producer's mapping and notify through it).
//
// Thread model: Connect() blocks the calling thread. NewTraceWriter(),
// connected(), stats() and the accessors may be called from any thread
// concurrently. Each TraceWriterV2 is used by one thread at a time (see
// trace_writer_v2.h); any number of them write concurrently.

#ifndef INCLUDE_RINGTRACE_PRODUCER_H_
#define INCLUDE_RINGTRACE_PRODUCER_H_

#include <stdint.h>

#include <memory>
#include <string>

#include "ringtrace/shm_ring_abi.h"
#include "src/base/status.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/trace_writer_v2.h"

namespace ringtrace {

namespace ipc {
class UnixSocket;
}  // namespace ipc
namespace producer {
class DrainNotifier;
class ProducerRing;
class SocketDrainTransport;
class WriterLossRegistry;
struct ForkHandlers;
}  // namespace producer

// The service's identifier for this producer (HelloReply.producer_id).
// ProducerID: one definition for the project, in ringtrace/ids.h.

struct ProducerOptions {
  // The service's socket (ringtraced --socket PATH).
  std::string socket_path;
  // Shown in the service's logs and trace: 1..64 printable ASCII characters.
  std::string name = "ringtrace_producer";
  // Hints for the ring the service creates (it clamps them to its limits and
  // rounds them to powers of two); 0: the service's default.
  uint32_t requested_ring_bytes = 0;
  uint32_t requested_chunk_size = 0;
  // The largest ring (chunk_size * num_chunks) this producer accepts from
  // the service. A reply beyond it fails Connect(): a broken or hostile
  // service cannot make the app map (and, as the writers cycle through it,
  // touch) an arbitrary amount of memory.
  uint64_t max_ring_bytes = 64ull << 20;
  // Bound on all of Connect(): connecting to the socket (which would block
  // while the service's listen backlog is full) and the Hello round trip.
  uint32_t connect_timeout_ms = 2000;
  // Bound on the final loss report the destructor sends (a stopped service
  // does not read its socket): after this long it gives up and closes.
  uint32_t disconnect_timeout_ms = 1000;
  // What a writer does when the ring is full (ring_writer.h).
  shm_ring::BufferExhaustedPolicy buffer_exhausted_policy =
      shm_ring::BufferExhaustedPolicy::kDrop;
  uint32_t stall_timeout_ms = 100;
  // DrainNotifier's retry interval: a DrainRequest the service has not acted
  // upon (read_pos did not move) is sent again after this long.
  uint32_t drain_request_retry_ms = 10;
};

struct ProducerStats {
  uint64_t writers_created = 0;
  uint64_t drain_requests_sent = 0;
  // Notifications covered by a request already in flight.
  uint64_t drain_requests_coalesced = 0;
  // Requests dropped because the socket buffer was full (the service had
  // unread requests queued).
  uint64_t drain_requests_dropped = 0;
  // Notifications ignored after the service went away.
  uint64_t notifications_after_disconnect = 0;
  // True in a child process for a Producer inherited across fork().
  bool inert_after_fork = false;
};

class Producer {
 public:
  // Connects to the service at options.socket_path. Returns null and sets
  // |*status| (if not null) when the service is not there, refuses the
  // producer, does not answer in time, or answers with anything but a valid
  // HelloReply carrying exactly one ring fd that is sealed against shrinking
  // and large enough for the ring's geometry. Never leaks an fd.
  static std::unique_ptr<Producer> Connect(const ProducerOptions& options,
                                           base::Status* status);

  // Sends the final loss report (bounded by disconnect_timeout_ms) and
  // closes the connection (the service then drains the ring one last time).
  // Every writer must have been destroyed. In a child after fork(), only
  // releases the child's copies (no report, nothing sent).
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // A writer with a WriterID never used on this ring before. Returns null
  // (|*status| set, if not null) once the ring's 65535 writer IDs are used
  // up; a new ring needs a new Producer.
  std::unique_ptr<shm_ring::TraceWriterV2> NewTraceWriter(
      base::Status* status = nullptr);

  // False once the service is known to be gone: a DrainRequest failed, or
  // this call found the socket hung up (one poll() system call while the
  // producer still believes it is connected).
  bool connected() const;

  ProducerStats stats() const;
  ProducerID producer_id() const { return producer_id_; }
  shm_ring::BufferID target_buffer() const { return target_buffer_; }
  const shm_ring::RingGeometry& geometry() const;

 private:
  friend struct producer::ForkHandlers;
  Producer();

  // The atfork child handler (single-threaded, async-signal-safe work only).
  void BecomeInertAfterFork();
  void SendFinalLossReport();

  ProducerOptions options_;
  // Declared first, destroyed last: the writers' slots outlive everything
  // that could still update or read them.
  std::unique_ptr<producer::WriterLossRegistry> losses_;
  std::unique_ptr<ipc::UnixSocket> socket_;
  std::unique_ptr<producer::SocketDrainTransport> transport_;
  std::unique_ptr<producer::DrainNotifier> notifier_;
  std::unique_ptr<producer::ProducerRing> ring_;
  ProducerID producer_id_ = 0;
  shm_ring::BufferID target_buffer_ = 0;
  // Set only in a fork child, by the atfork handler, before any other code
  // runs there; read by that process's threads afterwards.
  bool inert_after_fork_ = false;
  // The process-wide list of live Producers (for the atfork handlers).
  Producer* prev_ = nullptr;
  Producer* next_ = nullptr;
};

}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_PRODUCER_H_
