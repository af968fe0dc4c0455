/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_minimal_app SOCKET: the smallest app of the SDK. It keeps a
// connection to ringtraced (ringtrace::Tracing), lets sessions enable its
// TrackEvent category through the "track_event" data source, and writes ten
// slices, each linked by a flow to an instant on an app track. Built from
// include/ alone by tools/check-public-api.

#include <stdio.h>
#include <unistd.h>

#include "ringtrace/tracing.h"
#include "ringtrace/track_event.h"
#include "ringtrace/track_event_data_source.h"

RT_DEFINE_CATEGORIES("minimal");

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "Usage: %s SOCKET\n", argv[0]);
    return 1;
  }
  ringtrace::TracingOptions options;
  options.producer.socket_path = argv[1];
  options.producer.name = "minimal_app";
  ringtrace::Tracing tracing(options);
  ringtrace::base::Status status =
      ringtrace::track_event::RegisterTrackEventDataSource(&tracing);
  if (status.ok())
    status = tracing.Start();
  if (!status.ok()) {
    fprintf(stderr, "minimal_app: %s\n", status.message().c_str());
    return 1;
  }
  const bool connected = tracing.WaitForConnection(0, 2000) != 0;
  using ringtrace::track_event::Flow;
  using ringtrace::track_event::TerminatingFlow;
  constexpr ringtrace::track_event::Track kDone(0x6d696e, "done");
  for (int i = 0; i < 10; i++) {
    RT_TRACE_EVENT("minimal", "Step", "i", i, Flow::ProcessScoped(i));
    usleep(1000);
    RT_TRACE_INSTANT("minimal", "Done", kDone,
                     TerminatingFlow::ProcessScoped(i));
  }
  printf("minimal_app: %s\n", connected ? "connected" : "no service");
  return connected ? 0 : 3;
}
