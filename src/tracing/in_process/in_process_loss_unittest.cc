/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Exact loss accounting with the in-process backend, as
// ExactLossEndToEndTest proves it for the system one
// (src/tracing/test/exact_loss_end_to_end_unittest.cc): four threads of this
// process write TrackEvent counters through writers of their own
// (ScopedThreadWriter) into a 64 KiB ring under the drop policy, for a
// session whose 256 KiB buffer (RING_BUFFER, then DISCARD) holds far less
// than they write. With every writer's own statistics (packets begun: the
// events and the TrackEvent SDK's clear and descriptor packets alike):
//
//   written == the process's packets in the trace + the packets reported lost
//
// exactly, where reported lost is TracingSessionSummary::packets_lost and,
// in the trace's TraceStats, ringtrace_packets_overwritten +
// ringtrace_packets_discarded + ringtrace_packets_dropped_by_producers +
// invalid_packets. trace_processor (when there is one) shows the writers'
// drops in Perfetto's own field and no other health issue.

// Categories for this test only (see RT_TRACK_EVENT_NAMESPACE).
#define RT_TRACK_EVENT_NAMESPACE rt_in_process_loss_unittest_categories

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "ringtrace/in_process_backend.h"
#include "ringtrace/trace_writer_v2.h"
#include "ringtrace/track_event.h"
#include "src/base/scoped_fd.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/in_process/test/trace_checks.h"

RT_DEFINE_CATEGORIES("inproc.exact");

namespace ringtrace {
namespace {

using perfetto::protos::TraceConfig;

constexpr char kDataSource[] = "inproc_exact";
constexpr uint32_t kThreads = 4;
constexpr uint64_t kEventsPerThread = 100000;

// The data source: the buffer of the instance started.
class Handler : public DataSourceHandler {
 public:
  void OnStart(const DataSourceInstanceConfig& config) override {
    std::lock_guard<std::mutex> lock(mutex_);
    started_++;
    target_buffer_ = config.target_buffer;
  }
  void OnStop(uint32_t) override {}
  void OnFlush(uint32_t) override {}
  bool started(shm_ring::BufferID* buffer) {
    std::lock_guard<std::mutex> lock(mutex_);
    *buffer = target_buffer_;
    return started_ == 1;
  }

 private:
  std::mutex mutex_;
  int started_ = 0;                       // guarded by mutex_
  shm_ring::BufferID target_buffer_ = 0;  // guarded by mutex_
};

// One thread's counters through its own writer; the writer's statistics.
void WriteCounters(Producer* producer,
                   shm_ring::BufferID buffer,
                   uint32_t thread,
                   shm_ring::TraceWriterV2Stats* stats) {
  base::Status status;
  std::unique_ptr<shm_ring::TraceWriterV2> writer =
      producer->NewTraceWriter(buffer, &status);
  ASSERT_TRUE(writer) << status.message();
  {
    track_event::ScopedThreadWriter bind(writer.get());
    for (uint64_t i = 0; i < kEventsPerThread; i++)
      RT_TRACE_COUNTER("inproc.exact", "n",
                       static_cast<int64_t>((uint64_t{thread} << 32) | i));
  }
  writer->Flush();
  *stats = writer->stats();
}

class InProcessLossTest
    : public ::testing::TestWithParam<TraceConfig::BufferConfig::FillPolicy> {
 protected:
  bool ring_buffer() const {
    return GetParam() == TraceConfig::BufferConfig::RING_BUFFER;
  }
};

TEST_P(InProcessLossTest, WrittenEqualsInTracePlusLost) {
  InProcessBackendOptions options;
  options.producer.name = "in_process_loss";
  options.producer.requested_ring_bytes = 64 * 1024;
  options.producer.buffer_exhausted_policy =
      shm_ring::BufferExhaustedPolicy::kDrop;
  options.register_track_event = false;  // the writers are the test's
  base::Status status;
  std::unique_ptr<InProcessBackend> backend =
      InProcessBackend::Create(options, &status);
  ASSERT_TRUE(backend) << status.message();
  track_event::SetCategoriesEnabled("inproc.exact");
  Handler handler;
  status = backend->RegisterDataSource(kDataSource, &handler);
  ASSERT_TRUE(status.ok()) << status.message();

  base::TempDir dir("ringtrace_inproc_loss");
  const std::string path = dir.File("loss.pftrace");
  base::ScopedFd fd(
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  ASSERT_TRUE(fd.valid());
  TraceConfig config;
  TraceConfig::BufferConfig* buffer = config.add_buffers();
  buffer->set_size_kb(256);
  buffer->set_fill_policy(GetParam());
  config.add_data_sources()->mutable_config()->set_name(kDataSource);
  std::unique_ptr<TracingSession> session = backend->NewSession(&status);
  ASSERT_TRUE(session) << status.message();
  ASSERT_TRUE(session->Setup(config, fd.get()).ok());
  status = session->StartBlocking();
  ASSERT_TRUE(status.ok()) << status.message();
  shm_ring::BufferID target = 0;
  ASSERT_TRUE(handler.started(&target)) << "the start barrier let it through";

  std::shared_ptr<Producer> producer = backend->tracing()->GetProducer();
  ASSERT_TRUE(producer);
  std::vector<shm_ring::TraceWriterV2Stats> stats(kThreads);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; t++)
    threads.emplace_back(WriteCounters, producer.get(), target, t, &stats[t]);
  for (std::thread& t : threads)
    t.join();
  producer.reset();
  track_event::SetCategoriesEnabled("-inproc.exact");
  shm_ring::TraceWriterV2Stats w;
  for (const shm_ring::TraceWriterV2Stats& s : stats) {
    w.packets_begun += s.packets_begun;
    w.packets_committed += s.packets_committed;
    w.packets_dropped += s.packets_dropped;
  }
  EXPECT_EQ(w.packets_committed + w.packets_dropped, w.packets_begun);
  EXPECT_GE(w.packets_begun, kThreads * kEventsPerThread);

  // The stop: the writers' loss reports go with the producer's stop ack,
  // before the final drain.
  ASSERT_TRUE(session->StopBlocking().ok());
  const uint64_t reported_lost = session->summary().packets_lost;
  const test::DecodedEvents trace =
      test::DecodeEvents(test::ReadFileBytes(path), getpid());
  ASSERT_TRUE(trace.parsed);
  ASSERT_TRUE(trace.has_stats);
  const perfetto::protos::TraceStats& s = trace.stats;
  printf(
      "in-process exact loss %s: written %llu (committed %llu, dropped "
      "%llu), in trace %llu, overwritten %llu, discarded %llu, reported "
      "lost %llu\n",
      ring_buffer() ? "RING_BUFFER" : "DISCARD",
      static_cast<unsigned long long>(w.packets_begun),
      static_cast<unsigned long long>(w.packets_committed),
      static_cast<unsigned long long>(w.packets_dropped),
      static_cast<unsigned long long>(trace.packets),
      static_cast<unsigned long long>(s.ringtrace_packets_overwritten()),
      static_cast<unsigned long long>(s.ringtrace_packets_discarded()),
      static_cast<unsigned long long>(reported_lost));
  // The buffer lost packets (megabytes into 256 KiB).
  if (ring_buffer())
    EXPECT_GT(s.ringtrace_packets_overwritten(), 0u);
  else
    EXPECT_GT(s.ringtrace_packets_discarded(), 0u);
  EXPECT_EQ(s.ringtrace_packets_dropped_by_producers(), w.packets_dropped);
  EXPECT_EQ(test::PacketsLostInStats(s), reported_lost);
  EXPECT_EQ(trace.packets + reported_lost, w.packets_begun)
      << "in trace " << trace.packets << ", reported lost " << reported_lost;

  const std::string tp = test::TraceProcessorForTests();
  if (tp.empty())
    return;
  std::map<std::string, int64_t> tp_stats;
  test::CheckWithTraceProcessor(tp, path, dir.path(), "none",
                                {"traced_buf_trace_writer_packet_loss"},
                                &tp_stats);
  EXPECT_EQ(tp_stats["traced_buf_trace_writer_packet_loss"],
            static_cast<int64_t>(w.packets_dropped));
  if (ring_buffer()) {
    EXPECT_EQ(tp_stats["traced_buf_chunks_overwritten"],
              static_cast<int64_t>(s.buffer_stats(0).chunks_overwritten()));
  } else {
    EXPECT_EQ(tp_stats["traced_buf_chunks_discarded"],
              static_cast<int64_t>(s.buffer_stats(0).chunks_discarded()));
  }
}

INSTANTIATE_TEST_SUITE_P(
    FillPolicies,
    InProcessLossTest,
    ::testing::Values(TraceConfig::BufferConfig::RING_BUFFER,
                      TraceConfig::BufferConfig::DISCARD),
    [](const ::testing::TestParamInfo<TraceConfig::BufferConfig::FillPolicy>&
           param_info) {
      return param_info.param == TraceConfig::BufferConfig::RING_BUFFER
                 ? "RingBuffer"
                 : "Discard";
    });

}  // namespace
}  // namespace ringtrace
