/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/ftrace/event_translator.h"

#include <string.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "protos/perfetto/config/ftrace/ftrace_config.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"
#include "src/traced_probes/ftrace/test/bundle_capture.h"
#include "src/traced_probes/ftrace/test/format_texts.h"
#include "src/traced_probes/ftrace/test/page_builder.h"

namespace ringtrace {
namespace ftrace {
namespace {

namespace pb = perfetto::protos;
using test::CaptureBundle;
using test::FtraceEventBundleWriter;
using test::PageBuilder;
using test::ParseFormatOrDie;
using test::RecordBuilder;

class EventTranslatorTest : public ::testing::Test {
 protected:
  EventTranslatorTest() {
    struct Text {
      const char* text;
      const char* group;
    };
    for (const Text& t : {
             Text{test::kSchedSwitchFormat, "sched"},
             Text{test::kSchedWakingFormat, "sched"},
             Text{test::kSchedProcessForkFormat, "sched"},
             Text{test::kSchedProcessExitFormat, "sched"},
             Text{test::kSchedProcessFreeFormat, "sched"},
             Text{test::kTaskNewtaskFormat, "task"},
             Text{test::kTaskRenameFormat, "task"},
             Text{test::kPrintFormat, "ftrace"},
             Text{test::kIrqHandlerEntryFormat, "irq"},
         }) {
      base::Status s = table_.Add(ParseFormatOrDie(t.text, t.group));
      EXPECT_TRUE(s.ok()) << s.message();
    }
    // A generic event with an unsigned field, a field of no single value,
    // and a fixed string.
    base::Status s = table_.Add(ParseFormatOrDie(
        "name: odd_event\nID: 900\nformat:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
        "\tfield:u64 count;\toffset:8;\tsize:8;\tsigned:0;\n"
        "\tfield:unsigned long caller[2];\toffset:16;\tsize:16;\tsigned:0;\n"
        "\tfield:char tag[8];\toffset:32;\tsize:8;\tsigned:0;\n"
        "\tfield:s8 delta;\toffset:40;\tsize:1;\tsigned:1;\n",
        "test"));
    EXPECT_TRUE(s.ok()) << s.message();
    translator_.reset(new EventTranslator(&table_, HeaderPage()));
  }

  const EventFormat& Format(const char* group, const char* name) {
    const EventFormat* f = table_.FindByName(group, name);
    RT_CHECK(f);
    return *f;
  }

  // Translates |records| (one event each, 10 ns apart from 1000) as one
  // page of cpu 2.
  pb::FtraceEventBundle Translate(
      const std::vector<std::vector<uint8_t>>& records) {
    PageBuilder page;
    page.SetTimestamp(1000);
    for (const auto& r : records)
      page.AddEvent(10, r);
    const std::vector<uint8_t> bytes = page.Build();
    pb::FtraceEventBundle bundle;
    EXPECT_TRUE(CaptureBundle(
        [&](FtraceEventBundleWriter* b) {
          translator_->WriteBundle(2, bytes.data(), 1, bytes.size(), b);
        },
        &bundle));
    return bundle;
  }

  EventFormatTable table_;
  std::unique_ptr<EventTranslator> translator_;
};

TEST_F(EventTranslatorTest, KindsByGroupAndName) {
  EXPECT_EQ(translator_->KindOf(372), EventKind::kSchedSwitch);
  EXPECT_EQ(translator_->KindOf(375), EventKind::kSchedWaking);
  EXPECT_EQ(translator_->KindOf(366), EventKind::kSchedProcessFork);
  EXPECT_EQ(translator_->KindOf(369), EventKind::kSchedProcessExit);
  EXPECT_EQ(translator_->KindOf(370), EventKind::kSchedProcessFree);
  EXPECT_EQ(translator_->KindOf(205), EventKind::kTaskNewtask);
  EXPECT_EQ(translator_->KindOf(204), EventKind::kTaskRename);
  EXPECT_EQ(translator_->KindOf(5), EventKind::kPrint);
  EXPECT_EQ(translator_->KindOf(225), EventKind::kGeneric);
  EXPECT_EQ(translator_->KindOf(900), EventKind::kGeneric);
}

TEST_F(EventTranslatorTest, SchedSwitch) {
  const auto record = RecordBuilder(Format("sched", "sched_switch"))
                          .SetInt("common_pid", 4321)
                          .SetString("prev_comm", "writer-thread")
                          .SetInt("prev_pid", 4321)
                          .SetInt("prev_prio", 120)
                          .SetInt("prev_state", 0x100)
                          .SetString("next_comm", "a_very_long_comm_name")
                          .SetInt("next_pid", 0)
                          .SetInt("next_prio", -1)
                          .Build();
  const pb::FtraceEventBundle bundle = Translate({record});
  EXPECT_EQ(bundle.cpu(), 2u);
  EXPECT_FALSE(bundle.has_lost_events());
  EXPECT_EQ(bundle.error_size(), 0);
  ASSERT_EQ(bundle.event_size(), 1);
  const pb::FtraceEvent& e = bundle.event(0);
  EXPECT_EQ(e.timestamp(), 1010u);
  EXPECT_EQ(e.pid(), 4321u);
  ASSERT_TRUE(e.has_sched_switch());
  const pb::SchedSwitchFtraceEvent& s = e.sched_switch();
  EXPECT_EQ(s.prev_comm(), "writer-thread");
  EXPECT_EQ(s.prev_pid(), 4321);
  EXPECT_EQ(s.prev_prio(), 120);
  EXPECT_EQ(s.prev_state(), 0x100);
  EXPECT_EQ(s.next_comm(), "a_very_long_com");  // char[16]: 15 + NUL
  EXPECT_TRUE(s.has_next_pid());
  EXPECT_EQ(s.next_pid(), 0);
  EXPECT_EQ(s.next_prio(), -1);
  EXPECT_EQ(translator_->stats().events, 1u);
  EXPECT_EQ(translator_->stats().generic_events, 0u);
}

TEST_F(EventTranslatorTest, SchedWakingWithoutSuccessOnThisKernel) {
  const auto record = RecordBuilder(Format("sched", "sched_waking"))
                          .SetInt("common_pid", 1)
                          .SetString("comm", "kworker/0:1")
                          .SetInt("pid", 77)
                          .SetInt("prio", 100)
                          .SetInt("target_cpu", 3)
                          .Build();
  const pb::FtraceEventBundle bundle = Translate({record});
  ASSERT_EQ(bundle.event_size(), 1);
  const pb::SchedWakingFtraceEvent& w = bundle.event(0).sched_waking();
  EXPECT_EQ(w.comm(), "kworker/0:1");
  EXPECT_EQ(w.pid(), 77);
  EXPECT_EQ(w.prio(), 100);
  EXPECT_EQ(w.target_cpu(), 3);
  EXPECT_FALSE(w.has_success());  // the format has no such field
}

TEST_F(EventTranslatorTest, ProcessAndTaskEvents) {
  const auto fork_record = RecordBuilder(Format("sched", "sched_process_fork"))
                               .SetInt("common_pid", 10)
                               .SetString("parent_comm", "bash")
                               .SetInt("parent_pid", 10)
                               .SetString("child_comm", "bash-child")
                               .SetInt("child_pid", 11)
                               .Build();
  const auto exit_record = RecordBuilder(Format("sched", "sched_process_exit"))
                               .SetInt("common_pid", 11)
                               .SetString("comm", "ls")
                               .SetInt("pid", 11)
                               .SetInt("prio", 120)
                               .Build();
  const auto free_record = RecordBuilder(Format("sched", "sched_process_free"))
                               .SetInt("common_pid", 0)
                               .SetString("comm", "ls")
                               .SetInt("pid", 11)
                               .SetInt("prio", 120)
                               .Build();
  const auto newtask_record = RecordBuilder(Format("task", "task_newtask"))
                                  .SetInt("common_pid", 10)
                                  .SetInt("pid", 11)
                                  .SetString("comm", "bash")
                                  .SetInt("clone_flags", 0x1200011)
                                  .SetInt("oom_score_adj", -1000)
                                  .Build();
  const auto rename_record = RecordBuilder(Format("task", "task_rename"))
                                 .SetInt("common_pid", 11)
                                 .SetInt("pid", 11)
                                 .SetString("oldcomm", "bash")
                                 .SetString("newcomm", "ls")
                                 .SetInt("oom_score_adj", 0)
                                 .Build();
  const pb::FtraceEventBundle bundle = Translate(
      {fork_record, exit_record, free_record, newtask_record, rename_record});
  ASSERT_EQ(bundle.event_size(), 5);
  const auto& f = bundle.event(0).sched_process_fork();
  EXPECT_EQ(f.parent_comm(), "bash");
  EXPECT_EQ(f.parent_pid(), 10);
  EXPECT_EQ(f.child_comm(), "bash-child");
  EXPECT_EQ(f.child_pid(), 11);
  const auto& x = bundle.event(1).sched_process_exit();
  EXPECT_EQ(x.comm(), "ls");
  EXPECT_EQ(x.pid(), 11);
  EXPECT_EQ(x.prio(), 120);
  EXPECT_FALSE(x.has_tgid());  // not in this kernel's format
  const auto& fr = bundle.event(2).sched_process_free();
  EXPECT_EQ(fr.comm(), "ls");
  EXPECT_EQ(fr.pid(), 11);
  EXPECT_EQ(bundle.event(2).pid(), 0u);
  EXPECT_TRUE(bundle.event(2).has_pid());
  const auto& n = bundle.event(3).task_newtask();
  EXPECT_EQ(n.pid(), 11);
  EXPECT_EQ(n.comm(), "bash");
  EXPECT_EQ(n.clone_flags(), 0x1200011u);
  EXPECT_EQ(n.oom_score_adj(), -1000);
  const auto& r = bundle.event(4).task_rename();
  EXPECT_EQ(r.pid(), 11);
  EXPECT_EQ(r.oldcomm(), "bash");
  EXPECT_EQ(r.newcomm(), "ls");
  EXPECT_EQ(r.oom_score_adj(), 0);
  for (int i = 0; i < 5; i++)
    EXPECT_EQ(bundle.event(i).timestamp(),
              1010u + 10u * static_cast<unsigned>(i));
}

// The sinks of linux.process_stats' on-demand dumps: each record's
// common_pid (not 0, not the one appended last), and the renamed task of
// each task_rename (a write to another thread's /proc comm renames that
// thread, not the writer; a pid out of range is left out).
TEST_F(EventTranslatorTest, PidAndRenameSinks) {
  std::vector<int32_t> pids;
  std::vector<int32_t> renamed;
  translator_->SetPidSink(&pids);
  translator_->SetRenameSink(&renamed);
  auto rename = [&](int64_t common_pid, int64_t pid) {
    return RecordBuilder(Format("task", "task_rename"))
        .SetInt("common_pid", common_pid)
        .SetInt("pid", pid)
        .SetString("oldcomm", "a")
        .SetString("newcomm", "b")
        .Build();
  };
  const auto exit_record = RecordBuilder(Format("sched", "sched_process_exit"))
                               .SetInt("common_pid", 0)
                               .SetString("comm", "x")
                               .SetInt("pid", 12)
                               .Build();
  const pb::FtraceEventBundle bundle =
      Translate({rename(11, 11), rename(11, 13), exit_record, rename(7, -5),
                 rename(7, 0)});
  EXPECT_EQ(bundle.event_size(), 5);
  EXPECT_EQ(pids, (std::vector<int32_t>{11, 7}));
  EXPECT_EQ(renamed, (std::vector<int32_t>{11, 13}));

  translator_->SetPidSink(nullptr);
  translator_->SetRenameSink(nullptr);
  Translate({rename(20, 20)});
  EXPECT_EQ(pids.size(), 2u);
  EXPECT_EQ(renamed.size(), 2u);
}

TEST_F(EventTranslatorTest, PrintBuf) {
  const auto record = RecordBuilder(Format("ftrace", "print"))
                          .SetInt("common_pid", 99)
                          .SetInt("ip", 0xffffffff81234567)
                          .SetString("buf", "hello marker\n")
                          .Build();
  const pb::FtraceEventBundle bundle = Translate({record});
  ASSERT_EQ(bundle.event_size(), 1);
  ASSERT_TRUE(bundle.event(0).has_print());
  EXPECT_EQ(bundle.event(0).print().buf(), "hello marker\n");
  EXPECT_EQ(bundle.event(0).print().ip(), 0xffffffff81234567u);
  EXPECT_EQ(bundle.event(0).pid(), 99u);
}

TEST_F(EventTranslatorTest, GenericEvents) {
  const auto irq = RecordBuilder(Format("irq", "irq_handler_entry"))
                       .SetInt("common_pid", 3)
                       .SetInt("irq", -5)
                       .SetString("name", "eth0-rx")
                       .Build();
  const auto odd = RecordBuilder(Format("test", "odd_event"))
                       .SetInt("common_pid", 4)
                       .SetInt("count", -1)  // all bits: an unsigned max
                       .SetString("tag", "t1")
                       .SetInt("delta", -3)
                       .Build();
  const pb::FtraceEventBundle bundle = Translate({irq, odd});
  ASSERT_EQ(bundle.event_size(), 2);
  ASSERT_TRUE(bundle.event(0).has_generic());
  const pb::GenericFtraceEvent& g = bundle.event(0).generic();
  EXPECT_EQ(g.event_name(), "irq_handler_entry");
  ASSERT_EQ(g.field_size(), 2);
  EXPECT_EQ(g.field(0).name(), "irq");
  EXPECT_EQ(g.field(0).int_value(), -5);
  EXPECT_EQ(g.field(1).name(), "name");
  EXPECT_EQ(g.field(1).str_value(), "eth0-rx");
  const pb::GenericFtraceEvent& o = bundle.event(1).generic();
  EXPECT_EQ(o.event_name(), "odd_event");
  ASSERT_EQ(o.field_size(), 3);  // caller[2] has no single value
  EXPECT_EQ(o.field(0).name(), "count");
  EXPECT_TRUE(o.field(0).has_uint_value());
  EXPECT_EQ(o.field(0).uint_value(), ~uint64_t{0});
  EXPECT_EQ(o.field(1).name(), "tag");
  EXPECT_EQ(o.field(1).str_value(), "t1");
  EXPECT_EQ(o.field(2).name(), "delta");
  EXPECT_EQ(o.field(2).int_value(), -3);
  EXPECT_EQ(translator_->stats().generic_events, 2u);
}

TEST_F(EventTranslatorTest, UnknownIdsAreSkippedAndCounted) {
  std::vector<uint8_t> unknown(16, 0);
  const uint16_t id = 4444;
  memcpy(unknown.data(), &id, 2);
  const auto print_record = RecordBuilder(Format("ftrace", "print"))
                                .SetString("buf", "after")
                                .Build();
  const pb::FtraceEventBundle bundle = Translate({unknown, print_record});
  ASSERT_EQ(bundle.event_size(), 1);
  EXPECT_EQ(bundle.event(0).print().buf(), "after");
  EXPECT_EQ(bundle.event(0).timestamp(), 1020u);
  EXPECT_EQ(bundle.error_size(), 0);
  EXPECT_EQ(translator_->stats().unknown_events, 1u);
}

TEST_F(EventTranslatorTest, RecordsTooShortForTheirCommonFields) {
  // 4 bytes: common_type is there, common_pid (4..8) is not.
  const auto short_pid =
      RecordBuilder(Format("sched", "sched_switch")).Resize(4).Build();
  const pb::FtraceEventBundle bundle = Translate({short_pid});
  EXPECT_EQ(bundle.event_size(), 0);
  ASSERT_EQ(bundle.error_size(), 1);
  EXPECT_EQ(bundle.error(0).status(), pb::FTRACE_STATUS_ABI_SHORT_EVENT_ID);
  EXPECT_EQ(bundle.error(0).timestamp(), 1010u);
  EXPECT_EQ(translator_->stats().short_records, 1u);

  // Fewer bytes than common_type itself.
  RawEvent tiny;
  const uint8_t one = 5;
  tiny.data = &one;
  tiny.size = 1;
  tiny.timestamp = 7;
  pb::FtraceEventBundle b2;
  ASSERT_TRUE(CaptureBundle(
      [&](FtraceEventBundleWriter* b) {
        EXPECT_FALSE(translator_->TranslateEvent(tiny, b));
      },
      &b2));
  ASSERT_EQ(b2.error_size(), 1);
  EXPECT_EQ(b2.error(0).timestamp(), 7u);
  EXPECT_EQ(translator_->stats().short_records, 2u);
}

TEST_F(EventTranslatorTest, FieldsPastTheRecordAreLeftOut) {
  // Cut at 28 bytes: prev_comm (8..24) and prev_pid (24..28) fit; the five
  // fields after them do not.
  const auto cut = RecordBuilder(Format("sched", "sched_switch"))
                       .SetInt("common_pid", 1)
                       .SetString("prev_comm", "cut")
                       .SetInt("prev_pid", 6)
                       .SetInt("next_pid", 9)
                       .Resize(28)
                       .Build();
  const pb::FtraceEventBundle bundle = Translate({cut});
  ASSERT_EQ(bundle.event_size(), 1);
  const pb::SchedSwitchFtraceEvent& s = bundle.event(0).sched_switch();
  EXPECT_EQ(s.prev_comm(), "cut");
  EXPECT_EQ(s.prev_pid(), 6);
  EXPECT_FALSE(s.has_prev_prio());
  EXPECT_FALSE(s.has_prev_state());
  EXPECT_FALSE(s.has_next_comm());
  EXPECT_FALSE(s.has_next_pid());
  EXPECT_FALSE(s.has_next_prio());
  EXPECT_EQ(translator_->stats().unreadable_fields, 5u);
}

TEST_F(EventTranslatorTest, HostileDataLocIsLeftOut) {
  auto fork_record = RecordBuilder(Format("sched", "sched_process_fork"))
                         .SetInt("common_pid", 10)
                         .SetString("parent_comm", "ok")
                         .SetString("child_comm", "child")
                         .SetInt("child_pid", 11)
                         .Build();
  // child_comm's __data_loc (at 16) points far past the record.
  const uint32_t bad = 0xfff0u | (64u << 16);
  memcpy(fork_record.data() + 16, &bad, 4);
  const pb::FtraceEventBundle bundle = Translate({fork_record});
  ASSERT_EQ(bundle.event_size(), 1);
  const auto& f = bundle.event(0).sched_process_fork();
  EXPECT_EQ(f.parent_comm(), "ok");
  EXPECT_FALSE(f.has_child_comm());
  EXPECT_EQ(f.child_pid(), 11);
  EXPECT_EQ(translator_->stats().unreadable_fields, 1u);
}

TEST_F(EventTranslatorTest, BundleOfPagesWithLoss) {
  const EventFormat& sw = Format("sched", "sched_switch");
  std::vector<uint8_t> pages;
  for (int i = 0; i < 3; i++) {
    PageBuilder page;
    page.SetTimestamp(1000000u * static_cast<unsigned>(i + 1));
    if (i == 1)
      page.SetLost(true, 17);
    for (int j = 0; j < 4; j++)
      page.AddEvent(1,
                    RecordBuilder(sw).SetInt("next_pid", i * 10 + j).Build());
    const auto bytes = page.Build();
    pages.insert(pages.end(), bytes.begin(), bytes.end());
  }
  BundleResult result;
  pb::FtraceEventBundle bundle;
  ASSERT_TRUE(CaptureBundle(
      [&](FtraceEventBundleWriter* b) {
        result = translator_->WriteBundle(7, pages.data(), 3, 4096, b);
      },
      &bundle));
  EXPECT_EQ(result.pages, 3u);
  EXPECT_EQ(result.events, 12u);
  EXPECT_TRUE(result.lost_events);
  EXPECT_EQ(result.lost_count_stored, 17u);
  EXPECT_FALSE(result.lost_count_unknown);
  EXPECT_EQ(result.corrupt_pages, 0u);
  EXPECT_EQ(bundle.cpu(), 7u);
  EXPECT_TRUE(bundle.lost_events());
  ASSERT_EQ(bundle.event_size(), 12);
  for (int i = 0; i < 12; i++) {
    EXPECT_EQ(bundle.event(i).sched_switch().next_pid(), (i / 4) * 10 + i % 4);
    EXPECT_EQ(bundle.event(i).timestamp(),
              1000000u * static_cast<unsigned>(i / 4 + 1) +
                  static_cast<unsigned>(i % 4 + 1));
  }
  EXPECT_EQ(translator_->stats().pages_with_loss, 1u);
  EXPECT_EQ(translator_->stats().lost_events_stored, 17u);
}

TEST_F(EventTranslatorTest, LossWithoutACountIsUnknown) {
  const auto bytes = PageBuilder().SetLost(false, 0).Build();
  BundleResult result;
  pb::FtraceEventBundle bundle;
  ASSERT_TRUE(CaptureBundle(
      [&](FtraceEventBundleWriter* b) {
        result = translator_->WriteBundle(0, bytes.data(), 1, 4096, b);
      },
      &bundle));
  EXPECT_TRUE(bundle.lost_events());
  EXPECT_TRUE(result.lost_count_unknown);
  EXPECT_EQ(result.lost_count_stored, 0u);
}

TEST_F(EventTranslatorTest, CorruptPagesBecomeErrorEntries) {
  const EventFormat& print = Format("ftrace", "print");
  std::vector<uint8_t> pages;
  auto append = [&](const std::vector<uint8_t>& p) {
    pages.insert(pages.end(), p.begin(), p.end());
  };
  append(PageBuilder()
             .SetTimestamp(100)
             .AddEvent(1, RecordBuilder(print).SetString("buf", "a").Build())
             .Build());
  // An impossible data length.
  append(PageBuilder().SetTimestamp(200).OverrideCommit(5000).Build());
  // One good event, then a cut time extend.
  append(PageBuilder()
             .SetTimestamp(300)
             .AddEvent(4, RecordBuilder(print).SetString("buf", "b").Build())
             .AddWord(30u)
             .Build());
  BundleResult result;
  pb::FtraceEventBundle bundle;
  ASSERT_TRUE(CaptureBundle(
      [&](FtraceEventBundleWriter* b) {
        result = translator_->WriteBundle(1, pages.data(), 3, 4096, b);
      },
      &bundle));
  EXPECT_EQ(result.corrupt_pages, 2u);
  EXPECT_EQ(result.events, 2u);
  EXPECT_FALSE(bundle.has_lost_events());
  ASSERT_EQ(bundle.event_size(), 2);
  EXPECT_EQ(bundle.event(0).print().buf(), "a");
  EXPECT_EQ(bundle.event(1).print().buf(), "b");
  ASSERT_EQ(bundle.error_size(), 2);
  EXPECT_EQ(bundle.error(0).timestamp(), 200u);
  EXPECT_EQ(bundle.error(0).status(),
            pb::FTRACE_STATUS_ABI_INVALID_PAGE_HEADER);
  EXPECT_EQ(bundle.error(1).timestamp(), 304u);
  EXPECT_EQ(bundle.error(1).status(), pb::FTRACE_STATUS_ABI_SHORT_TIME_EXTEND);
  EXPECT_EQ(translator_->stats().corrupt_pages, 2u);
}

TEST_F(EventTranslatorTest, ParseStatusesArePerfettos) {
  EXPECT_EQ(static_cast<int>(ParseStatusFor(PageError::kShortPage)),
            pb::FTRACE_STATUS_PARTIAL_PAGE_READ);
  EXPECT_EQ(static_cast<int>(ParseStatusFor(PageError::kZeroDataLength)),
            pb::FTRACE_STATUS_ABI_ZERO_DATA_LENGTH);
  EXPECT_EQ(static_cast<int>(ParseStatusFor(PageError::kTimeOverflow)),
            pb::FTRACE_STATUS_INVALID_EVENT);
  for (int e = 1; e <= static_cast<int>(PageError::kTimeOverflow); e++) {
    const int status =
        static_cast<int>(ParseStatusFor(static_cast<PageError>(e)));
    EXPECT_TRUE(pb::FtraceParseStatus_IsValid(status));
    EXPECT_GT(status, pb::FTRACE_STATUS_OK);
  }
}

TEST(FtraceStatsTest, CpuStatsAsFtraceCpuStats) {
  CpuStats stats;
  stats.entries = 11;
  stats.overrun = 22;
  stats.commit_overrun = 3;
  stats.bytes = 4096;
  stats.oldest_event_ts = 12.5;
  stats.now_ts = 13.25;
  stats.dropped_events = 4;
  stats.read_events = 55;
  pb::FtraceStats out;
  ASSERT_TRUE(test::CaptureStats(
      [&](test::FtraceStatsWriter* w) {
        w->set_phase(
            perfetto::protos::rtzero::FtraceStats::Phase::END_OF_TRACE);
        perfetto::protos::rtzero::FtraceCpuStats cpu = w->add_cpu_stats();
        WriteCpuStats(3, stats, &cpu);
      },
      &out));
  EXPECT_EQ(out.phase(), pb::FtraceStats::END_OF_TRACE);
  ASSERT_EQ(out.cpu_stats_size(), 1);
  const pb::FtraceCpuStats& c = out.cpu_stats(0);
  EXPECT_EQ(c.cpu(), 3u);
  EXPECT_EQ(c.entries(), 11u);
  EXPECT_EQ(c.overrun(), 22u);
  EXPECT_EQ(c.commit_overrun(), 3u);
  EXPECT_EQ(c.bytes_read(), 4096u);
  EXPECT_EQ(c.oldest_event_ts(), 12.5);
  EXPECT_EQ(c.now_ts(), 13.25);
  EXPECT_EQ(c.dropped_events(), 4u);
  EXPECT_EQ(c.read_events(), 55u);
}

// The numbers a Perfetto reader relies on (perfetto's trace_packet.proto,
// ftrace_event.proto, ftrace_event_bundle.proto, ftrace_config.proto).
TEST(FtraceProtoTest, FieldNumbersArePerfettos) {
  EXPECT_EQ(pb::TracePacket::kFtraceEventsFieldNumber, 1);
  EXPECT_EQ(pb::TracePacket::kFtraceStatsFieldNumber, 34);
  EXPECT_EQ(pb::FtraceEventBundle::kCpuFieldNumber, 1);
  EXPECT_EQ(pb::FtraceEventBundle::kEventFieldNumber, 2);
  EXPECT_EQ(pb::FtraceEventBundle::kLostEventsFieldNumber, 3);
  EXPECT_EQ(pb::FtraceEventBundle::kCompactSchedFieldNumber, 4);
  EXPECT_EQ(pb::FtraceEventBundle::kErrorFieldNumber, 8);
  EXPECT_EQ(pb::FtraceEvent::kTimestampFieldNumber, 1);
  EXPECT_EQ(pb::FtraceEvent::kPidFieldNumber, 2);
  EXPECT_EQ(pb::FtraceEvent::kPrintFieldNumber, 3);
  EXPECT_EQ(pb::FtraceEvent::kSchedSwitchFieldNumber, 4);
  EXPECT_EQ(pb::FtraceEvent::kSchedWakingFieldNumber, 20);
  EXPECT_EQ(pb::FtraceEvent::kTaskNewtaskFieldNumber, 235);
  EXPECT_EQ(pb::FtraceEvent::kTaskRenameFieldNumber, 236);
  EXPECT_EQ(pb::FtraceEvent::kSchedProcessExitFieldNumber, 238);
  EXPECT_EQ(pb::FtraceEvent::kSchedProcessForkFieldNumber, 239);
  EXPECT_EQ(pb::FtraceEvent::kSchedProcessFreeFieldNumber, 240);
  EXPECT_EQ(pb::FtraceEvent::kGenericFieldNumber, 327);
  EXPECT_EQ(pb::FtraceConfig::kFtraceEventsFieldNumber, 1);
  EXPECT_EQ(pb::FtraceConfig::kBufferSizeKbFieldNumber, 10);
  EXPECT_EQ(pb::FtraceConfig::kDrainPeriodMsFieldNumber, 11);
  EXPECT_EQ(pb::FtraceConfig::kCompactSchedFieldNumber, 12);
}

}  // namespace
}  // namespace ftrace
}  // namespace ringtrace
