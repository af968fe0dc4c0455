/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// compact_sched: the same pages translated in full and in compact form,
// the compact columns decoded through libprotobuf (as trace_processor
// reads them: timestamps summed per kind, comms through intern_table) and
// compared event by event with the full form.

#include "src/traced_probes/ftrace/compact_sched.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "src/traced_probes/ftrace/event_translator.h"
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

// One sched event as both forms can say it.
struct Switch {
  uint64_t ts;
  int64_t prev_state;
  int32_t next_pid;
  int32_t next_prio;
  std::string next_comm;
  bool operator==(const Switch& o) const {
    return ts == o.ts && prev_state == o.prev_state && next_pid == o.next_pid &&
           next_prio == o.next_prio && next_comm == o.next_comm;
  }
};
struct Waking {
  uint64_t ts;
  int32_t pid;
  int32_t target_cpu;
  int32_t prio;
  std::string comm;
  uint32_t flags;
  bool operator==(const Waking& o) const {
    return ts == o.ts && pid == o.pid && target_cpu == o.target_cpu &&
           prio == o.prio && comm == o.comm && flags == o.flags;
  }
};

std::ostream& operator<<(std::ostream& os, const Switch& s) {
  return os << "switch{" << s.ts << " " << s.prev_state << " " << s.next_pid
            << " " << s.next_prio << " " << s.next_comm << "}";
}
std::ostream& operator<<(std::ostream& os, const Waking& w) {
  return os << "waking{" << w.ts << " " << w.pid << " " << w.target_cpu << " "
            << w.prio << " " << w.comm << " " << w.flags << "}";
}

// The compact columns as trace_processor reads them. Fails the test when
// the columns of a kind differ in length or an index is past the table.
void DecodeCompact(const pb::FtraceEventBundle::CompactSched& c,
                   std::vector<Switch>* switches,
                   std::vector<Waking>* wakings) {
  const int n = c.switch_timestamp_size();
  ASSERT_EQ(c.switch_prev_state_size(), n);
  ASSERT_EQ(c.switch_next_pid_size(), n);
  ASSERT_EQ(c.switch_next_prio_size(), n);
  ASSERT_EQ(c.switch_next_comm_index_size(), n);
  uint64_t ts = 0;
  for (int i = 0; i < n; i++) {
    ts += c.switch_timestamp(i);
    const uint32_t comm = c.switch_next_comm_index(i);
    ASSERT_LT(comm, static_cast<uint32_t>(c.intern_table_size()));
    switches->push_back({ts, c.switch_prev_state(i), c.switch_next_pid(i),
                         c.switch_next_prio(i), c.intern_table(comm)});
  }
  const int m = c.waking_timestamp_size();
  ASSERT_EQ(c.waking_pid_size(), m);
  ASSERT_EQ(c.waking_target_cpu_size(), m);
  ASSERT_EQ(c.waking_prio_size(), m);
  ASSERT_EQ(c.waking_comm_index_size(), m);
  ASSERT_EQ(c.waking_common_flags_size(), m);
  ts = 0;
  for (int i = 0; i < m; i++) {
    ts += c.waking_timestamp(i);
    const uint32_t comm = c.waking_comm_index(i);
    ASSERT_LT(comm, static_cast<uint32_t>(c.intern_table_size()));
    wakings->push_back({ts, c.waking_pid(i), c.waking_target_cpu(i),
                        c.waking_prio(i), c.intern_table(comm),
                        c.waking_common_flags(i)});
  }
}

class CompactSchedTest : public ::testing::Test {
 protected:
  CompactSchedTest() {
    for (const auto& [text, group] :
         std::vector<std::pair<const char*, const char*>>{
             {test::kSchedSwitchFormat, "sched"},
             {test::kSchedWakingFormat, "sched"},
             {test::kPrintFormat, "ftrace"}}) {
      base::Status s = table_.Add(ParseFormatOrDie(text, group));
      EXPECT_TRUE(s.ok()) << s.message();
    }
  }

  const EventFormat& Format(const char* group, const char* name) {
    const EventFormat* f = table_.FindByName(group, name);
    RT_CHECK(f);
    return *f;
  }

  std::vector<uint8_t> SwitchRecord(int32_t prev_pid,
                                    int64_t prev_state,
                                    int32_t next_pid,
                                    int32_t next_prio,
                                    const std::string& next_comm) {
    return RecordBuilder(Format("sched", "sched_switch"))
        .SetInt("common_pid", prev_pid)
        .SetString("prev_comm", "prev")
        .SetInt("prev_pid", prev_pid)
        .SetInt("prev_prio", 120)
        .SetInt("prev_state", prev_state)
        .SetString("next_comm", next_comm)
        .SetInt("next_pid", next_pid)
        .SetInt("next_prio", next_prio)
        .Build();
  }

  std::vector<uint8_t> WakingRecord(int32_t pid,
                                    int32_t target_cpu,
                                    int32_t prio,
                                    const std::string& comm,
                                    uint8_t flags) {
    return RecordBuilder(Format("sched", "sched_waking"))
        .SetInt("common_pid", 1)
        .SetInt("common_flags", flags)
        .SetString("comm", comm)
        .SetInt("pid", pid)
        .SetInt("prio", prio)
        .SetInt("target_cpu", target_cpu)
        .Build();
  }

  // |pages| translated as one bundle of cpu 1, with or without compact.
  pb::FtraceEventBundle Translate(
      const std::vector<std::vector<uint8_t>>& pages,
      bool compact,
      BundleResult* result = nullptr) {
    std::vector<uint8_t> bytes;
    for (const auto& p : pages)
      bytes.insert(bytes.end(), p.begin(), p.end());
    EventTranslator translator(&table_, HeaderPage());
    translator.SetCompactSched(compact);
    pb::FtraceEventBundle bundle;
    BundleResult r;
    EXPECT_TRUE(CaptureBundle(
        [&](FtraceEventBundleWriter* b) {
          r = translator.WriteBundle(1, bytes.data(), pages.size(), 4096, b);
        },
        &bundle));
    stats_ = translator.stats();
    if (result)
      *result = r;
    return bundle;
  }

  EventFormatTable table_;
  TranslatorStats stats_;
};

TEST_F(CompactSchedTest, ColumnsSayWhatTheFullEventsSay) {
  // Two pages of switches and wakings among a few comms, and a print that
  // stays an FtraceEvent.
  const std::vector<std::string> comms = {"swapper/0", "writer", "kworker/0:1",
                                          "writer", "a_very_long_comm_name"};
  std::vector<std::vector<uint8_t>> pages;
  for (int p = 0; p < 2; p++) {
    PageBuilder page;
    page.SetTimestamp(1000000 + p * 50000);
    for (int i = 0; i < 20; i++) {
      const std::string& comm = comms[(i + p) % comms.size()];
      page.AddEvent(100 + i, SwitchRecord(10 + i, i % 3 == 0 ? 0x100 : 1,
                                          20 + i, 100 + i % 40, comm));
      page.AddEvent(7, WakingRecord(30 + i, i % 2, 120, comm,
                                    static_cast<uint8_t>(i % 4)));
    }
    page.AddEvent(3, RecordBuilder(Format("ftrace", "print"))
                         .SetInt("common_pid", 99)
                         .SetString("buf", "B|99|slice")
                         .Build());
    pages.push_back(page.Build());
  }

  const pb::FtraceEventBundle full = Translate(pages, /*compact=*/false);
  std::vector<Switch> want_switches;
  std::vector<Waking> want_wakings;
  size_t prints = 0;
  for (const pb::FtraceEvent& e : full.event()) {
    if (e.has_sched_switch()) {
      const auto& s = e.sched_switch();
      want_switches.push_back({e.timestamp(), s.prev_state(), s.next_pid(),
                               s.next_prio(), s.next_comm()});
    } else if (e.has_sched_waking()) {
      const auto& w = e.sched_waking();
      // The full form has no common_flags; the records' are i % 4.
      want_wakings.push_back(
          {e.timestamp(), w.pid(), w.target_cpu(), w.prio(), w.comm(), 0});
    } else {
      prints++;
    }
  }
  ASSERT_EQ(want_switches.size(), 40u);
  ASSERT_EQ(want_wakings.size(), 40u);
  for (size_t i = 0; i < want_wakings.size(); i++)
    want_wakings[i].flags = static_cast<uint32_t>(i % 20 % 4);

  BundleResult result;
  const pb::FtraceEventBundle compact =
      Translate(pages, /*compact=*/true, &result);
  EXPECT_EQ(compact.cpu(), 1u);
  ASSERT_TRUE(compact.has_compact_sched());
  EXPECT_EQ(result.compact_events, 80u);
  EXPECT_EQ(result.events, 2u);
  EXPECT_EQ(stats_.compact_switches, 40u);
  EXPECT_EQ(stats_.compact_wakings, 40u);
  EXPECT_EQ(stats_.events, 2u);
  // Only the prints stay events.
  ASSERT_EQ(compact.event_size(), 2);
  EXPECT_EQ(prints, 2u);
  for (const pb::FtraceEvent& e : compact.event())
    EXPECT_TRUE(e.has_print());

  const auto& c = compact.compact_sched();
  // Each comm once ("writer" twice in the list), truncated as the record
  // holds it.
  EXPECT_EQ(c.intern_table_size(), 4);
  EXPECT_EQ(
      std::set<std::string>(c.intern_table().begin(), c.intern_table().end())
          .size(),
      4u);
  std::vector<Switch> switches;
  std::vector<Waking> wakings;
  DecodeCompact(c, &switches, &wakings);
  EXPECT_EQ(switches, want_switches);
  EXPECT_EQ(wakings, want_wakings);
  // The dense form is the point: fewer bytes than the full one.
  EXPECT_LT(compact.ByteSizeLong() * 2, full.ByteSizeLong());
}

TEST_F(CompactSchedTest, ARecordThatDoesNotFitIsWrittenInFull) {
  PageBuilder page;
  page.SetTimestamp(5000);
  page.AddEvent(10, SwitchRecord(1, 1, 2, 120, "two"));
  // Cut before next_pid: the compact form cannot hold it.
  std::vector<uint8_t> cut = SwitchRecord(2, 1, 3, 120, "three");
  const FormatField* next_pid =
      Format("sched", "sched_switch").FindField("next_pid");
  ASSERT_TRUE(next_pid);
  cut.resize(next_pid->offset);
  page.AddEvent(10, cut);
  page.AddEvent(10, SwitchRecord(3, 0, 4, 120, "four"));
  BundleResult result;
  const pb::FtraceEventBundle bundle =
      Translate({page.Build()}, /*compact=*/true, &result);
  EXPECT_EQ(result.compact_events, 2u);
  EXPECT_EQ(result.events, 1u);
  ASSERT_EQ(bundle.event_size(), 1);
  ASSERT_TRUE(bundle.event(0).has_sched_switch());
  EXPECT_EQ(bundle.event(0).sched_switch().prev_pid(), 2);
  EXPECT_FALSE(bundle.event(0).sched_switch().has_next_pid());
  EXPECT_EQ(bundle.event(0).timestamp(), 5020u);
  std::vector<Switch> switches;
  std::vector<Waking> wakings;
  DecodeCompact(bundle.compact_sched(), &switches, &wakings);
  ASSERT_EQ(switches.size(), 2u);
  EXPECT_EQ(switches[0], (Switch{5010, 1, 2, 120, "two"}));
  EXPECT_EQ(switches[1], (Switch{5030, 0, 4, 120, "four"}));
  EXPECT_TRUE(wakings.empty());
  EXPECT_EQ(bundle.compact_sched().waking_timestamp_size(), 0);
}

TEST_F(CompactSchedTest, NoSchedEventsNoCompactSched) {
  PageBuilder page;
  page.SetTimestamp(1);
  page.AddEvent(1, RecordBuilder(Format("ftrace", "print"))
                       .SetInt("common_pid", 5)
                       .SetString("buf", "x")
                       .Build());
  const pb::FtraceEventBundle bundle = Translate({page.Build()}, true);
  EXPECT_FALSE(bundle.has_compact_sched());
  EXPECT_EQ(bundle.event_size(), 1);
}

// A kernel whose sched_switch lacks a field of the compact form: switches
// stay FtraceEvents (wakings are still compact).
TEST_F(CompactSchedTest, AFormatWithoutACompactFieldIsNotCompacted) {
  EventFormatTable table;
  ASSERT_TRUE(table
                  .Add(ParseFormatOrDie(
                      "name: sched_switch\nID: 372\nformat:\n"
                      "\tfield:unsigned short common_type;\toffset:0;\tsize:2;"
                      "\tsigned:0;\n"
                      "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;"
                      "\n\n"
                      "\tfield:pid_t prev_pid;\toffset:8;\tsize:4;\tsigned:1;"
                      "\n"
                      "\tfield:pid_t next_pid;\toffset:12;\tsize:4;\tsigned:1;"
                      "\n",
                      "sched"))
                  .ok());
  ASSERT_TRUE(
      table.Add(ParseFormatOrDie(test::kSchedWakingFormat, "sched")).ok());
  EventTranslator translator(&table, HeaderPage());
  translator.SetCompactSched(true);
  EXPECT_FALSE(translator.compact_switch());
  EXPECT_TRUE(translator.compact_waking());
  translator.SetCompactSched(false);
  EXPECT_FALSE(translator.compact_waking());
}

// Times that go back (a corrupt page) wrap in the unsigned deltas and come
// back whole in the reader's unsigned sum.
TEST(CompactSchedBufferTest, DeltasWrapBackToTheTimes) {
  CompactSchedBuffer buffer;
  const uint64_t times[] = {1000, 500, ~uint64_t{0}, 0, 42};
  for (uint64_t t : times)
    buffer.AddSwitch(t, 0, 1, 120, "a");
  buffer.AddWaking(7, 2, 0, 120, "b", 1);
  EXPECT_EQ(buffer.switches(), 5u);
  EXPECT_EQ(buffer.wakings(), 1u);
  EXPECT_EQ(buffer.interned(), 2u);
  pb::FtraceEventBundle bundle;
  ASSERT_TRUE(CaptureBundle(
      [&](FtraceEventBundleWriter* b) { buffer.WriteTo(b); }, &bundle));
  std::vector<Switch> switches;
  std::vector<Waking> wakings;
  DecodeCompact(bundle.compact_sched(), &switches, &wakings);
  ASSERT_EQ(switches.size(), 5u);
  for (size_t i = 0; i < 5; i++)
    EXPECT_EQ(switches[i].ts, times[i]);
  ASSERT_EQ(wakings.size(), 1u);
  EXPECT_EQ(wakings[0], (Waking{7, 2, 0, 120, "b", 1}));

  buffer.Reset();
  EXPECT_TRUE(buffer.empty());
  EXPECT_EQ(buffer.interned(), 0u);
  buffer.AddSwitch(9, 0, 1, 120, "c");
  ASSERT_TRUE(CaptureBundle(
      [&](FtraceEventBundleWriter* b) { buffer.WriteTo(b); }, &bundle));
  switches.clear();
  wakings.clear();
  DecodeCompact(bundle.compact_sched(), &switches, &wakings);
  ASSERT_EQ(switches.size(), 1u);
  EXPECT_EQ(switches[0], (Switch{9, 0, 1, 120, "c"}));
  EXPECT_EQ(bundle.compact_sched().intern_table_size(), 1);
}

}  // namespace
}  // namespace ftrace
}  // namespace ringtrace
