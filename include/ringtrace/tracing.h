/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace::Tracing: the app's connection to the tracing service, kept up
// for the app's whole life. Design: docs/service.md, "Reconnecting".
//
//   ringtrace::TracingOptions options;
//   options.producer.socket_path = "/run/ringtrace/producer.sock";
//   options.producer.name = "my_app";
//   ringtrace::Tracing tracing(options);           // app-owned
//   tracing.RegisterDataSource("track_event", &my_handler);
//   tracing.Start();                                // returns at once
//   ...
//   uint64_t generation = 0;
//   std::shared_ptr<ringtrace::Producer> p = tracing.GetProducer(&generation);
//   if (p) { auto writer = p->NewTraceWriter(&status); ... }
//
// Ownership: Tracing is an ordinary object the app owns (typically one per
// process, created at start-up and destroyed at exit); it is not a hidden
// singleton, so tests and apps control its lifetime. A layer above (the
// TrackEvent SDK) may keep one in a process-wide slot.
//
// Connecting. Start() launches one background thread that connects with
// exponential backoff (min_backoff_ms, doubling, at most max_backoff_ms;
// back to min_backoff_ms after every successful connection), so an app
// started before the service is picked up when the service comes. On each
// connection it registers every data source declared so far (and later
// declarations at once). When the service goes away (hangs up, crashes,
// breaks the protocol), every started instance gets OnStop (on the old
// connection's reader thread), the connection is dropped and the thread
// reconnects with backoff, registering the data sources again.
//
// Generations and writers. Each successful connection is a new Producer
// with a new generation number (1, 2, ...; 0 means "never connected").
// GetProducer() returns the current Producer (null while disconnected) and
// its generation; generation() is one atomic load, so a per-thread writer
// cache can check on every event whether its writers belong to the current
// connection and drop them when not. The Producers are shared-owned and
// every writer keeps its Producer alive (producer.h, "Lifetime"): a writer
// of an old connection stays valid until its owner drops it; meanwhile
// every packet it is asked for is refused and counted
// (TraceWriterV2Stats::packets_refused), and dropping it is safe on any
// thread.
//
// Thread model. Every method may be called from any thread concurrently,
// except the destructor (no other call may be in progress or follow). The
// DataSourceHandlers are called on the current Producer's reader thread
// (producer.h); never two connections' at once. A handler must not destroy
// the Tracing object.
//
// Destruction: stops the thread (waiting for a connection attempt in
// progress, at most connect_timeout_ms), stops the current Producer's data
// sources (every started instance gets OnStop) and drops the Tracing's
// reference to it; handlers are not called after the destructor returns.
// The Producer itself lives on while writers hold it.
//
// fork(): the child's copy of a Tracing has no thread (it is not copied by
// fork) and its Producer is inert (producer.h, "fork()"): the child must not
// use or destroy the inherited Tracing; it may create its own.

#ifndef INCLUDE_RINGTRACE_TRACING_H_
#define INCLUDE_RINGTRACE_TRACING_H_

#include <stdint.h>

#include <atomic>
#include <memory>
#include <string>

#include "ringtrace/producer.h"
#include "ringtrace/status.h"

namespace ringtrace {

struct TracingOptions {
  // Options of every connection (an empty socket_path: the default path,
  // ProducerOptions::socket_path). on_disconnect is Tracing's own: a value
  // set here is ignored.
  ProducerOptions producer;
  // Reconnect backoff: the first retry after min_backoff_ms, each next one
  // twice as late, at most max_backoff_ms (min 1 ms, max >= min).
  uint32_t min_backoff_ms = 50;
  uint32_t max_backoff_ms = 2000;
};

struct TracingStats {
  uint64_t connect_attempts = 0;
  uint64_t connect_failures = 0;  // attempts that did not connect
  uint64_t connections = 0;       // == the current (or last) generation
  uint64_t disconnects = 0;       // connections lost
  // RegisterDataSource messages that failed on a connection (the
  // connection is then treated as lost).
  uint64_t register_failures = 0;
};

class Tracing {
 public:
  explicit Tracing(const TracingOptions& options);
  ~Tracing();
  Tracing(const Tracing&) = delete;
  Tracing& operator=(const Tracing&) = delete;

  // Declares a data source (name: 1..64 printable ASCII; at most 32 per
  // app; |handler| not owned, must outlive the Tracing). Registered on the
  // current connection at once (if any) and on every later one. Errors: an
  // invalid or duplicate name, too many data sources.
  base::Status RegisterDataSource(const std::string& name,
                                  DataSourceHandler* handler);

  // Starts the background thread (idempotent). Fails if the options are
  // unusable (no socket path, a backoff of 0 or max < min).
  base::Status Start();

  // The current connection's Producer and its generation, or null (and
  // *generation 0 or the last one's) while disconnected. |generation| may
  // be null.
  std::shared_ptr<Producer> GetProducer(uint64_t* generation = nullptr) const;

  // The current generation: 0 before the first connection, then the
  // generation of the current (or, while disconnected, the last)
  // connection. One acquire load, pairing with the release store made when
  // a connection is installed.
  uint64_t generation() const {
    return generation_.load(std::memory_order_acquire);
  }

  // Blocks until a connection of a generation greater than
  // |after_generation| is installed, or |timeout_ms| passed. Returns the
  // generation reached (0 on timeout). For apps that want to wait for the
  // service at start-up, and for tests.
  uint64_t WaitForConnection(uint64_t after_generation, int timeout_ms);

  // True while a connection is installed.
  bool connected() const;

  TracingStats stats() const;

 private:
  // The connection thread, its state and the data sources (tracing.cc).
  class Impl;

  // The release store installing a connection (Impl) pairs with
  // generation()'s acquire load.
  std::atomic<uint64_t> generation_{0};
  const std::unique_ptr<Impl> impl_;
};

}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_TRACING_H_
