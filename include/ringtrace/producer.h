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
// wants to trace again connects a new one (ringtrace::Tracing,
// include/ringtrace/tracing.h, does that in the background).
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
// child must simply never be used (nor destroyed). The inherited Producer
// refuses RegisterDataSource, and its destructor leaves the reader thread
// (which does not exist in the child) and the reader's lock alone. The
// child may Connect() a Producer of its own. docs/service.md, "fork()".
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
// Data sources. An app declares what it can trace with RegisterDataSource
// (a name, e.g. "track_event", and a DataSourceHandler). The service starts
// an instance of it for every tracing session that asks for that name
// (StartDataSource: an instance id, the BufferID its packets go to, the
// category patterns), stops it when the session ends (StopDataSource) and
// asks for flushes (Flush). docs/sessions.md, docs/service.md "Data
// sources".
//
// Lifetime. A Producer owned by a unique_ptr (what Connect() returns): every
// writer must be destroyed before its Producer (the writers write into the
// Producer's mapping and notify through it). A Producer owned by a
// std::shared_ptr (assign the unique_ptr Connect() returns to one, as
// ringtrace::Tracing does): each writer NewTraceWriter() hands out keeps the
// Producer alive, so writers may outlive every other owner; the Producer
// (its ring, its connection) is destroyed with its last writer, on whatever
// thread drops it. The destructor then sends the final loss report (bounded
// by disconnect_timeout_ms; immediate when the service is gone).
//
// Thread model. Connect() blocks the calling thread. NewTraceWriter(),
// RegisterDataSource(), connected(), stats() and the accessors may be called
// from any thread concurrently. Each TraceWriterV2 is used by one thread at
// a time (see trace_writer_v2.h); any number of them write concurrently.
//
// A Producer has one background thread, the reader, from its first
// RegisterDataSource() on (or from Connect() if on_disconnect is set; a
// Producer with neither has no thread): it waits for the service's
// messages and calls the DataSourceHandlers. Every handler
// call of a Producer happens on its reader thread, one at a time, in the
// order the service sent the messages; acks (DataSourceStopped, FlushAck)
// are sent after the handler returned (a stop's, after the handler acked
// it: DataSourceHandler::OnStopRequested). A handler may call any Producer
// method except StopDataSources() and destroying the Producer (or dropping
// its last shared_ptr, or its last writer when shared-owned): those would
// join the reader from itself, which is checked and fatal. The
// reader ends when the connection is lost (the service hung up, sent a
// malformed or unexpected message, counted in ProducerStats, or an ack
// could not be sent): every started instance then gets OnStop, and
// ProducerOptions::on_disconnect is called, on the reader thread. It also
// ends with StopDataSources() or the destructor: every started instance
// gets OnStop, without on_disconnect.

#ifndef INCLUDE_RINGTRACE_PRODUCER_H_
#define INCLUDE_RINGTRACE_PRODUCER_H_

#include <stdint.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ringtrace/ring_writer_types.h"
#include "ringtrace/shm_ring_abi.h"
#include "ringtrace/status.h"
#include "ringtrace/trace_writer_v2.h"

namespace ringtrace {

namespace ipc {
class UnixSocket;
}  // namespace ipc
namespace producer {
class DrainNotifier;
class ProducerRing;
class ServiceReader;
class SocketDrainTransport;
class WriterLossRegistry;
struct ForkHandlers;
}  // namespace producer

class Producer;

// The service's identifier for this producer (HelloReply.producer_id).
// ProducerID: one definition for the project, in ringtrace/ids.h.

struct ProducerOptions {
  // The service's socket (ringtraced --socket PATH). Empty: the default
  // that ringtraced and the ringtrace CLI use too: $RINGTRACE_PRODUCER_SOCK,
  // else $XDG_RUNTIME_DIR/ringtrace/producer.sock, else
  // /run/ringtrace/producer.sock for root, else
  // /tmp/ringtrace-<uid>/producer.sock (docs/sessions.md).
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
  // What a writer does when the ring is full (ring_writer_types.h).
  shm_ring::BufferExhaustedPolicy buffer_exhausted_policy =
      shm_ring::BufferExhaustedPolicy::kDrop;
  uint32_t stall_timeout_ms = 100;
  // DrainNotifier's retry interval: a DrainRequest the service has not acted
  // upon (read_pos did not move) is sent again after this long.
  uint32_t drain_request_retry_ms = 10;
  // Called once, on the reader thread, when the connection is lost (after
  // every started data source instance got OnStop). Not called when the
  // reader is stopped by StopDataSources() or the destructor. May be empty.
  // It must not destroy the Producer (see the thread model above).
  std::function<void()> on_disconnect;
};

// What the service asks of one data source instance (StartDataSource).
struct DataSourceInstanceConfig {
  // Unique per connection while the instance lives; never 0. A new
  // connection may reuse the ids of an old one (after their OnStop).
  uint32_t instance_id = 0;
  // The buffer the instance's packets go to: writers for it come from
  // producer->NewTraceWriter(target_buffer, ...).
  shm_ring::BufferID target_buffer = 0;
  // The registered data source name.
  std::string name;
  // TrackEvent category and tag entries (TraceConfig's track_event_config,
  // as the consumer gave them): at most 256 in all four lists, each 1..128
  // printable ASCII characters, a '*' only at the end (a pattern); matching
  // them is the data source's business (TrackEventDataSource follows
  // Perfetto's rule, docs/track_event.md "Category matching").
  std::vector<std::string> enabled_categories;
  std::vector<std::string> disabled_categories;
  std::vector<std::string> enabled_tags;
  std::vector<std::string> disabled_tags;
  // Incremental state clear period in milliseconds; 0: never.
  uint32_t clear_period_ms = 0;
  // The instance's perfetto.protos.DataSourceConfig as the consumer gave
  // it, serialized (at most 28 KiB): its name, its target_buffer (the
  // index into the TraceConfig's buffers, not the BufferID above) and
  // every field of the data source's own (ftrace_config, an app's own
  // config in a field numbered 100 or more), including those the service
  // does not know, which it passes through unread. Parse it with the
  // data source's own proto (docs/sessions.md, "A data source's own
  // config").
  std::string config;
  // The Producer that started the instance; valid at least until OnStop for
  // this instance returns (when it is shared-owned,
  // producer->weak_from_this() gives a reference that can outlive that).
  Producer* producer = nullptr;
};

// A category a data source declares (Perfetto's TrackEventCategory): what
// the service learns about it, for `ringtrace --query` and for telling a
// user which categories exist.
struct DataSourceCategory {
  std::string name;               // 1..128 printable ASCII, no '*'
  std::string description;        // 0..256 printable ASCII
  std::vector<std::string> tags;  // 0..4, each 1..64 printable ASCII, no '*'
};

// The app's side of a data source. Every call but Categories() comes from
// the reader thread of the Producer the handler is registered with, one
// call at a time per Producer. ringtrace::Tracing registers a handler with one
// connection after the other: a new connection's calls come only after every
// OnStop of the previous one, so its handlers are never called concurrently.
class DataSourceHandler {
 public:
  virtual ~DataSourceHandler();
  // An instance starts: from now on the app may write packets for it.
  virtual void OnStart(const DataSourceInstanceConfig& config) = 0;
  // The instance stops: because the service asked (then DataSourceStopped
  // is sent when this returns, unless OnStopRequested is overridden),
  // because the connection was lost, or because the Producer stops
  // (StopDataSources(), destruction). Must return only once no NEW packet
  // will begin for |instance_id| (packets already begun may still end: they
  // reach the trace if the service is still there).
  virtual void OnStop(uint32_t instance_id) = 0;
  // The service's StopDataSource, with its acknowledgement in the handler's
  // hands (Perfetto's asynchronous stop). The default calls
  // OnStop(instance_id) and then |ack|: DataSourceStopped goes out as soon
  // as it returns, as before. A handler that overrides it calls |ack| when
  // the instance has written its last packet: before returning, or later
  // from any thread. The reader sends DataSourceStopped then (the service
  // waits for it at most the session's data_source_stop_timeout_ms, and
  // counts the instance in data_source_stop_timeouts if it comes later or
  // never). Calling |ack| again, or after the connection ended, does
  // nothing; so does a copy of it called in a fork child. An instance whose
  // stop was requested gets no OnStop afterwards, not even when the
  // connection is lost while its ack is pending: it is the handler's until
  // it acks.
  virtual void OnStopRequested(uint32_t instance_id, std::function<void()> ack);
  // The service asks for a flush: writers should Flush() (or be flushed by
  // their threads soon after). FlushAck is sent when every handler of the
  // Producer returned from OnFlush. Called on every registered handler.
  virtual void OnFlush(uint32_t flush_id) = 0;
  // The categories the data source declares, published to the service
  // right after RegisterDataSource (on the registering thread, at each
  // registration: ringtrace::Tracing registers again on every new
  // connection). The producer publishes at most 512 categories of all its
  // data sources; it leaves out a category whose name or a tag does not
  // fit the limits above, cuts a longer description and replaces its
  // unprintable bytes with '?' (each logged). Default: none.
  virtual std::vector<DataSourceCategory> Categories() const;
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
  // Data sources (the reader thread's counters).
  uint64_t data_sources_registered = 0;
  // Declared categories (DataSourceHandler::Categories()) sent to the
  // service, and those left out (invalid, repeated, beyond 512).
  uint64_t categories_published = 0;
  uint64_t categories_not_published = 0;
  uint64_t instances_started = 0;
  uint64_t instances_stopped = 0;  // by the service's StopDataSource
  // Of those, the stops whose ack the handler had not given when
  // OnStopRequested returned (deferred), and the deferred ones acked later
  // while the connection lasted (DataSourceStopped sent, or the connection
  // lost in sending it; a connection that ended first drops the rest).
  uint64_t stops_deferred = 0;
  uint64_t deferred_stops_acked = 0;
  // Instances stopped because the connection was lost or the Producer
  // stopped its reader (StopDataSources(), destruction).
  uint64_t instances_stopped_without_request = 0;
  uint64_t flushes = 0;
  // The service sent something the protocol does not allow (malformed,
  // unexpected type, unknown or duplicate instance, a datagram too long or
  // carrying an fd): the producer disconnected. At most 1.
  uint64_t service_protocol_violations = 0;
  // An ack could not be sent within disconnect_timeout_ms: disconnected.
  uint64_t ack_send_failures = 0;
  // True in a child process for a Producer inherited across fork().
  bool inert_after_fork = false;
};

class Producer : public std::enable_shared_from_this<Producer> {
 public:
  // Connects to the service at options.socket_path. Returns null and sets
  // |*status| (if not null) when the service is not there, refuses the
  // producer, does not answer in time, or answers with anything but a valid
  // HelloReply carrying exactly one ring fd that is sealed against shrinking
  // and large enough for the ring's geometry. Never leaks an fd.
  static std::unique_ptr<Producer> Connect(const ProducerOptions& options,
                                           base::Status* status);

  // Stops the reader (StopDataSources()), sends the final loss report
  // (bounded by disconnect_timeout_ms) and closes the connection (the
  // service then drains the ring one last time). Every writer must have
  // been destroyed (automatic when shared-owned, see "Lifetime"). In a
  // child after fork(), only releases the child's copies (no report,
  // nothing sent, the reader thread, which does not exist there, untouched).
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // A writer with a WriterID never used on this ring before, whose chunks
  // go to HelloReply.target_buffer (target_buffer()). Returns null
  // (|*status| set, if not null) once the ring's 65535 writer IDs are used
  // up; a new ring needs a new Producer.
  std::unique_ptr<shm_ring::TraceWriterV2> NewTraceWriter(
      base::Status* status = nullptr);
  // The same, for a data source instance's buffer
  // (DataSourceInstanceConfig::target_buffer). The service drops (and
  // counts) chunks for a buffer this producer may not write.
  std::unique_ptr<shm_ring::TraceWriterV2> NewTraceWriter(
      shm_ring::BufferID target_buffer,
      base::Status* status);

  // Declares a data source: sends RegisterDataSource, and from then on the
  // reader calls |handler| (not owned; it must outlive the Producer's
  // reader, i.e. StopDataSources() or the destructor) for its instances.
  // Errors: an invalid name (1..64 printable ASCII), a name registered
  // twice, more than 32 data sources, a Producer that is disconnected,
  // stopped or inherited across fork(), or the message could not be sent
  // within connect_timeout_ms (the Producer is then disconnected).
  base::Status RegisterDataSource(const std::string& name,
                                  DataSourceHandler* handler);

  // Stops the reader thread: every started instance gets OnStop (on the
  // reader thread), no handler is called again, then returns. The
  // connection stays open (writers still write, the service still drains)
  // until the Producer is destroyed; messages the service sends are no
  // longer read. Idempotent; must not be called from a handler.
  void StopDataSources();

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
  void DisconnectInOrder();
  std::unique_ptr<shm_ring::TraceWriterV2> NewWriter(
      shm_ring::BufferID target_buffer,
      base::Status* status);

  ProducerOptions options_;
  // Declared first, destroyed last: the writers' slots outlive everything
  // that could still update or read them.
  std::unique_ptr<producer::WriterLossRegistry> losses_;
  std::unique_ptr<ipc::UnixSocket> socket_;
  std::unique_ptr<producer::SocketDrainTransport> transport_;
  std::unique_ptr<producer::DrainNotifier> notifier_;
  std::unique_ptr<producer::ProducerRing> ring_;
  // Declared after everything it uses (the socket, the notifier, the
  // options), so it is destroyed (its thread joined) first.
  std::unique_ptr<producer::ServiceReader> reader_;
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
