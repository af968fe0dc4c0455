/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace::TracingBackends: where the app's traces are recorded, chosen
// once at start-up, as Perfetto's TracingInitArgs::backends: the system
// service ringtraced, the in-process backend (in_process_backend.h), or
// both. docs/in_process.md.
//
//   ringtrace::TracingInitArgs args;
//   args.backends = ringtrace::kInProcessBackend | ringtrace::kSystemBackend;
//   args.system.producer.name = "my_app";
//   ringtrace::base::Status status;
//   auto backends = ringtrace::TracingBackends::Initialize(args, &status);
//   // Record a trace of this process, with or without a daemon:
//   auto session = backends->NewSession(ringtrace::kInProcessBackend,
//                                       &status);
//
// What each backend is:
//   - kSystemBackend: a ringtrace::Tracing connection to ringtraced
//     (args.system: socket, name, ring, reconnect backoff), connecting in
//     the background and reconnecting; with register_track_event, the
//     process-wide "track_event" data source
//     (track_event_data_source.h, RegisterTrackEventDataSource) is
//     registered on it. Sessions: the daemon's consumer socket
//     (args.system_consumer_socket_path; empty: the default path), started
//     by this app or by anyone else (the `ringtrace` CLI).
//   - kInProcessBackend: an InProcessBackend (args.in_process), with its own
//     "track_event" data source. Sessions: only this app's.
// With both, every session of either backend gets the events of the
// categories it enables, from the same macros, each into its own buffers
// (the process may run up to 8 TrackEvent instances in all, track_event.h).
//
// One TracingBackends with kSystemBackend and register_track_event at a
// time in a process (the process-wide data source follows one connection at
// a time, track_event_data_source.h); the app owns the object, it is no
// hidden singleton.
//
// Thread model: every method from any thread; the destructor once nothing
// else calls. It destroys the in-process backend first (its sessions'
// traces are written), then the system connection.

#ifndef INCLUDE_RINGTRACE_TRACING_BACKENDS_H_
#define INCLUDE_RINGTRACE_TRACING_BACKENDS_H_

#include <stdint.h>

#include <memory>
#include <string>

#include "ringtrace/in_process_backend.h"
#include "ringtrace/status.h"
#include "ringtrace/tracing.h"
#include "ringtrace/tracing_session.h"

namespace ringtrace {

// The backends, a bit set (the C API's RINGTRACE_BACKEND_* values).
enum BackendType : uint32_t {
  kSystemBackend = 1u << 0,
  kInProcessBackend = 1u << 1,
};
constexpr uint32_t kAllBackends = kSystemBackend | kInProcessBackend;

struct TracingInitArgs {
  // BackendType bits; at least one.
  uint32_t backends = kSystemBackend;
  // The system backend's connection (TracingOptions::producer.socket_path
  // empty: the default producer socket).
  TracingOptions system;
  // Sessions of the system backend: the daemon's consumer socket; empty:
  // the default path (tracing_session.h).
  std::string system_consumer_socket_path;
  // The in-process backend.
  InProcessBackendOptions in_process;
  // The "track_event" data source on each backend (see above).
  bool register_track_event = true;
};

class TracingBackends {
 public:
  // Starts the backends of |args|: the in-process one first (a failure
  // there fails the call), then the system connection, which returns at
  // once and connects in the background (a missing daemon is no error).
  // Null and an error in |status| on a bad argument or a failed start.
  static std::unique_ptr<TracingBackends> Initialize(
      const TracingInitArgs& args,
      base::Status* status);
  ~TracingBackends();
  TracingBackends(const TracingBackends&) = delete;
  TracingBackends& operator=(const TracingBackends&) = delete;

  // A session on |backend| (one BackendType bit the object has), as
  // TracingSession::Connect (system) or InProcessBackend::NewSession;
  // |options|' consumer_socket_path is the backend's (a non-empty one is
  // kept for the system backend).
  std::unique_ptr<TracingSession> NewSession(
      BackendType backend,
      const TracingSessionOptions& options,
      base::Status* status);
  std::unique_ptr<TracingSession> NewSession(BackendType backend,
                                             base::Status* status);

  // The backends chosen.
  uint32_t backends() const;
  // The connection of |backend|: to register more data sources, or to ask
  // whether it is connected. Null when the object does not have it.
  Tracing* tracing(BackendType backend);
  // The in-process backend, or null.
  InProcessBackend* in_process();

 private:
  TracingBackends(const TracingInitArgs& args,
                  std::unique_ptr<InProcessBackend> in_process,
                  std::unique_ptr<Tracing> system);

  const uint32_t backends_;
  const std::string system_consumer_socket_path_;
  // Destroyed in reverse order: the in-process backend, then the system
  // connection.
  std::unique_ptr<Tracing> system_;
  std::unique_ptr<InProcessBackend> in_process_;
};

}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_TRACING_BACKENDS_H_
