/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_demo: producers, shared ring, drainer, trace buffer and exporter
// in one process; writes a Perfetto trace file. See demo.h.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "src/tools/ringtrace_demo/demo.h"

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
          "                          chunk still being written (50)\n",
          argv0);
}

bool ParseUint(const std::string& s, uint32_t* out) {
  if (s.empty())
    return false;
  char* end = nullptr;
  const unsigned long long v = strtoull(s.c_str(), &end, 10);
  if (*end != '\0' || v > 0xffffffffull)
    return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

// Returns 0 to run, 1 on a usage error, 2 for --help.
int ParseFlags(int argc, char** argv, DemoConfig* config) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    std::string value;
    const size_t eq = flag.find('=');
    if (flag == "--help" || flag == "-h")
      return 2;
    if (eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      fprintf(stderr, "missing value for %s\n", flag.c_str());
      return 1;
    }
    bool ok = true;
    if (flag == "--out") {
      config->out_path = value;
      ok = !value.empty();
    } else if (flag == "--duration_ms") {
      ok = ParseUint(value, &config->duration_ms);
    } else if (flag == "--threads") {
      ok = ParseUint(value, &config->threads);
    } else if (flag == "--ring_kb") {
      ok = ParseUint(value, &config->ring_kb);
    } else if (flag == "--chunk_size") {
      ok = ParseUint(value, &config->chunk_size);
    } else if (flag == "--buffer_kb") {
      ok = ParseUint(value, &config->buffer_kb);
    } else if (flag == "--head_grace_ms") {
      ok = ParseUint(value, &config->head_grace_ms);
    } else if (flag == "--interval_us") {
      ok = ParseUint(value, &config->interval_us);
    } else if (flag == "--fill_policy") {
      if (value == "ring_buffer")
        config->fill_policy = FillPolicy::kRingBuffer;
      else if (value == "discard")
        config->fill_policy = FillPolicy::kDiscard;
      else
        ok = false;
    } else if (flag == "--writer_policy") {
      using shm_ring::BufferExhaustedPolicy;
      if (value == "drop")
        config->writer_policy = BufferExhaustedPolicy::kDrop;
      else if (value == "stall")
        config->writer_policy = BufferExhaustedPolicy::kStall;
      else if (value == "stall_then_drop")
        config->writer_policy = BufferExhaustedPolicy::kStallThenDrop;
      else
        ok = false;
    } else {
      fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 1;
    }
    if (!ok) {
      fprintf(stderr, "bad value for %s: '%s'\n", flag.c_str(), value.c_str());
      return 1;
    }
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
