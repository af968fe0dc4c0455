/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_loadgen: see loadgen.h.
//
//   ringtrace_loadgen --socket PATH [--threads N] [--duration-ms N] ...
//       emits TrackEvents as fast as it can; prints key=value results.
//   ringtrace_loadgen --count-trace FILE
//       counts the TrackEvents and the TraceStats losses in a trace.
//   ringtrace_loadgen --mode cost|tput --socket PATH [--threads N] ...
//       the workload of tools/compare-perfetto (workload.h) in whatever
//       session of ringtraced enables category "cat"; prints STARTED,
//       RESULT lines and DONE, as Perfetto's perfetto_loadgen does.
//
// Exit status: 0 on success, 1 on a failure (reason on stderr), 2 on a
// usage error, 3 when the service went away during a run.

#include <stdio.h>

#include <string>

#include "src/base/flags.h"
#include "src/tools/loadgen/loadgen.h"
#include "src/tools/loadgen/workload.h"

#define RT_TRACK_EVENT_NAMESPACE loadgen_categories
#include "ringtrace/track_event.h"

namespace ringtrace {
namespace loadgen {
namespace {

const char kUsage[] =
    "Usage: ringtrace_loadgen --socket PATH [flags]\n"
    "       ringtrace_loadgen --count-trace FILE\n"
    "       ringtrace_loadgen --mode cost|tput --socket PATH [flags]\n"
    "  --socket PATH          the ringtraced socket (with --mode: its\n"
    "                         producer socket)\n"
    "  --threads N            writer threads (2; with --mode: 1)\n"
    "  --duration-ms N        how long the threads emit (1000)\n"
    "  --name S               producer and process name (ringtrace_loadgen)\n"
    "  --ring-kb N            requested ring size in KiB (service default)\n"
    "  --chunk-size N         requested chunk size (service default)\n"
    "  --policy P             drop | stall | stall_then_drop (drop)\n"
    "  --stall-timeout-ms N   (100)\n"
    "  --count-trace FILE     count TrackEvents and TraceStats losses in\n"
    "                         FILE (a ringtraced trace) and exit\n"
    "Results are printed as key=value pairs on one line.\n"
    "\n"
    "The side-by-side workload (the loop of Perfetto's perfetto_loadgen;\n"
    "docs/performance.md, \"Against Perfetto\"), in the sessions that\n"
    "enable category \"cat\":\n"
    "  --mode cost            per thread, four phases of --total events each:\n"
    "                         slice (a scoped slice, one int arg), instant,\n"
    "                         counter, disabled (a slice in a category the\n"
    "                         session does not enable)\n"
    "  --mode tput            slices as fast as possible for --duration-ms\n"
    "  --total N              cost: events per phase and thread (200000)\n"
    "  --burst N              events per block (2000)\n"
    "  --pause-us N           sleep between blocks (0)\n"
    "  --shm-kb N             requested ring size in KiB (service default)\n"
    "  --start-timeout-ms N   wait this long for the session (30000)\n"
    "Prints STARTED, one 'RESULT phase=P events=E wall_ns_per_ev=W\n"
    "cpu_ns_per_ev=C' line per phase (tput adds events_per_s=R), DONE; then\n"
    "waits for the session to end.\n";

// --mode: the side-by-side workload in the daemon's sessions.
int RunWorkloadMain(const LoadConfig& config,
                    bool threads_given,
                    bool duration_given,
                    SessionWorkloadConfig* workload) {
  workload->socket_path = config.socket_path;
  workload->name = config.name;
  if (threads_given)
    workload->workload.threads = config.threads;
  if (duration_given)
    workload->workload.duration_ms = config.duration_ms;
  track_event::SetProcessName(config.name);
  const base::Status status = RunSessionWorkload(*workload, stdout, stderr);
  if (!status.ok()) {
    fprintf(stderr, "ringtrace_loadgen: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}

int Main(int argc, char** argv) {
  LoadConfig config;
  SessionWorkloadConfig workload;
  bool workload_mode = false;
  bool threads_given = false;
  bool duration_given = false;
  bool legacy_only = false;  // a flag only the counter load knows
  bool workload_only = false;
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
      threads_given = true;
    } else if (flag.Is("--duration-ms")) {
      ok = base::ParseUint32(v, &config.duration_ms) &&
           config.duration_ms >= 1 && config.duration_ms <= 3600 * 1000;
      duration_given = true;
    } else if (flag.Is("--name")) {
      config.name = v;
    } else if (flag.Is("--mode")) {
      ok = ParseWorkloadMode(v, &workload.workload.mode);
      workload_mode = true;
    } else if (flag.Is("--total")) {
      uint32_t total = 0;
      ok = base::ParseUint32(v, &total) && total >= 1;
      workload.workload.total = total;
      workload_only = true;
    } else if (flag.Is("--burst")) {
      ok = base::ParseUint32(v, &workload.workload.burst) &&
           workload.workload.burst >= 1;
      workload_only = true;
    } else if (flag.Is("--pause-us")) {
      ok = base::ParseUint32(v, &workload.workload.pause_us) &&
           workload.workload.pause_us <= 1000 * 1000;
      workload_only = true;
    } else if (flag.Is("--shm-kb")) {
      ok = base::ParseUint32(v, &workload.ring_kb) &&
           workload.ring_kb <= 0xffffffffu / 1024;
      workload_only = true;
    } else if (flag.Is("--start-timeout-ms")) {
      ok = base::ParseUint32(v, &workload.start_timeout_ms);
      workload_only = true;
    } else if (flag.Is("--ring-kb")) {
      legacy_only = true;
      ok = base::ParseUint32(v, &config.ring_kb) &&
           config.ring_kb <= 0xffffffffu / 1024;
    } else if (flag.Is("--chunk-size")) {
      ok = base::ParseUint32(v, &config.chunk_size);
      legacy_only = true;
    } else if (flag.Is("--policy")) {
      ok = shm_ring::ParseBufferExhaustedPolicy(v, &config.policy);
      legacy_only = true;
    } else if (flag.Is("--stall-timeout-ms")) {
      ok = base::ParseUint32(v, &config.stall_timeout_ms);
      legacy_only = true;
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
  if (workload_mode ? legacy_only : workload_only) {
    fprintf(stderr, "ringtrace_loadgen: %s\n%s",
            workload_mode ? "--ring-kb, --chunk-size, --policy and "
                            "--stall-timeout-ms are not for --mode"
                          : "--total, --burst, --pause-us, --shm-kb and "
                            "--start-timeout-ms need --mode",
            kUsage);
    return 2;
  }
  if (workload_mode)
    return RunWorkloadMain(config, threads_given, duration_given, &workload);
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
