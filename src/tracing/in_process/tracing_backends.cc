/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/tracing_backends.h"

#include <utility>

#include "ringtrace/track_event_data_source.h"

namespace ringtrace {

// static
std::unique_ptr<TracingBackends> TracingBackends::Initialize(
    const TracingInitArgs& args,
    base::Status* status) {
  if (args.backends == 0 || (args.backends & ~kAllBackends) != 0) {
    *status = base::ErrStatus(
        "backends 0x%x: one or both of kSystemBackend (0x%x) and "
        "kInProcessBackend (0x%x)",
        args.backends, static_cast<uint32_t>(kSystemBackend),
        static_cast<uint32_t>(kInProcessBackend));
    return nullptr;
  }
  std::unique_ptr<InProcessBackend> in_process;
  if (args.backends & kInProcessBackend) {
    in_process = InProcessBackend::Create(args.in_process, status);
    if (!in_process)
      return nullptr;
  }
  std::unique_ptr<Tracing> system;
  if (args.backends & kSystemBackend) {
    system.reset(new Tracing(args.system));
    *status = base::OkStatus();
    if (args.register_track_event)
      *status = track_event::RegisterTrackEventDataSource(system.get());
    if (status->ok())
      *status = system->Start();
    if (!status->ok())
      return nullptr;
  }
  *status = base::OkStatus();
  return std::unique_ptr<TracingBackends>(
      new TracingBackends(args, std::move(in_process), std::move(system)));
}

TracingBackends::TracingBackends(const TracingInitArgs& args,
                                 std::unique_ptr<InProcessBackend> in_process,
                                 std::unique_ptr<Tracing> system)
    : backends_(args.backends),
      system_consumer_socket_path_(args.system_consumer_socket_path),
      system_(std::move(system)),
      in_process_(std::move(in_process)) {}

TracingBackends::~TracingBackends() = default;

std::unique_ptr<TracingSession> TracingBackends::NewSession(
    BackendType backend,
    const TracingSessionOptions& options,
    base::Status* status) {
  if (backend == kInProcessBackend && in_process_)
    return in_process_->NewSession(options, status);
  if (backend == kSystemBackend && system_) {
    TracingSessionOptions session_options = options;
    if (session_options.consumer_socket_path.empty())
      session_options.consumer_socket_path = system_consumer_socket_path_;
    return TracingSession::Connect(session_options, status);
  }
  *status =
      base::ErrStatus("backend 0x%x: not one of this object's backends (0x%x)",
                      static_cast<uint32_t>(backend), backends_);
  return nullptr;
}

std::unique_ptr<TracingSession> TracingBackends::NewSession(
    BackendType backend,
    base::Status* status) {
  return NewSession(backend, TracingSessionOptions(), status);
}

uint32_t TracingBackends::backends() const {
  return backends_;
}

Tracing* TracingBackends::tracing(BackendType backend) {
  if (backend == kSystemBackend)
    return system_.get();
  if (backend == kInProcessBackend && in_process_)
    return in_process_->tracing();
  return nullptr;
}

InProcessBackend* TracingBackends::in_process() {
  return in_process_.get();
}

}  // namespace ringtrace
