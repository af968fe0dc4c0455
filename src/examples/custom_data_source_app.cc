/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ringtrace_custom_data_source_app: an app with a data source of its own
// (ringtrace/data_source.h, docs/data_sources.md). It "renders frames" on
// --threads threads and records each frame, as the app's own FrameStats
// message (src/examples/protos/custom_data_source.proto), into every
// tracing session that asks for "com.example.frame_stats":
//
//   ringtraced &                                     # the system service
//   ringtrace_custom_data_source_app --seconds 30 &
//   ringtrace -c /tmp/config.pb -o /tmp/frames.pftrace
//
// with /tmp/config.pb encoded by protoc from
// src/examples/custom_data_source_config.pbtx (the command is in that
// file and in docs/data_sources.md, "Recording the example").
//
// What it shows: the session's own config (FrameStatsConfig, a
// DataSourceConfig extension the service passes through) read in OnSetup
// without libprotobuf; per-thread packets with interned scene names in the
// incremental state; an asynchronous stop (each thread writes a last
// packet with its frame count, then the stop completes); the service's
// flush reaching OnFlush. Built from include/ and its own generated header
// alone (tools/check-install builds it with the installed SDK and the
// installed protoc plugin).

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ringtrace/data_source.h"
#include "ringtrace/intern_table.h"
#include "ringtrace/proto_field_reader.h"
#include "ringtrace/tracing.h"
#include "src/examples/protos/custom_data_source.rtzero.h"

namespace {

namespace ex = ringtrace_example::rtzero;

constexpr char kDataSourceName[] = "com.example.frame_stats";
constexpr const char* kScenes[] = {"menu", "level-1", "level-2", "credits"};

std::atomic<bool> g_quit{false};

void OnSignal(int) {
  g_quit.store(true, std::memory_order_relaxed);  // read by the main loop
}

uint64_t BootTimeNs() {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

struct FrameStatsIncrementalState {
  ringtrace::InternTable<std::string> scenes;
};
struct FrameStatsTraits : ringtrace::DefaultDataSourceTraits {
  using IncrementalStateType = FrameStatsIncrementalState;
};

// Each instance stops asynchronously: OnStop keeps the closure, and each
// render thread writes a last packet for the instance (its frame count);
// the last thread to do so completes the stop.
class FrameStatsDataSource
    : public ringtrace::DataSource<FrameStatsDataSource, FrameStatsTraits> {
 public:
  void OnSetup(const SetupArgs& args) override {
    ringtrace::encoding::FieldReader reader(args.own_config);
    ringtrace::encoding::Field field;
    while (reader.Next(&field)) {
      switch (field.id) {
        case ex::FrameStatsConfig::kMinDurationUsFieldNumber:
          min_duration_us = field.as_uint32();
          break;
        case ex::FrameStatsConfig::kSessionLabelFieldNumber:
          session_label = std::string(field.as_string());
          break;
        default:
          break;  // a field of a newer config
      }
    }
    printf(
        "custom_data_source_app: instance %u: min_duration_us=%u "
        "label='%s'\n",
        args.instance_index, min_duration_us, session_label.c_str());
    fflush(stdout);
  }
  void OnStop(const StopArgs& args) override {
    stop_completion = args.HandleStopAsynchronously();
    stopping = true;
  }
  void OnFlush(const FlushArgs& args) override {
    printf("custom_data_source_app: flush %u\n", args.flush_id);
    fflush(stdout);
  }

  // Guarded by the instance's lock (the callbacks hold it; the render
  // threads take it with GetDataSourceLocked()).
  uint32_t min_duration_us = 0;
  std::string session_label;
  bool stopping = false;
  std::function<void()> stop_completion;
  std::set<uint32_t> finished_threads;
};

// One frame of render thread |thread|: its FrameStats into every instance
// that wants it (all frames at least min_duration_us long), and, once the
// instance stops, the thread's last packet for it.
void RecordFrame(uint32_t thread,
                 uint32_t threads,
                 uint64_t frame,
                 uint32_t duration_us,
                 const char* scene) {
  FrameStatsDataSource::Trace([&](FrameStatsDataSource::TraceContext ctx) {
    uint32_t min_duration_us = 0;
    std::string label;
    bool last = false;
    {
      auto ds = ctx.GetDataSourceLocked();
      min_duration_us = ds->min_duration_us;
      label = ds->session_label;
      if (ds->stopping) {
        if (!ds->finished_threads.insert(thread).second)
          return;  // this thread wrote its last packet already
        last = true;
      }
    }
    if (!last && duration_us < min_duration_us)
      return;
    auto packet = ctx.NewTracePacket<ex::FrameStatsPacket>();
    packet->set_timestamp(BootTimeNs());
    bool is_new = false;
    const uint64_t iid =
        ctx.GetIncrementalState()->scenes.Intern(scene, &is_new);
    if (is_new) {
      ex::FrameStatsInternedData interned(
          packet->set_interned_data().message());
      ex::SceneName name = interned.add_scene_names();
      name.set_iid(iid);
      name.set_name(scene);
    }
    ex::FrameStats stats = packet->set_frame_stats();
    stats.set_frame_number(frame);
    stats.set_duration_us(duration_us);
    stats.set_scene_iid(iid);
    stats.set_session_label(label);
    if (!last)
      return;
    stats.set_frames_total(frame + 1);
    packet.Finish();
    std::function<void()> complete;
    {
      auto ds = ctx.GetDataSourceLocked();
      if (ds->finished_threads.size() == threads)
        complete = std::move(ds->stop_completion);
    }
    if (complete)
      complete();  // the stop completes when this Trace() returns
  });
}

void RenderThread(uint32_t thread, uint32_t threads) {
  uint64_t frame = 0;
  while (!g_quit.load(std::memory_order_relaxed)) {
    // A "frame": 1..8 ms, in one of the scenes.
    const uint32_t duration_us =
        1000u +
        static_cast<uint32_t>((frame * 7919u + thread * 104729u) % 7000u);
    usleep(duration_us);
    const char* scene = kScenes[(frame / 50 + thread) % 4];
    RecordFrame(thread, threads, frame, duration_us, scene);
    frame++;
  }
}

void Usage(const char* argv0) {
  printf(
      "Usage: %s [--socket PATH] [--threads N] [--seconds N]\n"
      "Serves the data source \"%s\" (its own config and packets,\n"
      "src/examples/protos/custom_data_source.proto) to every session of\n"
      "the ringtrace service at PATH (default: the SDK's default socket)\n"
      "from N render threads (default 2), for N seconds (default: until\n"
      "SIGINT or SIGTERM).\n",
      argv0, kDataSourceName);
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket_path;
  uint32_t threads = 2;
  long seconds = 0;
  for (int i = 1; i < argc; i++) {
    const bool has_value = i + 1 < argc;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      Usage(argv[0]);
      return 0;
    }
    if (!strcmp(argv[i], "--socket") && has_value) {
      socket_path = argv[++i];
    } else if (!strcmp(argv[i], "--threads") && has_value) {
      threads = static_cast<uint32_t>(strtoul(argv[++i], nullptr, 10));
    } else if (!strcmp(argv[i], "--seconds") && has_value) {
      seconds = strtol(argv[++i], nullptr, 10);
    } else {
      fprintf(stderr, "custom_data_source_app: bad argument '%s' (--help)\n",
              argv[i]);
      return 2;
    }
  }
  if (threads == 0 || threads > 64 || seconds < 0) {
    fprintf(stderr,
            "custom_data_source_app: --threads 1..64, --seconds >= 0\n");
    return 2;
  }
  signal(SIGINT, OnSignal);
  signal(SIGTERM, OnSignal);

  ringtrace::TracingOptions options;
  options.producer.socket_path = socket_path;
  options.producer.name = "custom_data_source_app";
  ringtrace::Tracing tracing(options);
  ringtrace::DataSourceDescriptor descriptor;
  descriptor.name = kDataSourceName;
  descriptor.config_field =
      ex::FrameStatsDataSourceConfig::kFrameStatsConfigFieldNumber;
  ringtrace::base::Status status =
      FrameStatsDataSource::Register(&tracing, descriptor);
  if (status.ok())
    status = tracing.Start();
  if (!status.ok()) {
    fprintf(stderr, "custom_data_source_app: %s\n", status.message().c_str());
    return 1;
  }
  if (tracing.WaitForConnection(0, 2000) == 0) {
    fprintf(stderr,
            "custom_data_source_app: cannot connect to the ringtrace "
            "service\n");
    return 1;
  }
  printf("custom_data_source_app: connected; serving \"%s\"\n",
         kDataSourceName);
  fflush(stdout);
  std::vector<std::thread> workers;
  for (uint32_t t = 0; t < threads; t++)
    workers.emplace_back(RenderThread, t, threads);
  const uint64_t end_ns =
      seconds > 0 ? BootTimeNs() + static_cast<uint64_t>(seconds) * 1000000000u
                  : UINT64_MAX;
  while (!g_quit.load(std::memory_order_relaxed) && BootTimeNs() < end_ns)
    usleep(10000);
  g_quit.store(true, std::memory_order_relaxed);
  for (std::thread& worker : workers)
    worker.join();
  const ringtrace::DataSourceStats stats = FrameStatsDataSource::stats();
  printf("custom_data_source_app: %llu instances started, %llu stopped\n",
         static_cast<unsigned long long>(stats.instances_started),
         static_cast<unsigned long long>(stats.instances_stopped));
  return 0;
}
