/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_example_app: an instrumented app for a running ringtraced. See
// example_app.h.
//
// Exit status: 0 after a complete run (the summary on stdout); 1 on a usage
// error or when the service cannot be reached or refuses the producer (the
// reason on stderr); 3 when the service went away during the run (summary
// printed, with a warning).

#include <stdio.h>

#include <string>

#include "ringtrace/track_event.h"
#include "src/examples/example_app.h"

namespace ringtrace {
namespace examples {
namespace {

int Main(int argc, char** argv) {
  ExampleConfig config;
  std::string error;
  switch (ParseExampleArgs(argc, argv, &config, &error)) {
    case ParseResult::kRun:
      break;
    case ParseResult::kHelp:
      fputs(ExampleUsage().c_str(), stdout);
      return 0;
    case ParseResult::kError:
      fprintf(stderr, "ringtrace_example_app: %s\n%s", error.c_str(),
              ExampleUsage().c_str());
      return 1;
  }
  // The process name is process-wide state of the TrackEvent API: set by
  // the program, not by RunExample(), which tests call beside other tracers.
  track_event::SetProcessName(config.name);
  ExampleResult result;
  const base::Status status = RunExample(config, &result);
  if (!status.ok()) {
    fprintf(stderr, "ringtrace_example_app: %s\n", status.message().c_str());
    return 1;
  }
  fputs(FormatExampleSummary(config, result).c_str(), stdout);
  return result.connected_at_end ? 0 : 3;
}

}  // namespace
}  // namespace examples
}  // namespace ringtrace

int main(int argc, char** argv) {
  return ringtrace::examples::Main(argc, argv);
}
