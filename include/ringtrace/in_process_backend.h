/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace::InProcessBackend: the tracing service inside the app, for an
// app that records its own traces with no ringtraced daemon (Perfetto's
// kInProcessBackend). docs/in_process.md.
//
//   ringtrace::base::Status status;
//   auto backend = ringtrace::InProcessBackend::Create({}, &status);
//   auto session = backend->NewSession(&status);
//   status = session->SetupFromText(
//       "buffers { size_kb: 4096 }\n"
//       "data_sources { config { name: \"track_event\" } }\n");
//   status = session->StartBlocking();   // the app's categories are on
//   RT_TRACE_EVENT("app", "Work");
//   status = session->StopBlocking();
//   std::string trace;
//   status = session->ReadTraceBlocking(&trace);  // a Perfetto trace file
//
// What runs. Create() starts, in this process, the service ringtraced runs
// (src/tracing/service/traced/tracing_service.h: its poll thread, the ring
// drainer's thread, a TraceBufferV2 per session buffer, the exporter that
// writes the Perfetto trace file), and connects the app to it with a
// ringtrace::Tracing, exactly as an app connects to the daemon: a sealed
// memfd ring mapped twice in this process, lock-free TraceWriterV2 writes,
// coalesced DrainRequests, the same loss counting and loss reports. No part
// of the pipeline has a second implementation; every loss rule of the
// system backend holds here (docs/trace_buffer_v2.md, docs/trace_export.md).
// The events' cost is the same too: a writer never talks to the service on
// its fast path, only when a chunk is full (measured: docs/in_process.md).
//
// The private directory. The service listens on a producer and a consumer
// socket in a directory Create() makes with mkdtemp(3) (mode 0700, owned by
// the effective uid): "ringtrace-inproc-XXXXXX" under
// InProcessBackendOptions::parent_directory, else $XDG_RUNTIME_DIR when it
// is an absolute path, else /tmp (or /tmp when the socket paths would be
// too long for sun_path). The sockets are mode 0600, and the service admits
// only peers of its own effective uid on both (root is refused too), so no
// other process reaches the app's traces but the app's own user's, who can
// read the app's memory anyway. The destructor removes the two sockets (only
// if they are still the ones it bound) and the directory (only if empty):
// it never removes a file it did not create.
//
// The app's data sources. The backend's connection (tracing()) registers a
// "track_event" data source of its own (a TrackEventDataSource the backend
// owns, not the process-wide one of RegisterTrackEventDataSource), so the
// process may register the process-wide one with a connection to the
// system service at the same time and both backends' sessions get their
// events (tracing_backends.h, "both"). Other data sources: register them
// with RegisterDataSource() (at most one live connection per
// DataSourceHandler object, as ever). Create() and RegisterDataSource()
// return once the service has the app's connection and its data sources,
// so a session set up right after finds them.
//
// Sessions. NewSession() hands out ringtrace::TracingSessions on the
// backend's consumer socket (tracing_session.h: TraceConfig typed or text,
// start, stop, flush, the trace into memory or a file descriptor, stats,
// clone; blocking and callback forms). Their StartBlocking() returns only
// once the app's data sources have started (TracingSessionOptions::
// wait_for_data_source_start): an event written after it is recorded.
//
// Thread model: Create(), NewSession() and the accessors from any thread;
// the destructor once nothing else calls. Destruction: the connection is
// stopped first (every data source instance gets OnStop, the app's rings
// are drained for the last time), then the service: each session still
// running is stopped and its trace written; a TracingSession that outlives
// the backend gets an error from every later call. Threads may go on
// writing events meanwhile: they are not recorded (no session runs).
// fork(): as ringtrace::Tracing (tracing.h): the child must not use or
// destroy the parent's backend; it may create its own.

#ifndef INCLUDE_RINGTRACE_IN_PROCESS_BACKEND_H_
#define INCLUDE_RINGTRACE_IN_PROCESS_BACKEND_H_

#include <stdint.h>

#include <memory>
#include <string>

#include "ringtrace/producer.h"
#include "ringtrace/status.h"
#include "ringtrace/tracing.h"
#include "ringtrace/tracing_session.h"

namespace ringtrace {

struct InProcessBackendOptions {
  // The app's connection: its name (the trace's process name and the
  // service's listings), the ring it asks for, the writers' policy when the
  // ring is full. socket_path and on_disconnect are the backend's own: a
  // value set here is ignored.
  ProducerOptions producer;
  // Registers the backend's own "track_event" data source (see above).
  bool register_track_event = true;
  // Where the private directory is made (an existing directory); empty: see
  // the file comment.
  std::string parent_directory;
  // The service's limits: sessions at once, and all their buffers together.
  uint32_t max_sessions = 8;
  uint64_t max_buffer_bytes = uint64_t{256} << 20;
  // Every ring is drained at least this often (the service's drain tick),
  // besides the writers' DrainRequests; 1..60000.
  uint32_t drain_period_ms = 100;
  // Create() waits at most this long for the app's connection to be in
  // place (> 0).
  int connect_timeout_ms = 10000;
};

class InProcessBackend {
 public:
  // Makes the private directory, starts the service and connects the app.
  // Null and an error in |status| if any step fails (nothing is left
  // behind).
  static std::unique_ptr<InProcessBackend> Create(
      const InProcessBackendOptions& options,
      base::Status* status);
  ~InProcessBackend();
  InProcessBackend(const InProcessBackend&) = delete;
  InProcessBackend& operator=(const InProcessBackend&) = delete;

  // A session on this backend (tracing_session.h), with |options|'
  // timeout_ms; its consumer_socket_path and wait_for_data_source_start are
  // the backend's.
  std::unique_ptr<TracingSession> NewSession(
      const TracingSessionOptions& options,
      base::Status* status);
  std::unique_ptr<TracingSession> NewSession(base::Status* status);

  // Registers a data source with the backend's connection
  // (Tracing::RegisterDataSource) and returns once the service has it, so
  // that a session started next starts it. Errors: Tracing's, and the
  // service not having it within connect_timeout_ms.
  base::Status RegisterDataSource(const std::string& name,
                                  DataSourceHandler* handler);

  // The app's connection to the in-process service: its Producer
  // (GetProducer()) hands out writers for a data source's target buffer.
  Tracing* tracing();
  // The private directory and the sockets in it.
  const std::string& directory() const;
  const std::string& producer_socket_path() const;
  const std::string& consumer_socket_path() const;

 private:
  // The service, the directory, the connection (in_process_backend.cc).
  class Impl;
  explicit InProcessBackend(std::unique_ptr<Impl> impl);
  const std::unique_ptr<Impl> impl_;
};

}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_IN_PROCESS_BACKEND_H_
