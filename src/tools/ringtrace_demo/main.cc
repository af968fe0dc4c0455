/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_demo: producers, shared ring, drainer, trace buffer and exporter
// in one process; writes a Perfetto trace file. See demo.h.

#include <stdio.h>

#include <string>

#include "src/base/flags.h"
#include "src/tools/ringtrace_demo/demo.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace demo {
namespace {

void PrintUsage(const char* argv0) {
  fprintf(stderr,
          "Usage: %s [flags]\n"
          "  --out PATH              trace file (default out/demo.pftrace)\n"
          "  --duration_ms N         how long the producers write (2000)\n"
          "  --threads N             producer threads (4)\n"
          "  --ring_kb N             shared ring size in KiB (1024)\n"
          "  --chunk_size N          ring chunk size, power of two in\n"
          "                          [256, 32768] (4096)\n"
          "  --buffer_kb N           trace buffer size in KiB (16384)\n"
          "  --fill_policy P         ring_buffer | discard (ring_buffer)\n"
          "  --writer_policy P       drop | stall | stall_then_drop\n"
          "                          (stall_then_drop)\n"
          "  --interval_us N         producer sleep between iterations (100)\n"
          "  --head_grace_ms N       drainer head grace before scraping a\n"
          "                          chunk still being written (50)\n"
          "Flags take '--flag value' or '--flag=value'; '-' works for '_'.\n",
          argv0);
}

// Returns 0 to run, 1 on a usage error, 2 for --help.
int ParseFlags(int argc, char** argv, DemoConfig* config) {
  base::FlagReader reader(argc, argv);
  base::Flag flag;
  while (reader.Next(&flag)) {
    const std::string& value = flag.value;
    bool ok = true;
    if (flag.Is("--out")) {
      config->out_path = value;
      ok = !value.empty();
    } else if (flag.Is("--duration_ms")) {
      ok = base::ParseUint32(value, &config->duration_ms);
    } else if (flag.Is("--threads")) {
      ok = base::ParseUint32(value, &config->threads);
    } else if (flag.Is("--ring_kb")) {
      ok = base::ParseUint32(value, &config->ring_kb);
    } else if (flag.Is("--chunk_size")) {
      ok = base::ParseUint32(value, &config->chunk_size);
    } else if (flag.Is("--buffer_kb")) {
      ok = base::ParseUint32(value, &config->buffer_kb);
    } else if (flag.Is("--head_grace_ms")) {
      ok = base::ParseUint32(value, &config->head_grace_ms);
    } else if (flag.Is("--interval_us")) {
      ok = base::ParseUint32(value, &config->interval_us);
    } else if (flag.Is("--fill_policy")) {
      ok = trace_buffer::ParseFillPolicy(value, &config->fill_policy);
    } else if (flag.Is("--writer_policy")) {
      ok = shm_ring::ParseBufferExhaustedPolicy(value, &config->writer_policy);
    } else {
      fprintf(stderr, "unknown flag %s\n", flag.name.c_str());
      return 1;
    }
    if (!ok) {
      fprintf(stderr, "bad value for %s: '%s'\n", flag.name.c_str(),
              value.c_str());
      return 1;
    }
  }
  if (reader.help())
    return 2;
  if (!reader.error().empty()) {
    fprintf(stderr, "%s\n", reader.error().c_str());
    return 1;
  }
  return 0;
}

int Main(int argc, char** argv) {
  DemoConfig config;
  const int parsed = ParseFlags(argc, argv, &config);
  if (parsed != 0) {
    PrintUsage(argv[0]);
    return parsed == 2 ? 0 : 1;
  }
  DemoResult result;
  const base::Status status = RunDemo(config, &result);
  if (!status.ok()) {
    fprintf(stderr, "ringtrace_demo: %s\n", status.message().c_str());
    return 1;
  }
  fputs(FormatSummary(config, result).c_str(), stdout);
  printf("Open it in https://ui.perfetto.dev (Open trace file).\n");
  return 0;
}

}  // namespace
}  // namespace demo
}  // namespace ringtrace

int main(int argc, char** argv) {
  return ringtrace::demo::Main(argc, argv);
}
