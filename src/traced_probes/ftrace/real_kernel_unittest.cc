/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The ftrace component against the running kernel: a private tracefs
// instance, real events, real pages from trace_pipe_raw, parsed and
// translated. Skipped (with what is missing and how to get it) where
// tracefs is not available or the test is not root. Every test removes its
// instance; instances left by a crashed run are removed first.

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "protos/perfetto/trace/trace.pb.h"
#include "src/base/test/temp_dir.h"
#include "src/base/test/trace_processor_stats.h"
#include "src/traced_probes/ftrace/event_format.h"
#include "src/traced_probes/ftrace/event_translator.h"
#include "src/traced_probes/ftrace/page_parser.h"
#include "src/traced_probes/ftrace/test/bundle_capture.h"
#include "src/traced_probes/ftrace/test/real_tracefs.h"
#include "src/traced_probes/ftrace/tracefs.h"

namespace ringtrace {
namespace ftrace {
namespace {

// Sleeps kSleeps times for 1 ms. The tests expect at least five switches
// out of the sleeping thread and five back in. A run of the full suite has
// been seen to record one switch in fewer than the sleeps it made (the
// kernel does not promise one sched_switch pair per sleep), so the pattern
// has more sleeps than the bounds ask for.
constexpr int kSleeps = 8;
void SleepPattern() {
  for (int i = 0; i < kSleeps; i++) {
    const struct timespec ts = {0, 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
}

namespace pb = perfetto::protos;
using test::PinToFirstCpu;
using ::testing::HasSubstr;

class RealKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!test::RealTracefs(&root_, &why))
      GTEST_SKIP() << why;
    base::Status s =
        CleanStaleInstances(root_, test::kTestInstancePrefix, nullptr);
    ASSERT_TRUE(s.ok()) << s.message();
    s = TracefsInstance::Create(root_, test::kTestInstancePrefix, &instance_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  void TearDown() override {
    if (!instance_)
      return;
    const std::string path = instance_->path();
    instance_.reset();
    struct stat st;
    EXPECT_NE(stat(path.c_str(), &st), 0) << path << " was not removed";
  }

  // Every page of every CPU, until each buffer is empty.
  struct CpuPages {
    uint32_t cpu;
    size_t count;
    std::vector<uint8_t> bytes;
  };
  std::vector<CpuPages> ReadAllPages(size_t page_size) {
    std::vector<CpuPages> out;
    uint32_t cpus = 0;
    base::Status s = instance_->CountCpus(&cpus);
    EXPECT_TRUE(s.ok()) << s.message();
    constexpr size_t kMaxPages = 4096;
    for (uint32_t cpu = 0; cpu < cpus; cpu++) {
      base::ScopedFd fd;
      s = instance_->OpenTracePipeRaw(cpu, &fd);
      if (!s.ok()) {
        ADD_FAILURE() << s.message();
        continue;
      }
      CpuPages pages{cpu, 0, std::vector<uint8_t>(kMaxPages * page_size)};
      s = ReadRawPages(fd.get(), page_size, kMaxPages, pages.bytes.data(),
                       &pages.count);
      EXPECT_TRUE(s.ok()) << s.message();
      pages.bytes.resize(pages.count * page_size);
      out.push_back(std::move(pages));
    }
    return out;
  }

  std::string root_;
  std::unique_ptr<TracefsInstance> instance_;
};

TEST_F(RealKernelTest, InstanceControlFiles) {
  pid_t pid = 0;
  ASSERT_TRUE(
      ParseInstanceName(instance_->name(), test::kTestInstancePrefix, &pid));
  EXPECT_EQ(pid, getpid());
  EXPECT_EQ(instance_->path(), root_ + "/instances/" + instance_->name());

  ASSERT_TRUE(instance_->SetBufferSizeKb(64).ok());
  uint32_t kb = 0;
  ASSERT_TRUE(instance_->GetBufferSizeKb(&kb).ok());
  // Rounded up to whole pages of data (4080 bytes in a 4 KiB page).
  EXPECT_GE(kb, 64u);
  EXPECT_LT(kb, 64u + 8u);

  ASSERT_TRUE(instance_->EnableEvent("sched/sched_switch").ok());
  // ftrace/print has no enable file: always recorded.
  EXPECT_TRUE(instance_->EnableEvent("ftrace/print").ok());
  EXPECT_THAT(instance_->EnableEvent("nosuch/event").message(),
              HasSubstr("unknown ftrace event nosuch/event"));
  EXPECT_THAT(instance_->EnableEvent("../../tracing_on").message(),
              HasSubstr("not group/name"));
  ASSERT_TRUE(instance_->DisableEvent("sched/sched_switch").ok());

  std::string clock;
  ASSERT_TRUE(instance_->GetTraceClock(&clock).ok());
  EXPECT_EQ(clock, "local");  // a new instance's
  ASSERT_TRUE(instance_->SetTraceClock("boot").ok());
  ASSERT_TRUE(instance_->GetTraceClock(&clock).ok());
  EXPECT_EQ(clock, "boot");
  EXPECT_THAT(instance_->SetTraceClock("nosuch").message(),
              HasSubstr("no trace clock \"nosuch\""));
  EXPECT_THAT(instance_->SetTraceClock("oot").message(), HasSubstr("[boot]"));

  uint32_t cpus = 0;
  ASSERT_TRUE(instance_->CountCpus(&cpus).ok());
  ASSERT_GE(cpus, 1u);
  CpuStats stats;
  base::Status s = instance_->ReadCpuStats(cpus - 1, &stats);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(stats.entries, 0u);  // tracing_on is 0 since Create()
  EXPECT_FALSE(instance_->ReadCpuStats(cpus, &stats).ok());
  size_t page_size = 0;
  ASSERT_TRUE(instance_->GetPageSize(&page_size).ok());
  EXPECT_GE(page_size, 4096u);

  HeaderPage header;
  s = LoadHeaderPage(*instance_, &header);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(header.commit_size, sizeof(long));
  EXPECT_EQ(header.data_offset, 8 + sizeof(long));
}

// sched_switch events of this thread and a trace_marker write, read back
// from the kernel's pages.
TEST_F(RealKernelTest, SchedSwitchAndPrintFromRealPages) {
  const std::vector<std::string> events = {"sched/sched_switch",
                                           "ftrace/print"};
  EventFormatTable formats;
  base::Status s = LoadEventFormats(*instance_, events, &formats);
  ASSERT_TRUE(s.ok()) << s.message();
  HeaderPage header;
  ASSERT_TRUE(LoadHeaderPage(*instance_, &header).ok());
  size_t page_size = 0;
  ASSERT_TRUE(instance_->GetPageSize(&page_size).ok());
  ASSERT_TRUE(instance_->SetBufferSizeKb(512).ok());
  ASSERT_TRUE(instance_->SetTraceClock("boot").ok());
  for (const std::string& e : events)
    ASSERT_TRUE(instance_->EnableEvent(e).ok());
  struct timespec boot_begin;
  clock_gettime(CLOCK_BOOTTIME, &boot_begin);

  const PinToFirstCpu pin;
  ASSERT_TRUE(pin.ok());
  const pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  const std::string marker =
      "ringtrace-real-kernel-marker-" + std::to_string(tid);
  ASSERT_TRUE(instance_->SetTracingOn(true).ok());
  // Each sleep switches this thread out: a sched_switch with prev_pid tid.
  SleepPattern();
  ASSERT_TRUE(instance_->WriteTraceMarker(marker).ok());
  ASSERT_TRUE(instance_->SetTracingOn(false).ok());
  struct timespec boot_end;
  clock_gettime(CLOCK_BOOTTIME, &boot_end);
  auto ns = [](const struct timespec& t) {
    return static_cast<uint64_t>(t.tv_sec) * 1000000000u +
           static_cast<uint64_t>(t.tv_nsec);
  };

  EventTranslator translator(&formats, header);
  size_t switches_out = 0;
  size_t switches_in = 0;
  size_t markers = 0;
  size_t total_pages = 0;
  for (const auto& cpu : ReadAllPages(page_size)) {
    total_pages += cpu.count;
    pb::FtraceEventBundle bundle;
    BundleResult result;
    ASSERT_TRUE(test::CaptureBundle(
        [&](test::FtraceEventBundleWriter* b) {
          result = translator.WriteBundle(cpu.cpu, cpu.bytes.data(), cpu.count,
                                          page_size, b);
        },
        &bundle, /*ring_chunks=*/1024));
    EXPECT_EQ(result.corrupt_pages, 0u) << "cpu " << cpu.cpu;
    EXPECT_EQ(bundle.error_size(), 0);
    EXPECT_EQ(bundle.cpu(), cpu.cpu);
    uint64_t last_ts = 0;
    for (const pb::FtraceEvent& e : bundle.event()) {
      EXPECT_GE(e.timestamp(), last_ts) << "times go forward on a CPU";
      last_ts = e.timestamp();
      if (e.has_sched_switch()) {
        const auto& sw = e.sched_switch();
        if (sw.prev_pid() == tid) {
          switches_out++;
          EXPECT_EQ(e.pid(), static_cast<uint32_t>(tid));
        }
        if (sw.next_pid() == tid)
          switches_in++;
      } else if (e.has_print()) {
        if (e.print().buf().find(marker) != std::string::npos) {
          markers++;
          EXPECT_EQ(e.pid(), static_cast<uint32_t>(tid));
          // In the boot clock, between the two readings around the write.
          EXPECT_GE(e.timestamp(), ns(boot_begin));
          EXPECT_LE(e.timestamp(), ns(boot_end));
        }
      } else {
        ADD_FAILURE() << "an event that was not enabled";
      }
    }
  }
  EXPECT_GT(total_pages, 0u);
  EXPECT_EQ(markers, 1u);
  EXPECT_GE(switches_out, 5u);
  EXPECT_GE(switches_in, 5u);  // on the first CPU: PinToFirstCpu
  EXPECT_EQ(translator.stats().unknown_events, 0u);
  EXPECT_EQ(translator.stats().unreadable_fields, 0u);
  EXPECT_EQ(translator.stats().short_records, 0u);
}

// A buffer of a few pages written far past its size: the kernel overwrites
// the oldest events, says so in the stats and on the first page read, and
// what is left is exactly what the stats call entries.
TEST_F(RealKernelTest, OverrunIsReportedAndConsistent) {
  EventFormatTable formats;
  base::Status s = LoadEventFormats(*instance_, {"ftrace/print"}, &formats);
  ASSERT_TRUE(s.ok()) << s.message();
  HeaderPage header;
  ASSERT_TRUE(LoadHeaderPage(*instance_, &header).ok());
  size_t page_size = 0;
  ASSERT_TRUE(instance_->GetPageSize(&page_size).ok());
  ASSERT_TRUE(instance_->SetBufferSizeKb(4).ok());

  // Every marker on one CPU; the rest of the test runs in a child so the
  // test thread's affinity is left as it was.
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed))
    cpu++;
  ASSERT_LT(cpu, CPU_SETSIZE);
  constexpr int kMarkers = 2000;
  ASSERT_TRUE(instance_->SetTracingOn(true).ok());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0)
      _exit(2);
    for (int i = 0; i < kMarkers; i++) {
      const std::string text = "overrun marker " + std::to_string(i) +
                               " padding-padding-padding-padding";
      if (!instance_->WriteTraceMarker(text).ok())
        _exit(3);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  ASSERT_TRUE(instance_->SetTracingOn(false).ok());

  CpuStats before;
  s = instance_->ReadCpuStats(static_cast<uint32_t>(cpu), &before);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_GT(before.overrun, 0u);
  EXPECT_EQ(before.commit_overrun, 0u);
  EXPECT_EQ(before.dropped_events, 0u);  // overwrite mode: old ones go
  // Each write is one event: what is held plus what was overwritten.
  EXPECT_EQ(before.entries + before.overrun, static_cast<uint64_t>(kMarkers));

  EventTranslator translator(&formats, header);
  uint64_t parsed = 0;
  bool first_page_lost = false;
  BundleResult result;
  for (const auto& pages : ReadAllPages(page_size)) {
    if (pages.cpu != static_cast<uint32_t>(cpu)) {
      EXPECT_EQ(pages.count, 0u) << "markers only on cpu " << cpu;
      continue;
    }
    ASSERT_GT(pages.count, 0u);
    PageHeader first;
    ASSERT_EQ(ParsePageHeader(pages.bytes.data(), page_size, header, &first),
              PageError::kNone);
    first_page_lost = first.lost_events;
    pb::FtraceEventBundle bundle;
    ASSERT_TRUE(test::CaptureBundle(
        [&](test::FtraceEventBundleWriter* b) {
          result = translator.WriteBundle(pages.cpu, pages.bytes.data(),
                                          pages.count, page_size, b);
        },
        &bundle, /*ring_chunks=*/256));
    EXPECT_TRUE(bundle.lost_events());
    EXPECT_EQ(bundle.error_size(), 0);
    int last_index = -1;
    for (const pb::FtraceEvent& e : bundle.event()) {
      ASSERT_TRUE(e.has_print());
      int index = -1;
      ASSERT_EQ(sscanf(e.print().buf().c_str(), "overrun marker %d", &index),
                1);
      EXPECT_GT(index, last_index) << "the newest events survive, in order";
      last_index = index;
      parsed++;
    }
    // The survivors are the last ones written.
    EXPECT_EQ(last_index, kMarkers - 1);
  }
  EXPECT_TRUE(first_page_lost);
  EXPECT_TRUE(result.lost_events);
  EXPECT_EQ(parsed, before.entries);
  // A count stored on a page is part of the overrun, never more.
  EXPECT_LE(result.lost_count_stored, before.overrun);
  if (!result.lost_count_unknown) {
    EXPECT_EQ(result.lost_count_stored, before.overrun);
  }

  CpuStats after;
  ASSERT_TRUE(instance_->ReadCpuStats(static_cast<uint32_t>(cpu), &after).ok());
  EXPECT_EQ(after.entries, 0u);
  EXPECT_EQ(after.overrun, before.overrun);
}

// The bundles made from real pages, as a trace file, in Perfetto's
// trace_processor: one sched slice per sched_switch, this thread among
// them, the trace_marker write as the atrace counter it spells, no import
// error or data loss. Needs $TRACE_PROCESSOR_SHELL.
TEST_F(RealKernelTest, TraceProcessorReadsTheBundles) {
  const std::string tp = ringtrace::test::TraceProcessorShellPath();
  if (tp.empty())
    GTEST_SKIP() << "no trace_processor_shell: set TRACE_PROCESSOR_SHELL to "
                    "Perfetto's trace_processor_shell";
  const std::vector<std::string> events = {"sched/sched_switch",
                                           "ftrace/print"};
  EventFormatTable formats;
  ASSERT_TRUE(LoadEventFormats(*instance_, events, &formats).ok());
  HeaderPage header;
  ASSERT_TRUE(LoadHeaderPage(*instance_, &header).ok());
  size_t page_size = 0;
  ASSERT_TRUE(instance_->GetPageSize(&page_size).ok());
  ASSERT_TRUE(instance_->SetBufferSizeKb(512).ok());
  ASSERT_TRUE(instance_->SetTraceClock("boot").ok());
  for (const std::string& e : events)
    ASSERT_TRUE(instance_->EnableEvent(e).ok());

  const PinToFirstCpu pin;
  ASSERT_TRUE(pin.ok());
  const pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  ASSERT_TRUE(instance_->SetTracingOn(true).ok());
  SleepPattern();
  // An atrace counter: C|pid|name|value.
  ASSERT_TRUE(instance_
                  ->WriteTraceMarker("C|" + std::to_string(getpid()) +
                                     "|ringtrace_marker|" + std::to_string(tid))
                  .ok());
  ASSERT_TRUE(instance_->SetTracingOn(false).ok());

  EventTranslator translator(&formats, header);
  pb::Trace trace;
  size_t switches = 0;
  size_t switches_in = 0;
  for (const auto& cpu : ReadAllPages(page_size)) {
    pb::FtraceEventBundle bundle;
    ASSERT_TRUE(test::CaptureBundle(
        [&](test::FtraceEventBundleWriter* b) {
          translator.WriteBundle(cpu.cpu, cpu.bytes.data(), cpu.count,
                                 page_size, b);
        },
        &bundle, /*ring_chunks=*/1024));
    for (const pb::FtraceEvent& e : bundle.event()) {
      switches += e.has_sched_switch() ? 1 : 0;
      switches_in += e.has_sched_switch() && e.sched_switch().next_pid() == tid;
    }
    pb::TracePacket* packet = trace.add_packet();
    packet->set_trusted_packet_sequence_id(1);
    *packet->mutable_ftrace_events() = bundle;
  }
  ASSERT_GE(switches, 10u);  // five out, five in
  base::TempDir dir;
  const std::string file = dir.File("real.pftrace");
  {
    std::ofstream out(file, std::ios::binary);
    ASSERT_TRUE(trace.SerializeToOstream(&out));
  }

  std::string csv;
  std::string error;
  ASSERT_TRUE(ringtrace::test::RunTraceProcessorQuery(
      tp, file, dir.path(),
      "select 'slices', count(*) from sched;\n"
      "select 'mine', count(*) from sched join thread using(utid) where tid "
      "= " +
          std::to_string(tid) +
          ";\n"
          "select 'marker', cast(value as int) from counter join "
          "process_counter_track t on counter.track_id = t.id where t.name = "
          "'ringtrace_marker';",
      &csv, &error))
      << error;
  EXPECT_THAT(csv, HasSubstr("\"slices\"," + std::to_string(switches) + "\n"));
  EXPECT_GE(switches_in, 5u);
  EXPECT_THAT(csv, ::testing::ContainsRegex("\"mine\",[1-9][0-9]*\n"));
  EXPECT_THAT(csv, HasSubstr("\"marker\"," + std::to_string(tid) + "\n"));

  std::vector<ringtrace::test::TraceProcessorStat> stats;
  ASSERT_TRUE(
      ringtrace::test::QueryNonZeroStats(tp, file, dir.path(), &stats, &error))
      << error;
  for (const auto& stat : stats) {
    // Other tasks woken on a CPU whose idle switches the kernel does not
    // record (PinToFirstCpu) switch out with no switch in: trace_processor
    // says so of the kernel's data. Everything else must be clean.
    if (stat.name == "mismatched_sched_switch_tids")
      continue;
    EXPECT_TRUE(stat.severity != "error" && stat.severity != "data_loss")
        << ringtrace::test::Describe(stat);
  }
}

TEST_F(RealKernelTest, CleanStaleInstancesRemovesADeadOwnersInstance) {
  const pid_t dead = fork();
  if (dead == 0)
    _exit(0);
  ASSERT_GT(dead, 0);
  ASSERT_EQ(waitpid(dead, nullptr, 0), dead);
  const std::string stale =
      root_ + "/instances/" + InstanceName(test::kTestInstancePrefix, dead, 0);
  ASSERT_EQ(mkdir(stale.c_str(), 0700), 0) << strerror(errno);
  uint32_t removed = 0;
  base::Status s =
      CleanStaleInstances(root_, test::kTestInstancePrefix, &removed);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(removed, 1u);
  struct stat st;
  EXPECT_NE(stat(stale.c_str(), &st), 0);
  EXPECT_EQ(stat(instance_->path().c_str(), &st), 0) << "ours is alive";
}

}  // namespace
}  // namespace ftrace
}  // namespace ringtrace
