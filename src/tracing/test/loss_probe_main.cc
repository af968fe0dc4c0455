/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. ringtrace_loss_probe: an app that writes a known numbered
// series of packets into a running ringtraced and then does what the test
// asks, so that the end-to-end tests can check the packet guarantee of
// include/ringtrace/producer.h against a real service and a real process:
//
//   --packets N        packets to write, numbered 0..N-1 (TracePacket.
//                      timestamp = the number; a TrackEvent name pads the
//                      packet to about --size bytes)
//   --size B           approximate encoded size of each packet (>= 16)
//   --policy P         drop | stall | stall_then_drop
//   --ring-kb K, --chunk-size C   ring hints for the service (0: default)
//   --start-on-usr1 1  after connecting, print "PROBE connected" and wait
//                      for SIGUSR1 before writing
//   --then idle        after the last packet: print the report, then sleep
//                      until a signal ends the process (no Flush, writer
//                      and Producer left alive: a frozen app)
//   --then exit        print the report and _exit(0) at once (no Flush, no
//                      destructor: as if the process died right there)
//   --then wait-usr1   print the report; when SIGUSR1 arrives, write one
//                      more packet (number N), again every 10 ms while the
//                      writer drops it (each attempt is a packet begun and
//                      dropped), at most for 30 s; print a second report;
//                      at the next SIGUSR1 destroy the writer and the
//                      Producer in order (the final loss report goes to
//                      the service), print "PROBE closed" and idle
//
// Report line on stdout, one per phase:
//   PROBE committed=<c> dropped=<d> begun=<b>
// from the writer's own TraceWriterV2Stats.

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "protos/perfetto/trace/trace_packet.pb.h"
#include "ringtrace/producer.h"

namespace ringtrace {
namespace test {
namespace {

using perfetto::protos::TracePacket;
using perfetto::protos::TrackEvent;

struct ProbeConfig {
  std::string socket;
  uint32_t packets = 5;
  uint32_t size = 32;
  std::string policy = "drop";
  uint32_t ring_kb = 0;
  uint32_t chunk_size = 0;
  std::string then = "idle";
  bool start_on_usr1 = false;
};

bool ParseArgs(int argc, char** argv, ProbeConfig* config) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--socket") {
      config->socket = value;
    } else if (flag == "--packets") {
      config->packets = static_cast<uint32_t>(strtoul(value, nullptr, 10));
    } else if (flag == "--size") {
      config->size = static_cast<uint32_t>(strtoul(value, nullptr, 10));
    } else if (flag == "--policy") {
      config->policy = value;
    } else if (flag == "--ring-kb") {
      config->ring_kb = static_cast<uint32_t>(strtoul(value, nullptr, 10));
    } else if (flag == "--chunk-size") {
      config->chunk_size = static_cast<uint32_t>(strtoul(value, nullptr, 10));
    } else if (flag == "--start-on-usr1") {
      config->start_on_usr1 = strcmp(value, "0") != 0;
    } else if (flag == "--then") {
      config->then = value;
    } else {
      fprintf(stderr, "ringtrace_loss_probe: unknown flag %s\n", flag.c_str());
      return false;
    }
  }
  return !config->socket.empty() && config->size >= 16;
}

void WritePacket(shm_ring::TraceWriterV2* writer,
                 uint64_t number,
                 const std::string& padding) {
  auto packet = writer->NewTracePacket();
  packet->AppendVarInt(TracePacket::kTimestampFieldNumber, number);
  encoding::Message* event =
      packet->BeginNestedMessage(TracePacket::kTrackEventFieldNumber);
  event->AppendString(TrackEvent::kNameFieldNumber, padding);
}

void Report(const shm_ring::TraceWriterV2& writer) {
  const shm_ring::TraceWriterV2Stats& stats = writer.stats();
  printf("PROBE committed=%llu dropped=%llu begun=%llu\n",
         static_cast<unsigned long long>(stats.packets_committed),
         static_cast<unsigned long long>(stats.packets_dropped),
         static_cast<unsigned long long>(stats.packets_begun));
  fflush(stdout);
}

[[noreturn]] void Idle() {
  for (;;)
    pause();
}

int Main(int argc, char** argv) {
  ProbeConfig config;
  if (!ParseArgs(argc, argv, &config)) {
    fprintf(stderr,
            "usage: ringtrace_loss_probe --socket PATH [--packets N] "
            "[--size B] [--policy P] [--ring-kb K] [--chunk-size C] "
            "[--start-on-usr1 1] [--then idle|exit|wait-usr1]\n");
    return 1;
  }
  // Blocked before any thread exists, so every thread inherits the mask and
  // sigwait() below is the only taker of SIGUSR1.
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
  ProducerOptions options;
  options.socket_path = config.socket;
  options.name = "loss_probe";
  options.requested_ring_bytes = config.ring_kb * 1024u;
  options.requested_chunk_size = config.chunk_size;
  options.stall_timeout_ms = 30000;
  if (!shm_ring::ParseBufferExhaustedPolicy(config.policy,
                                            &options.buffer_exhausted_policy)) {
    fprintf(stderr, "ringtrace_loss_probe: bad policy %s\n",
            config.policy.c_str());
    return 1;
  }
  base::Status status;
  std::unique_ptr<Producer> producer = Producer::Connect(options, &status);
  if (!producer) {
    fprintf(stderr, "ringtrace_loss_probe: %s\n", status.message().c_str());
    return 1;
  }
  std::unique_ptr<shm_ring::TraceWriterV2> writer =
      producer->NewTraceWriter(&status);
  if (!writer) {
    fprintf(stderr, "ringtrace_loss_probe: %s\n", status.message().c_str());
    return 1;
  }
  int sig = 0;
  if (config.start_on_usr1) {
    printf("PROBE connected\n");
    fflush(stdout);
    if (sigwait(&usr1, &sig) != 0)
      return 1;
  }
  // About 10 bytes of framing: timestamp tag + varint, group tags, string
  // tag + length.
  const std::string padding(config.size - 14, 'p');
  for (uint32_t i = 0; i < config.packets; i++)
    WritePacket(writer.get(), i, padding);
  Report(*writer);
  if (config.then == "exit")
    _exit(0);
  if (config.then == "wait-usr1" && sigwait(&usr1, &sig) == 0) {
    const uint64_t committed = writer->stats().packets_committed;
    for (int attempt = 0; attempt < 3000; attempt++) {
      WritePacket(writer.get(), config.packets, padding);
      if (writer->stats().packets_committed > committed)
        break;
      usleep(10 * 1000);
    }
    Report(*writer);
    if (sigwait(&usr1, &sig) == 0) {
      writer.reset();
      producer.reset();
      printf("PROBE closed\n");
      fflush(stdout);
    }
  }
  Idle();
}

}  // namespace
}  // namespace test
}  // namespace ringtrace

int main(int argc, char** argv) {
  return ringtrace::test::Main(argc, argv);
}
