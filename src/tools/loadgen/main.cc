/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_loadgen: see loadgen.h.
//
//   ringtrace_loadgen --socket PATH [--threads N] [--duration-ms N] ...
//       emits TrackEvents as fast as it can; prints key=value results.
//   ringtrace_loadgen --count-trace FILE
//       counts the TrackEvents and the TraceStats losses in a trace.
//
// Exit status: 0 on success, 1 on a failure (reason on stderr), 2 on a
// usage error, 3 when the service went away during a run.

#include <stdio.h>

#include <string>

#include "src/base/flags.h"
#include "src/tools/loadgen/loadgen.h"

#define RT_TRACK_EVENT_NAMESPACE loadgen_categories
#include "ringtrace/track_event.h"

namespace ringtrace {
namespace loadgen {
namespace {

const char kUsage[] =
    "Usage: ringtrace_loadgen --socket PATH [flags]\n"
    "       ringtrace_loadgen --count-trace FILE\n"
    "  --socket PATH          the ringtraced socket\n"
    "  --threads N            writer threads (2)\n"
    "  --duration-ms N        how long the threads emit (1000)\n"
    "  --name S               producer and process name (ringtrace_loadgen)\n"
    "  --ring-kb N            requested ring size in KiB (service default)\n"
    "  --chunk-size N         requested chunk size (service default)\n"
    "  --policy P             drop | stall | stall_then_drop (drop)\n"
    "  --stall-timeout-ms N   (100)\n"
    "  --count-trace FILE     count TrackEvents and TraceStats losses in\n"
    "                         FILE (a ringtraced trace) and exit\n"
    "Results are printed as key=value pairs on one line.\n";

int Main(int argc, char** argv) {
  LoadConfig config;
  std::string count_path;
  base::FlagReader reader(argc, argv);
  base::Flag flag;
  while (reader.Next(&flag)) {
    const std::string& v = flag.value;
    bool ok = true;
    if (flag.Is("--socket")) {
      config.socket_path = v;
      ok = !v.empty();
    } else if (flag.Is("--threads")) {
      ok = base::ParseUint32(v, &config.threads) && config.threads >= 1;
    } else if (flag.Is("--duration-ms")) {
      ok = base::ParseUint32(v, &config.duration_ms) &&
           config.duration_ms >= 1 && config.duration_ms <= 3600 * 1000;
    } else if (flag.Is("--name")) {
      config.name = v;
    } else if (flag.Is("--ring-kb")) {
      ok = base::ParseUint32(v, &config.ring_kb) &&
           config.ring_kb <= 0xffffffffu / 1024;
    } else if (flag.Is("--chunk-size")) {
      ok = base::ParseUint32(v, &config.chunk_size);
    } else if (flag.Is("--policy")) {
      ok = shm_ring::ParseBufferExhaustedPolicy(v, &config.policy);
    } else if (flag.Is("--stall-timeout-ms")) {
      ok = base::ParseUint32(v, &config.stall_timeout_ms);
    } else if (flag.Is("--count-trace")) {
      count_path = v;
      ok = !v.empty();
    } else {
      fprintf(stderr, "ringtrace_loadgen: unknown flag %s\n%s",
              flag.name.c_str(), kUsage);
      return 2;
    }
    if (!ok) {
      fprintf(stderr, "ringtrace_loadgen: bad value for %s: '%s'\n%s",
              flag.name.c_str(), v.c_str(), kUsage);
      return 2;
    }
  }
  if (reader.help()) {
    fputs(kUsage, stdout);
    return 0;
  }
  if (!reader.error().empty()) {
    fprintf(stderr, "ringtrace_loadgen: %s\n%s", reader.error().c_str(),
            kUsage);
    return 2;
  }
  if (!count_path.empty()) {
    TraceCount count;
    const base::Status status = CountTraceFile(count_path, &count);
    if (!status.ok()) {
      fprintf(stderr, "ringtrace_loadgen: %s\n", status.message().c_str());
      return 1;
    }
    fputs(FormatTraceCount(count).c_str(), stdout);
    return 0;
  }
  if (config.socket_path.empty()) {
    fprintf(stderr, "ringtrace_loadgen: --socket or --count-trace needed\n%s",
            kUsage);
    return 2;
  }
  LoadResult result;
  // The process name is process-wide state of the TrackEvent API: set by
  // the program, not by RunLoad(), which tests call beside other tracers.
  track_event::SetProcessName(config.name);
  const base::Status status = RunLoad(config, &result);
  if (!status.ok()) {
    fprintf(stderr, "ringtrace_loadgen: %s\n", status.message().c_str());
    return 1;
  }
  fputs(FormatLoadResult(result).c_str(), stdout);
  return result.connected_at_end ? 0 : 3;
}

}  // namespace
}  // namespace loadgen
}  // namespace ringtrace

int main(int argc, char** argv) {
  return ringtrace::loadgen::Main(argc, argv);
}
