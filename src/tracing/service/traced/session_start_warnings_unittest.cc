/*
 * Copyright (C) 2026 The ringtrace authors.
 */
#include "src/tracing/service/traced/session_start_warnings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

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

}  // namespace
}  // namespace traced
}  // namespace ringtrace
