/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/examples/example_app.h"

#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "ringtrace/track_event.h"
#include "src/examples/example_categories.h"

namespace ringtrace {
namespace examples {

namespace {

using shm_ring::TraceWriterV2;

// The example uses the SDK's headers only (tools/check-public-api builds it
// from include/ alone), so it reads its flags itself: "--flag value" or
// "--flag=value", '_' read as '-'. Returns false at the end of argv, on
// -h/--help (*help) and on a flag without a value (*error).
bool NextFlag(int argc,
              const char* const* argv,
              int* next,
              std::string* name,
              std::string* value,
              bool* help,
              std::string* error) {
  if (*next >= argc)
    return false;
  const std::string arg = argv[(*next)++];
  if (arg == "-h" || arg == "--help") {
    *help = true;
    return false;
  }
  const size_t eq = arg.find('=');
  if (eq != std::string::npos) {
    *name = arg.substr(0, eq);
    *value = arg.substr(eq + 1);
  } else if (*next < argc) {
    *name = arg;
    *value = argv[(*next)++];
  } else {
    *error = "missing value for " + arg;
    return false;
  }
  return true;
}

// |name| spelled with '-' or '_' alike.
bool FlagIs(const std::string& name, const char* spelling) {
  std::string normalized = name;
  for (char& c : normalized) {
    if (c == '_')
      c = '-';
  }
  return normalized == spelling;
}

// Decimal digits only, at most 2^32 - 1.
bool ParseUint32(const std::string& s, uint32_t* out) {
  if (s.empty())
    return false;
  uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
    if (v > 0xffffffffu)  // also bounds v * 10 in the next step
      return false;
  }
  *out = static_cast<uint32_t>(v);
  return true;
}

constexpr uint32_t kEventsPerCycle = 5;

// What one thread did, read by the main thread after join().
struct ThreadResult {
  bool ok = false;
  std::string error;
  uint64_t events = 0;
  shm_ring::TraceWriterV2Stats stats;
};

// The body of worker |index|: names the thread, binds its own writer and
// writes the cycles of example_app.h through the TrackEvent macros.
void RunWorker(Producer* producer,
               uint32_t events,
               uint32_t index,
               ThreadResult* result) {
  const std::string thread_name = "worker-" + std::to_string(index);
  prctl(PR_SET_NAME, thread_name.c_str(), 0, 0, 0);
  base::Status status;
  std::unique_ptr<TraceWriterV2> writer = producer->NewTraceWriter(&status);
  if (!writer) {
    result->error = status.message();
    return;
  }
  const std::string counter_name = thread_name + " queue depth";
  uint32_t written = 0;
  {
    track_event::ScopedThreadWriter bind(writer.get());
    auto counter = [&] {
      const int64_t depth = static_cast<int64_t>((written * 37 + index) % 100);
      RT_TRACE_COUNTER("example", counter_name.c_str(), depth);
      ++written;
    };
    for (uint32_t cycle = 0; events - written >= kEventsPerCycle; ++cycle) {
      RT_TRACE_EVENT_BEGIN("example", "frame", "cycle", cycle);
      RT_TRACE_EVENT_BEGIN("example", cycle % 2 ? "step_b" : "step_a");
      written += 2;
      counter();
      RT_TRACE_EVENT_END("example");
      RT_TRACE_EVENT_END("example");
      written += 2;
    }
    // The short last cycle, balanced.
    const uint32_t rest = events - written;
    if (rest == 1) {
      counter();
    } else if (rest >= 2) {
      RT_TRACE_EVENT_BEGIN("example", "tail");
      ++written;
      for (uint32_t i = 0; i + 2 < rest; ++i)
        counter();
      RT_TRACE_EVENT_END("example");
      ++written;
    }
  }  // ~ScopedThreadWriter flushes
  result->events = written;
  result->stats = writer->stats();
  result->ok = true;
}

}  // namespace

std::string ExampleUsage() {
  return "Usage: ringtrace_example_app --socket PATH [flags]\n"
         "  --socket PATH          the ringtraced socket (required)\n"
         "  --threads N            writer threads (4)\n"
         "  --events N             TrackEvents per thread (1000)\n"
         "  --name S               producer and process name\n"
         "                         (ringtrace_example_app)\n"
         "  --ring-kb N            requested ring size in KiB (service "
         "default)\n"
         "  --chunk-size N         requested chunk size (service default)\n"
         "  --policy P             drop | stall | stall_then_drop\n"
         "                         (stall_then_drop)\n"
         "  --stall-timeout-ms N   (100)\n"
         "  --timeout-ms N         bound on connecting (2000)\n"
         "  --mode M               classic: write --events through an own\n"
         "                         writer per thread, then exit; sessions:\n"
         "                         trace what the daemon's sessions enable\n"
         "                         (ringtrace::Tracing + the track_event data\n"
         "                         source; categories example and io) until\n"
         "                         --duration-ms or SIGINT/SIGTERM (classic)\n"
         "  --duration-ms N        sessions mode: run N ms (0: until a "
         "signal) (0)\n"
         "  --cycle-interval-us N  sessions mode: pause between cycles "
         "(1000)\n"
         "Flags take '--flag value' or '--flag=value'; '_' works for '-'.\n";
}

ParseResult ParseExampleArgs(int argc,
                             const char* const* argv,
                             ExampleConfig* config,
                             std::string* error) {
  int next = 1;  // argv[0] is the program
  std::string name;
  std::string value;
  bool help = false;
  std::string flag_error;
  while (NextFlag(argc, argv, &next, &name, &value, &help, &flag_error)) {
    bool ok = true;
    if (FlagIs(name, "--socket")) {
      config->socket_path = value;
      ok = !value.empty();
    } else if (FlagIs(name, "--threads")) {
      ok = ParseUint32(value, &config->threads) && config->threads >= 1 &&
           config->threads <= kMaxExampleThreads;
    } else if (FlagIs(name, "--events")) {
      ok = ParseUint32(value, &config->events_per_thread);
    } else if (FlagIs(name, "--name")) {
      config->name = value;
    } else if (FlagIs(name, "--ring-kb")) {
      ok = ParseUint32(value, &config->ring_kb) &&
           config->ring_kb <= 0xffffffffu / 1024;
    } else if (FlagIs(name, "--chunk-size")) {
      ok = ParseUint32(value, &config->chunk_size);
    } else if (FlagIs(name, "--policy")) {
      ok = shm_ring::ParseBufferExhaustedPolicy(value, &config->policy);
    } else if (FlagIs(name, "--stall-timeout-ms")) {
      ok = ParseUint32(value, &config->stall_timeout_ms);
    } else if (FlagIs(name, "--timeout-ms")) {
      ok = ParseUint32(value, &config->connect_timeout_ms);
    } else if (FlagIs(name, "--mode")) {
      ok = value == "classic" || value == "sessions";
      config->sessions = value == "sessions";
    } else if (FlagIs(name, "--duration-ms")) {
      ok = ParseUint32(value, &config->duration_ms);
    } else if (FlagIs(name, "--cycle-interval-us")) {
      ok = ParseUint32(value, &config->cycle_interval_us);
    } else {
      *error = "unknown flag " + name;
      return ParseResult::kError;
    }
    if (!ok) {
      *error = "bad value for ";
      error->append(name).append(": '").append(value).append("'");
      return ParseResult::kError;
    }
  }
  if (help)
    return ParseResult::kHelp;
  if (!flag_error.empty()) {
    *error = flag_error;
    return ParseResult::kError;
  }
  if (config->socket_path.empty()) {
    *error = "--socket PATH is required";
    return ParseResult::kError;
  }
  return ParseResult::kRun;
}

base::Status RunExample(const ExampleConfig& config, ExampleResult* result) {
  *result = ExampleResult();
  if (config.threads == 0 || config.threads > kMaxExampleThreads)
    return base::ErrStatus("--threads must be in [1, %u]", kMaxExampleThreads);
  ProducerOptions options;
  options.socket_path = config.socket_path;
  options.name = config.name;
  options.requested_ring_bytes = config.ring_kb * 1024;
  options.requested_chunk_size = config.chunk_size;
  options.connect_timeout_ms = config.connect_timeout_ms;
  options.disconnect_timeout_ms = config.disconnect_timeout_ms;
  options.buffer_exhausted_policy = config.policy;
  options.stall_timeout_ms = config.stall_timeout_ms;
  base::Status status;
  std::unique_ptr<Producer> producer = Producer::Connect(options, &status);
  if (!producer)
    return status;
  result->producer_id = producer->producer_id();
  result->geometry = producer->geometry();

  track_event::SetCategoriesEnabled("example");
  // The main thread traces too: one slice over the run, on its own
  // sequence (its thread track is named, like every thread's).
  std::unique_ptr<TraceWriterV2> main_writer =
      producer->NewTraceWriter(&status);
  if (!main_writer)
    return status;
  std::vector<ThreadResult> threads(config.threads);
  {
    track_event::ScopedThreadWriter bind(main_writer.get());
    RT_TRACE_EVENT("example", "run", "threads", config.threads);
    std::vector<std::thread> workers;
    workers.reserve(config.threads);
    for (uint32_t i = 0; i < config.threads; ++i) {
      workers.emplace_back(RunWorker, producer.get(), config.events_per_thread,
                           i, &threads[i]);
    }
    for (std::thread& t : workers)
      t.join();
  }
  result->main_thread_events = 2;  // "run": begin and end ("example" is on)
  // Every worker writer is gone (each worker destroyed its own).
  std::vector<shm_ring::TraceWriterV2Stats> all_stats;
  for (const ThreadResult& t : threads) {
    if (!t.ok)
      return base::ErrStatus("a worker had no writer: %s", t.error.c_str());
    result->events_written += t.events;
    all_stats.push_back(t.stats);
  }
  all_stats.push_back(main_writer->stats());
  main_writer.reset();
  for (const shm_ring::TraceWriterV2Stats& s : all_stats) {
    result->packets_written += s.packets_begun;
    result->packets_committed += s.packets_committed;
    result->packets_dropped += s.packets_dropped;
    result->bytes_written += s.bytes_written;
    result->bytes_dropped += s.bytes_dropped;
  }
  result->producer = producer->stats();
  result->connected_at_end = producer->connected();
  return base::OkStatus();  // ~Producer: the service drains one last time
}

std::string FormatExampleSummary(const ExampleConfig& config,
                                 const ExampleResult& r) {
  char buf[1024];
  snprintf(buf, sizeof(buf),
           "ringtrace_example_app: producer %u on %s, ring %u x %u B, "
           "policy %s\n"
           "  threads %u, TrackEvents %llu (workers %llu, main thread "
           "%llu), packets written %llu (committed %llu, dropped %llu)\n"
           "  bytes written %llu, dropped %llu\n"
           "  drain requests sent %llu, coalesced %llu, dropped (socket "
           "full) %llu\n",
           r.producer_id, config.socket_path.c_str(), r.geometry.num_chunks,
           r.geometry.chunk_size,
           shm_ring::BufferExhaustedPolicyName(config.policy), config.threads,
           static_cast<unsigned long long>(r.events_written) +
               static_cast<unsigned long long>(r.main_thread_events),
           static_cast<unsigned long long>(r.events_written),
           static_cast<unsigned long long>(r.main_thread_events),
           static_cast<unsigned long long>(r.packets_written),
           static_cast<unsigned long long>(r.packets_committed),
           static_cast<unsigned long long>(r.packets_dropped),
           static_cast<unsigned long long>(r.bytes_written),
           static_cast<unsigned long long>(r.bytes_dropped),
           static_cast<unsigned long long>(r.producer.drain_requests_sent),
           static_cast<unsigned long long>(r.producer.drain_requests_coalesced),
           static_cast<unsigned long long>(r.producer.drain_requests_dropped));
  std::string s = buf;
  if (!r.connected_at_end) {
    snprintf(buf, sizeof(buf),
             "  WARNING: the service went away during the run (%llu "
             "notifications after that); the committed packets may never "
             "have been drained\n",
             static_cast<unsigned long long>(
                 r.producer.notifications_after_disconnect));
    s += buf;
  }
  return s;
}

}  // namespace examples
}  // namespace ringtrace
