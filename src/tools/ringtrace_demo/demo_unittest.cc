/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Runs the demo's whole data flow with small parameters and checks the
// trace file with libprotobuf.

#include "src/tools/ringtrace_demo/demo.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"

namespace ringtrace {
namespace demo {
namespace {

using perfetto::protos::Trace;
using perfetto::protos::TracePacket;
using perfetto::protos::TrackEvent;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/ringtrace_demo_test.XXXXXX";
    const char* dir = mkdtemp(tmpl);
    path_ = dir ? dir : "";
  }
  ~TempDir() {
    for (const std::string& f : files_)
      unlink(f.c_str());
    rmdir(path_.c_str());
  }
  std::string File(const std::string& name) {
    files_.push_back(path_ + "/" + name);
    return files_.back();
  }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

bool ReadTrace(const std::string& path, Trace* trace) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return trace->ParseFromString(ss.str());
}

int64_t EventSeq(const TrackEvent& ev) {
  for (const auto& a : ev.debug_annotations()) {
    if (a.name() == kEventSeqAnnotation)
      return a.int_value();
  }
  return -1;
}

// What one sequence of the file holds.
struct SequenceView {
  std::vector<const TracePacket*> packets;
  std::string thread_name;
  int64_t tid = -1;
  int32_t pid = -1;
};

std::map<uint32_t, SequenceView> SplitBySequence(const Trace& trace) {
  std::map<uint32_t, SequenceView> out;
  for (const TracePacket& p : trace.packet()) {
    // Sequence 1 is the service's own packets.
    if (!p.has_trusted_packet_sequence_id() ||
        p.trusted_packet_sequence_id() == 1) {
      continue;
    }
    SequenceView& s = out[p.trusted_packet_sequence_id()];
    s.packets.push_back(&p);
    if (p.has_track_descriptor() && p.track_descriptor().has_thread()) {
      s.thread_name = p.track_descriptor().thread().thread_name();
      s.tid = p.track_descriptor().thread().tid();
      s.pid = p.track_descriptor().thread().pid();
    }
  }
  return out;
}

DemoConfig SmallConfig(const std::string& out) {
  DemoConfig c;
  c.out_path = out;
  c.threads = 3;
  c.iterations_per_thread = 150;
  c.ring_kb = 1024;  // never under pressure: no scrape storms
  c.chunk_size = 1024;
  c.buffer_kb = 4096;
  c.work_per_step = 10;
  c.interval_us = 0;
  // Writers wait for room instead of dropping: no loss in the ring.
  c.writer_policy = shm_ring::BufferExhaustedPolicy::kStall;
  c.stall_timeout_ms = 20000;
  return c;
}

TEST(RingtraceDemoTest, NoLossRunHasEverySliceOfEveryThreadInOrder) {
  TempDir dir;
  const DemoConfig config = SmallConfig(dir.File("demo.pftrace"));
  DemoResult result;
  ASSERT_TRUE(RunDemo(config, &result).ok());
  ASSERT_EQ(result.threads.size(), 3u);
  EXPECT_EQ(result.packets_lost, 0u);
  EXPECT_EQ(result.packets_delivered, result.packets_written);
  EXPECT_EQ(result.packets_delivered + result.packets_lost,
            result.packets_written);
  EXPECT_EQ(result.export_stats.packets_with_loss, 0u);
  EXPECT_EQ(result.drainer_protocol_errors, 0u);

  Trace trace;
  ASSERT_TRUE(ReadTrace(config.out_path, &trace));
  ASSERT_GT(trace.packet_size(), 0);
  EXPECT_TRUE(trace.packet(0).has_trace_config());
  EXPECT_EQ(trace.packet(0).trace_config().buffers(0).size_kb(), 4096u);
  EXPECT_TRUE(trace.packet(1).has_clock_snapshot());
  const TracePacket& stats = trace.packet(trace.packet_size() - 2);
  ASSERT_TRUE(stats.has_trace_stats());
  ASSERT_EQ(stats.trace_stats().buffer_stats_size(), 1);
  EXPECT_EQ(stats.trace_stats().buffer_stats(0).chunks_written(),
            result.buffer_stats.chunks_written);
  EXPECT_TRUE(trace.packet(trace.packet_size() - 1).has_clock_snapshot());

  // Every track an event uses is described in the file.
  std::set<uint64_t> described;
  for (const TracePacket& p : trace.packet()) {
    if (p.has_track_descriptor())
      described.insert(p.track_descriptor().uuid());
  }

  const std::map<uint32_t, SequenceView> seqs = SplitBySequence(trace);
  ASSERT_EQ(seqs.size(), 3u);
  uint64_t file_packets = 0;
  std::set<std::string> names;
  for (const auto& [id, seq] : seqs) {
    file_packets += seq.packets.size();
    ASSERT_EQ(seq.thread_name.substr(0, 7), "worker-") << id;
    names.insert(seq.thread_name);
    const uint32_t t = static_cast<uint32_t>(atoi(seq.thread_name.c_str() + 7));
    ASSERT_LT(t, 3u);
    const DemoThreadResult& tr = result.threads[t];
    EXPECT_EQ(seq.tid, tr.tid);
    EXPECT_EQ(seq.pid, static_cast<int32_t>(result.pid));
    EXPECT_EQ(seq.packets.size(), tr.packets_started);
    EXPECT_TRUE(seq.packets.front()->first_packet_on_sequence());

    uint64_t last_ts = 0;
    int64_t next_seq = 0;
    int depth = 0;
    uint64_t frames = 0;
    std::vector<std::string> steps;
    for (const TracePacket* p : seq.packets) {
      EXPECT_EQ(p->trusted_uid(), static_cast<int32_t>(getuid()));
      EXPECT_EQ(p->trusted_pid(), static_cast<int32_t>(result.pid));
      EXPECT_FALSE(p->has_previous_packet_dropped());
      EXPECT_GE(p->timestamp(), last_ts);  // timestamp order per sequence
      last_ts = p->timestamp();
      if (!p->has_track_event())
        continue;
      const TrackEvent& ev = p->track_event();
      EXPECT_EQ(EventSeq(ev), next_seq++);
      EXPECT_TRUE(described.count(ev.track_uuid())) << ev.track_uuid();
      switch (ev.type()) {
        case TrackEvent::TYPE_SLICE_BEGIN:
          EXPECT_EQ(ev.track_uuid(), ThreadTrackUuid(result.pid, t));
          ASSERT_GE(ev.categories_size(), 1);
          EXPECT_EQ(ev.categories(0), "demo");
          if (depth == 0) {
            EXPECT_EQ(ev.name(), "frame");
            ++frames;
          } else {
            steps.push_back(ev.name());
          }
          ++depth;
          break;
        case TrackEvent::TYPE_SLICE_END:
          --depth;
          EXPECT_GE(depth, 0);
          break;
        case TrackEvent::TYPE_COUNTER:
          EXPECT_EQ(ev.track_uuid(), CounterTrackUuid(result.pid, t));
          EXPECT_EQ(depth, 0);
          break;
        default:
          ADD_FAILURE() << "unexpected event type " << ev.type();
      }
    }
    EXPECT_EQ(depth, 0);
    EXPECT_EQ(static_cast<uint64_t>(next_seq), tr.events_started);
    EXPECT_EQ(frames, config.iterations_per_thread);
    ASSERT_EQ(steps.size(), config.iterations_per_thread);
    for (size_t i = 0; i < steps.size(); ++i)
      EXPECT_EQ(steps[i], i % 2 ? "step_b" : "step_a");
  }
  EXPECT_EQ(names.size(), 3u);
  EXPECT_EQ(file_packets, result.packets_delivered);
}

// RING_BUFFER smaller than the data: the oldest packets are overwritten.
// What the file holds must match the demo's accounting exactly, and every
// gap in a thread's events must be reported in previous_packet_dropped.
TEST(RingtraceDemoTest, OverwritingRunAccountsForEveryPacket) {
  TempDir dir;
  DemoConfig config = SmallConfig(dir.File("ring.pftrace"));
  config.threads = 2;
  // ~1 MB of packets into 256 KiB, which always holds a re-emitted set of
  // descriptors per thread (kDescriptorPeriod iterations are ~90 KB).
  config.iterations_per_thread = 1500;
  config.buffer_kb = 256;
  DemoResult result;
  ASSERT_TRUE(RunDemo(config, &result).ok());
  SCOPED_TRACE(FormatSummary(config, result));
  EXPECT_GT(result.packets_lost, 0u);
  EXPECT_GT(result.lost_overwritten, 0u);
  EXPECT_EQ(result.packets_delivered + result.packets_lost,
            result.packets_written);
  EXPECT_EQ(result.lost_dropped_by_writers + result.lost_overwritten +
                result.lost_invalid + result.lost_other,
            result.packets_lost);

  Trace trace;
  ASSERT_TRUE(ReadTrace(config.out_path, &trace));
  const std::map<uint32_t, SequenceView> seqs = SplitBySequence(trace);
  uint64_t delivered = 0;
  uint64_t present = 0;  // packets written by the threads in the file
  for (const auto& [id, seq] : seqs) {
    delivered += seq.packets.size();
    // The thread, from the tracks its packets use (its descriptors may all
    // have been overwritten when the other thread wrote last).
    uint32_t t = ~0u;
    for (const TracePacket* p : seq.packets) {
      uint64_t uuid = 0;
      if (p->has_track_event())
        uuid = p->track_event().track_uuid();
      else if (p->has_track_descriptor() &&
               p->track_descriptor().uuid() != ProcessTrackUuid(result.pid))
        uuid = p->track_descriptor().uuid();
      if (uuid != 0) {
        t = static_cast<uint32_t>((uuid & 0xfffff) >> 1);
        break;
      }
    }
    ASSERT_LT(t, result.threads.size());
    ASSERT_LE(seq.packets.size(), result.threads[t].packets_started);
    present += result.threads[t].packets_started;
    int64_t prev = -1;
    bool loss_since_prev = false;
    uint64_t last_ts = 0;
    for (const TracePacket* p : seq.packets) {
      EXPECT_GE(p->timestamp(), last_ts);
      last_ts = p->timestamp();
      loss_since_prev |= p->previous_packet_dropped() != 0;
      if (!p->has_track_event())
        continue;
      const int64_t s = EventSeq(p->track_event());
      ASSERT_GT(s, prev);
      if (prev >= 0 && s != prev + 1) {
        EXPECT_TRUE(loss_since_prev) << "unreported gap before " << s;
      }
      prev = s;
      loss_since_prev = false;
    }
  }
  EXPECT_EQ(delivered, result.packets_delivered);
  // A thread whose packets were all overwritten has no sequence in the file:
  // its packets are lost too.
  uint64_t absent = 0;
  for (const DemoThreadResult& tr : result.threads)
    absent += tr.packets_started;
  absent -= present;
  EXPECT_EQ(present - delivered + absent, result.packets_lost);
  EXPECT_GT(result.buffer_stats.chunks_overwritten, 0u);
}

// DISCARD: the buffer stops taking chunks once full, so each thread keeps a
// prefix of its events.
TEST(RingtraceDemoTest, DiscardRunKeepsAPrefixOfEachThread) {
  TempDir dir;
  DemoConfig config = SmallConfig(dir.File("discard.pftrace"));
  config.threads = 2;
  config.iterations_per_thread = 600;
  config.buffer_kb = 48;
  config.fill_policy = trace_buffer::TraceBufferV2::OverwritePolicy::kDiscard;
  DemoResult result;
  ASSERT_TRUE(RunDemo(config, &result).ok());
  EXPECT_GT(result.buffer_stats.chunks_discarded, 0u);
  EXPECT_GT(result.packets_lost, 0u);
  EXPECT_EQ(result.lost_overwritten, 0u);
  EXPECT_EQ(result.packets_delivered + result.packets_lost,
            result.packets_written);

  Trace trace;
  ASSERT_TRUE(ReadTrace(config.out_path, &trace));
  uint64_t delivered = 0;
  for (const auto& [id, seq] : SplitBySequence(trace)) {
    delivered += seq.packets.size();
    int64_t next = 0;
    for (const TracePacket* p : seq.packets) {
      EXPECT_FALSE(p->has_previous_packet_dropped());
      if (p->has_track_event()) {
        EXPECT_EQ(EventSeq(p->track_event()), next++);
      }
    }
    EXPECT_GT(next, 0);
  }
  EXPECT_EQ(delivered, result.packets_delivered);
}

TEST(RingtraceDemoTest, InvalidConfigIsRejected) {
  TempDir dir;
  DemoConfig config = SmallConfig(dir.File("never.pftrace"));
  config.chunk_size = 100;
  DemoResult result;
  EXPECT_FALSE(RunDemo(config, &result).ok());
  config.chunk_size = 1024;
  config.ring_kb = 3;  // 3 chunks: not a power of two
  EXPECT_FALSE(RunDemo(config, &result).ok());
  config.ring_kb = 64;
  config.threads = 0;
  EXPECT_FALSE(RunDemo(config, &result).ok());
  EXPECT_NE(access(config.out_path.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace demo
}  // namespace ringtrace
