/*
 * Copyright (C) 2026 The ringtrace authors.
 */
#include "src/tracing/service/traced/session_start_warnings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"

namespace ringtrace {
namespace traced {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

SessionConfig::DataSource Ds(const std::string& name,
                             std::vector<std::string> filter = {}) {
  SessionConfig::DataSource ds;
  ds.name = name;
  ds.producer_name_filter = std::move(filter);
  return ds;
}

TEST(SessionStartWarningsTest, StartedDataSourcesAreNotMentioned) {
  SessionConfig config;
  config.data_sources = {Ds("track_event")};
  EXPECT_THAT(
      UnstartedDataSourceWarnings(config, {true}, {{"app", {"track_event"}}}),
      IsEmpty());
}

TEST(SessionStartWarningsTest, DataSourceNobodyProvides) {
  SessionConfig config;
  config.data_sources = {Ds("track_event"), Ds("linux.process_stats")};
  EXPECT_THAT(
      UnstartedDataSourceWarnings(config, {true, false},
                                  {{"app", {"track_event"}}}),
      ElementsAre("data source \"linux.process_stats\": no connected producer "
                  "provides it (it starts on any producer that registers it "
                  "during the session)"));
}

TEST(SessionStartWarningsTest, FilterExcludingEveryProviderIsNamed) {
  SessionConfig config;
  config.data_sources = {Ds("track_event", {"other_app"})};
  const std::vector<std::string> one = UnstartedDataSourceWarnings(
      config, {false}, {{"app", {"track_event"}}, {"x", {"gpu"}}});
  EXPECT_THAT(one, ElementsAre("data source \"track_event\": "
                               "producer_name_filter excludes the producer "
                               "that provides it (\"app\")"));
  std::vector<ProducerOffer> many;
  for (int i = 0; i < 6; ++i)
    many.push_back({"app" + std::to_string(i), {"track_event"}});
  const std::vector<std::string> six =
      UnstartedDataSourceWarnings(config, {false}, many);
  ASSERT_EQ(six.size(), 1u);
  EXPECT_THAT(six[0], HasSubstr("excludes every producer that provides it "
                                "(\"app0\", \"app1\", \"app2\", \"app3\" and "
                                "2 more)"));
}

TEST(SessionStartWarningsTest, ManyUnstartedAreSummedUp) {
  SessionConfig config;
  for (size_t i = 0; i < kMaxStartWarnings + 4; ++i)
    config.data_sources.push_back(Ds("ds" + std::to_string(i)));
  const std::vector<bool> started(config.data_sources.size(), false);
  const std::vector<std::string> w =
      UnstartedDataSourceWarnings(config, started, {});
  ASSERT_EQ(w.size(), kMaxStartWarnings);
  EXPECT_THAT(w[0], HasSubstr("\"ds0\""));
  EXPECT_THAT(w[kMaxStartWarnings - 2],
              HasSubstr("\"ds" + std::to_string(kMaxStartWarnings - 2) + "\""));
  EXPECT_EQ(w.back(), "5 more data sources: no connected producer serves them");
}

ipc::CategoryDescriptor Cat(const std::string& name,
                            std::vector<std::string> tags = {}) {
  ipc::CategoryDescriptor c;
  c.name = name;
  c.tags = std::move(tags);
  return c;
}

ProducerOffer App(const std::string& name,
                  std::vector<ipc::CategoryDescriptor> categories) {
  ProducerOffer p;
  p.name = name;
  p.data_sources = {"track_event"};
  p.categories = {std::move(categories)};
  return p;
}

TEST(SessionStartWarningsTest, EnabledPatternsNothingDeclaredMatches) {
  SessionConfig config;
  config.data_sources = {Ds("track_event")};
  config.data_sources[0].enabled_categories = {"gfx", "exampel", "io*", "net*",
                                               "*"};
  config.data_sources[0].enabled_tags = {"slow", "gpu"};
  const std::vector<ProducerOffer> producers = {
      App("a", {Cat("gfx"), Cat("io.disk", {"slow"})}), App("b", {Cat("gfx")})};
  EXPECT_THAT(
      UndeclaredCategoryWarnings(config, producers),
      ElementsAre("data source \"track_event\": enabled_categories "
                  "\"exampel\" matches no category the connected producers "
                  "declare (\"gfx\", \"io.disk\")",
                  "data source \"track_event\": enabled_categories \"net*\" "
                  "matches no category the connected producers declare "
                  "(\"gfx\", \"io.disk\")",
                  "data source \"track_event\": enabled_tags \"gpu\" matches "
                  "no tag of a category the connected producers declare "
                  "(\"gfx\", \"io.disk\")"));
}

TEST(SessionStartWarningsTest, NoCategoryWarningWithoutEveryDeclaration) {
  SessionConfig config;
  config.data_sources = {Ds("track_event")};
  config.data_sources[0].enabled_categories = {"exampel"};
  // One serving producer declared nothing: it may record any name.
  EXPECT_THAT(UndeclaredCategoryWarnings(
                  config, {App("a", {Cat("gfx")}), App("quiet", {})}),
              IsEmpty());
  // Nobody serves it: the unstarted data source says so instead.
  EXPECT_THAT(UndeclaredCategoryWarnings(config, {}), IsEmpty());
  // The filter keeps the silent one out: the declared names decide.
  config.data_sources[0].producer_name_filter = {"a"};
  EXPECT_EQ(UndeclaredCategoryWarnings(
                config, {App("a", {Cat("gfx")}), App("quiet", {})})
                .size(),
            1u);
  // No lists (Perfetto's default rule): nothing to check.
  SessionConfig plain;
  plain.data_sources = {Ds("track_event")};
  EXPECT_THAT(UndeclaredCategoryWarnings(plain, {App("a", {Cat("gfx")})}),
              IsEmpty());
}

using perfetto::protos::DataSourceConfig;
using perfetto::protos::ProcessStatsConfig;

constexpr char kTaskRenameWarning[] =
    "data source \"linux.process_stats\": it describes processes on demand, "
    "but no linux.ftrace data source of this session records "
    "task/task_rename: a process first seen between its fork and its exec "
    "keeps its parent's command line in the trace; add "
    "\"task/task_rename\" to ftrace_events";

// A data source of |name| whose config holds |parsed|, serialized.
SessionConfig::DataSource WithConfig(const std::string& name,
                                     DataSourceConfig parsed) {
  SessionConfig::DataSource ds = Ds(name);
  parsed.set_name(name);
  EXPECT_TRUE(parsed.SerializeToString(&ds.config));
  return ds;
}

SessionConfig::DataSource ProcessStats(
    bool scan_all,
    std::vector<ProcessStatsConfig::Quirks> quirks = {}) {
  DataSourceConfig parsed;
  ProcessStatsConfig* ps = parsed.mutable_process_stats_config();
  ps->set_scan_all_processes_on_start(scan_all);
  ps->set_proc_stats_poll_ms(1000);
  for (ProcessStatsConfig::Quirks q : quirks)
    ps->add_quirks(q);
  return WithConfig("linux.process_stats", std::move(parsed));
}

SessionConfig::DataSource Ftrace(std::vector<std::string> events) {
  DataSourceConfig parsed;
  for (const std::string& e : events)
    parsed.mutable_ftrace_config()->add_ftrace_events(e);
  return WithConfig("linux.ftrace", std::move(parsed));
}

TEST(SessionStartWarningsTest, OnDemandWithoutTaskRenameWarns) {
  SessionConfig config;
  config.data_sources = {Ds("track_event"), ProcessStats(true),
                         Ftrace({"sched/sched_switch", "task/task_newtask"})};
  EXPECT_THAT(TaskRenameWarnings(config), ElementsAre(kTaskRenameWarning));
  // One line however many of each there are.
  config.data_sources.push_back(ProcessStats(true));
  config.data_sources.push_back(Ftrace({}));
  EXPECT_THAT(TaskRenameWarnings(config), ElementsAre(kTaskRenameWarning));
  // A linux.ftrace with no ftrace_config at all enables no event.
  SessionConfig bare;
  bare.data_sources = {ProcessStats(true), Ds("linux.ftrace")};
  EXPECT_THAT(TaskRenameWarnings(bare), ElementsAre(kTaskRenameWarning));
  // Only DISABLE_ON_DEMAND turns the descriptions off.
  SessionConfig other_quirk;
  other_quirk.data_sources = {
      ProcessStats(true, {ProcessStatsConfig::DISABLE_INITIAL_DUMP}),
      Ftrace({"sched/sched_switch"})};
  EXPECT_THAT(TaskRenameWarnings(other_quirk), ElementsAre(kTaskRenameWarning));
}

TEST(SessionStartWarningsTest, TaskRenameEnabledBySpellingsFtraceAccepts) {
  for (const char* entry : {"task/task_rename", "task/*"}) {
    SCOPED_TRACE(entry);
    SessionConfig config;
    // In any linux.ftrace of the session, not only the first.
    config.data_sources = {ProcessStats(true), Ftrace({"sched/sched_switch"}),
                           Ftrace({"sched/sched_waking", entry})};
    EXPECT_THAT(TaskRenameWarnings(config), IsEmpty());
  }
  // Entries FtraceSource::EnableEvents() does not read as task_rename: a
  // bare name (not group/name), a partial glob, another group's glob, a
  // different case, a stray space.
  for (const char* entry :
       {"task_rename", "task/task_*", "*/task_rename", "sched/*",
        "Task/task_rename", "task/task_rename ", "task/", "task"}) {
    SCOPED_TRACE(entry);
    SessionConfig config;
    config.data_sources = {ProcessStats(true), Ftrace({entry})};
    EXPECT_THAT(TaskRenameWarnings(config), ElementsAre(kTaskRenameWarning));
  }
}

TEST(SessionStartWarningsTest, NoTaskRenameWarningWithoutOnDemandAndFtrace) {
  const SessionConfig::DataSource ftrace = Ftrace({"sched/sched_switch"});
  SessionConfig config;
  // The quirk turns on-demand descriptions off, even beside another quirk.
  config.data_sources = {
      ProcessStats(true, {ProcessStatsConfig::DISABLE_INITIAL_DUMP,
                          ProcessStatsConfig::DISABLE_ON_DEMAND}),
      ftrace};
  EXPECT_THAT(TaskRenameWarnings(config), IsEmpty());
  // No scan: no on-demand descriptions (and no ProcessTree at all).
  config.data_sources = {ProcessStats(false), ftrace};
  EXPECT_THAT(TaskRenameWarnings(config), IsEmpty());
  // No linux.ftrace in the session: nothing names a tid to describe.
  config.data_sources = {ProcessStats(true), Ds("track_event")};
  EXPECT_THAT(TaskRenameWarnings(config), IsEmpty());
  // No linux.process_stats.
  config.data_sources = {ftrace};
  EXPECT_THAT(TaskRenameWarnings(config), IsEmpty());
  // The options count only under their data source's name.
  SessionConfig::DataSource renamed = ProcessStats(true);
  renamed.name = "my.process_stats";
  config.data_sources = {renamed, ftrace};
  EXPECT_THAT(TaskRenameWarnings(config), IsEmpty());
  EXPECT_THAT(TaskRenameWarnings(SessionConfig()), IsEmpty());
}

TEST(SessionStartWarningsTest, MalformedConfigsGetNoTaskRenameWarning) {
  const SessionConfig::DataSource on_demand = ProcessStats(true);
  const SessionConfig::DataSource ftrace = Ftrace({"sched/sched_switch"});
  // Cut short inside its nested config, garbage, an overlong varint.
  std::vector<std::string> malformed = {
      on_demand.config.substr(0, on_demand.config.size() - 1),
      ftrace.config.substr(0, ftrace.config.size() - 1),
      std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11),
      std::string(64, '\x80'), std::string("\x00", 1)};
  for (size_t i = 0; i < malformed.size(); ++i) {
    SCOPED_TRACE(i);
    // A malformed linux.process_stats: it says nothing, though a
    // well-formed linux.ftrace without task_rename is there.
    SessionConfig config;
    config.data_sources = {on_demand, ftrace};
    config.data_sources[0].config = malformed[i];
    EXPECT_THAT(TaskRenameWarnings(config), IsEmpty());
    // A malformed linux.ftrace, the session's only one: no ftrace.
    config.data_sources = {on_demand, ftrace};
    config.data_sources[1].config = malformed[i];
    EXPECT_THAT(TaskRenameWarnings(config), IsEmpty());
  }
  // A malformed one beside well-formed ones does not hide them.
  SessionConfig config;
  config.data_sources = {on_demand, ftrace, ftrace};
  config.data_sources[1].config = "\xff";
  EXPECT_THAT(TaskRenameWarnings(config), ElementsAre(kTaskRenameWarning));
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
