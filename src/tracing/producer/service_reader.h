/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ServiceReader: the Producer's reader thread (include/ringtrace/producer.h,
// "Thread model"). It waits for the service's messages on the producer's
// socket, decodes them and calls the registered DataSourceHandlers:
//
//   StartDataSource  the instance is recorded as started, then OnStart.
//   StopDataSource   the instance is removed, OnStopRequested (by default
//                    OnStop), then DataSourceStopped once the handler acked:
//                    at once if it acked before returning, else when its
//                    ack comes (DeferredStopAcks below wakes the thread).
//   Flush            OnFlush on every registered handler, then FlushAck.
//
// The service is hostile: a malformed message, a type the service may not
// send, a start for a data source this producer never registered or for an
// instance already started, a stop for an unknown instance, a datagram
// longer than kMaxMessageSize or carrying an fd: each is a protocol
// violation, counted (service_protocol_violations), logged, and the
// producer disconnects (shutdown(2) of the socket, so the service sees the
// hang-up; the fd itself stays open until the Producer closes it, because
// app threads may still send on it). An ack that cannot be sent within
// ack_timeout_ms disconnects the same way (ack_send_failures).
//
// The thread ends on a lost connection (EOF, an error, a violation) or on
// Stop(). Before it ends, every started instance gets OnStop (ascending
// instance id); on a lost connection the DrainNotifier is marked
// disconnected first (writers refuse new packets from then on) and
// on_disconnect is called last. No handler is called after that.
//
// A stop whose ack is pending ("stopping") is no longer started: the
// reader's end does not call OnStop for it, and its late ack is dropped
// once the reader ended. A StartDataSource or StopDataSource for a
// stopping instance id is a protocol violation (the service counts ids up
// and never reuses one on a connection).
//
// Thread model: Register(), stats() and started_instances() from any
// thread; Stop() from any thread but the reader's (checked: joining itself
// would hang). The handlers run on the reader thread without any lock
// held, so they may call back into the Producer. The counters are atomics
// (relaxed: statistics, they publish nothing), so stats() takes no lock —
// it stays usable in a fork child, where the lock may have been copied
// while held.
//
// fork(): the reader thread does not exist in a child. AbandonInChild()
// closes the child's copy of the wake-up fd and nothing else; the caller
// then leaks the object (its std::thread cannot be joined nor destroyed
// there).

#ifndef SRC_TRACING_PRODUCER_SERVICE_READER_H_
#define SRC_TRACING_PRODUCER_SERVICE_READER_H_

#include <stdint.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ringtrace/producer.h"
#include "ringtrace/status.h"
#include "src/base/scoped_fd.h"
#include "src/base/thread_annotations.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/producer/writer_loss_registry.h"

namespace ringtrace {
namespace producer {

class DrainNotifier;

// The acks of deferred stops, shared by the reader and the ack closures
// that handlers hold (which may outlive the reader and the Producer): an
// ack queues its instance id and wakes the reader through an eventfd the
// channel owns. Once closed (the reader ended, or a fork child), Ack() does
// nothing.
//
// Thread model: Ack() from any thread; Take() and Close() from the reader;
// CloseInChild() in a fork child only (one atomic store: the mutex may have
// been copied while held).
class DeferredStopAcks {
 public:
  // Null (|*status| set) if the eventfd cannot be created.
  static std::shared_ptr<DeferredStopAcks> Create(base::Status* status);

  void Ack(uint32_t instance_id);
  // The ids acked since the last call, in ack order; consumes the eventfd.
  std::vector<uint32_t> Take();
  void Close();
  void CloseInChild();
  int fd() const { return fd_.get(); }

 private:
  DeferredStopAcks() = default;

  base::ScopedFd fd_;  // eventfd
  // Stored (release) by Close() and CloseInChild(); loaded (acquire) by
  // Ack() before it locks: in a fork child the flag alone stops it.
  std::atomic<bool> closed_{false};
  std::mutex mutex_;
  std::vector<uint32_t> acked_;  // guarded by mutex_
};

// Sends one datagram on |fd| (blocking or not) without waiting past
// |deadline_ms| (base::MonotonicMs()) for room in the socket buffer. False
// if it could not be sent (the peer is gone, or the time is up).
bool SendBefore(int fd, const uint8_t* data, size_t size, uint64_t deadline_ms);

// The wire form of |categories| (a handler's Categories()), as much as may
// be published: at most |room| entries; a category whose name or a tag is
// invalid (ipc::IsValidCategoryName / IsValidCategoryTag), with more than
// ipc::kMaxTagsPerCategory tags, or whose name came before, is left out; a
// description is cut to ipc::kMaxCategoryDescriptionSize bytes and its
// unprintable bytes become '?'. Returns the number left out (past |room|
// included); |*first_left_out| (if not null) gets the first one's name.
size_t ToCategoryDescriptors(const std::vector<DataSourceCategory>& categories,
                             size_t room,
                             std::vector<ipc::CategoryDescriptor>* out,
                             std::string* first_left_out);

struct ServiceReaderStats {
  uint64_t data_sources_registered = 0;
  // Categories sent in DataSourceCategories, and those left out (see
  // ToCategoryDescriptors).
  uint64_t categories_published = 0;
  uint64_t categories_not_published = 0;
  uint64_t instances_started = 0;
  uint64_t instances_stopped = 0;
  uint64_t instances_stopped_without_request = 0;
  uint64_t stops_deferred = 0;
  uint64_t deferred_stops_acked = 0;
  uint64_t flushes = 0;
  uint64_t service_protocol_violations = 0;
  uint64_t ack_send_failures = 0;
};

class ServiceReader {
 public:
  struct Options {
    // Not owned; outlives the reader. Only the reader receives on it.
    ipc::UnixSocket* socket = nullptr;
    // Not owned, may be null: marked disconnected on a lost connection.
    DrainNotifier* notifier = nullptr;
    // Passed to the handlers (DataSourceInstanceConfig::producer).
    Producer* producer = nullptr;
    // Bound on sending one ack or one RegisterDataSource.
    uint32_t ack_timeout_ms = 1000;
    std::function<void()> on_disconnect;
    // Not owned, may be null: before every DataSourceStopped and FlushAck
    // the reader sends the loss entries that changed (SendChangedLosses),
    // so the service has a stopped or flushed instance's losses before it
    // finishes the session they belong to.
    WriterLossRegistry* losses = nullptr;
  };

  // A reader without a thread yet, or null (an error) if its wake-up fd
  // cannot be created.
  static std::unique_ptr<ServiceReader> Create(const Options& options,
                                               base::Status* status);
  // Starts the thread unless it runs or Stop() was called. Register() calls
  // it too: a producer without data sources that does not ask for
  // on_disconnect needs no thread (and a fork child that connects such a
  // Producer starts none, which TSan requires after a multi-threaded fork).
  void StartThread();
  // Stop().
  ~ServiceReader();
  ServiceReader(const ServiceReader&) = delete;
  ServiceReader& operator=(const ServiceReader&) = delete;

  // Records the data source, then sends RegisterDataSource and the
  // handler's Categories() in DataSourceCategories messages (each send
  // bounded by |send_timeout_ms|; on failure the connection is shut down).
  // Errors: an invalid or duplicate name, kMaxDataSourcesPerProducer
  // reached, the reader ended (connection lost or stopped), a send failed.
  base::Status Register(const std::string& name,
                        DataSourceHandler* handler,
                        uint32_t send_timeout_ms);

  // Ends the thread (every started instance gets OnStop) and joins it; no
  // thread starts afterwards. Idempotent, thread-safe. Not from the reader
  // thread.
  void Stop();

  // In a fork child only (see above).
  void AbandonInChild();
  // In a fork child only, from the atfork handler: the ack closures the
  // child inherited do nothing (their mutex may have been copied while
  // held, and their eventfd is the parent's).
  void CloseAcksInChild() { acks_->CloseInChild(); }

  // True once the thread ended or is ending (no new instance will start).
  bool ended() const;
  ServiceReaderStats stats() const;
  bool OnReaderThread() const;

 private:
  explicit ServiceReader(const Options& options);
  void StartThreadLocked() RT_REQUIRES(mutex_);

  enum class Next { kContinue, kLost };
  void Run();
  Next ReceiveOne(std::vector<uint8_t>* buf);
  Next Dispatch(const ipc::Message& msg);
  Next OnStartDataSource(const ipc::StartDataSourceMsg& start);
  Next OnStopDataSource(uint32_t instance_id);
  // Sends DataSourceStopped for every stopping instance acked since the
  // last call.
  Next SendDeferredAcks();
  Next OnFlush(uint32_t flush_id);
  // Counts, logs and shuts the connection down.
  Next Violation(const char* what);
  // Sends |categories| of data source |name| in DataSourceCategories
  // messages, each within |send_timeout_ms|; false if one could not be
  // sent.
  bool SendCategories(const std::string& name,
                      const std::vector<ipc::CategoryDescriptor>& categories,
                      uint32_t send_timeout_ms);
  // Sends one small message within ack_timeout_ms; false on failure.
  bool SendAck(const uint8_t* data, size_t size);
  // Loss reports of every writer whose counters changed since last sent,
  // within |deadline_ms|; stops early (the next DrainRequest or the final
  // report sends the rest) after kMaxLossReportsPerAck datagrams.
  void SendChangedLosses(uint64_t deadline_ms);
  void Finish(bool lost);

  const Options options_;
  base::ScopedFd wake_fd_;  // eventfd: Stop() wakes the thread's poll()
  std::shared_ptr<DeferredStopAcks> acks_;
  // Assigned once, under mutex_, before the thread runs; joined by Stop().
  std::thread thread_;
  // Written by Stop() under mutex_ (release), read by the thread (acquire)
  // after poll() returns, and under mutex_ (relaxed, the mutex orders it)
  // by Register()/StartThreadLocked(): nothing else rides on it.
  std::atomic<bool> stop_requested_{false};
  std::mutex stop_mutex_;  // serializes Stop() calls

  mutable base::Mutex mutex_;
  struct Source {
    std::string name;
    DataSourceHandler* handler;
  };
  std::vector<Source> sources_ RT_GUARDED_BY(mutex_);
  // Started instances: id -> index in sources_.
  std::map<uint32_t, size_t> started_ RT_GUARDED_BY(mutex_);
  // Instances whose stop was requested and not acked yet (see above), with
  // whether the handler returned before acking (the stop was deferred).
  // Only the reader thread touches it.
  std::map<uint32_t, bool> stopping_;
  // Categories reserved for publication, of every data source
  // (ipc::kMaxDeclaredCategoriesPerProducer at most).
  size_t categories_reserved_ RT_GUARDED_BY(mutex_) = 0;
  bool ended_ RT_GUARDED_BY(mutex_) = false;

  // Counters (relaxed, see above).
  std::atomic<uint64_t> registered_{0};
  std::atomic<uint64_t> categories_published_{0};
  std::atomic<uint64_t> categories_not_published_{0};
  std::atomic<uint64_t> started_count_{0};
  std::atomic<uint64_t> stopped_{0};
  std::atomic<uint64_t> stopped_without_request_{0};
  std::atomic<uint64_t> stops_deferred_{0};
  std::atomic<uint64_t> deferred_acked_{0};
  std::atomic<uint64_t> flushes_{0};
  std::atomic<uint64_t> violations_{0};
  std::atomic<uint64_t> ack_failures_{0};
};

}  // namespace producer
}  // namespace ringtrace

#endif  // SRC_TRACING_PRODUCER_SERVICE_READER_H_
