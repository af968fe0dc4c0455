/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/declared_categories.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ringtrace {
namespace traced {
namespace {

ipc::CategoryDescriptor Cat(const std::string& name,
                            std::vector<std::string> tags = {},
                            const std::string& description = "") {
  ipc::CategoryDescriptor c;
  c.name = name;
  c.description = description;
  c.tags = std::move(tags);
  return c;
}

std::vector<std::string> Names(
    const std::vector<ipc::CategoryDescriptor>& categories) {
  std::vector<std::string> names;
  for (const ipc::CategoryDescriptor& c : categories)
    names.push_back(c.name);
  return names;
}

TEST(DeclaredCategoriesTest, AppendsPerProducerAndDataSourceInOrder) {
  DeclaredCategories d;
  ASSERT_TRUE(
      d.Add(1, "track_event", {Cat("gfx", {}, "Frames"), Cat("io")}).ok());
  ASSERT_TRUE(
      d.Add(1, "track_event", {Cat("gfx.debug", {"debug", "slow"})}).ok());
  ASSERT_TRUE(d.Add(1, "other", {Cat("gfx")}).ok());  // another data source
  ASSERT_TRUE(d.Add(2, "track_event", {Cat("gfx")}).ok());  // another producer
  EXPECT_EQ(Names(d.Of(1, "track_event")),
            (std::vector<std::string>{"gfx", "io", "gfx.debug"}));
  EXPECT_EQ(d.Of(1, "track_event")[0].description, "Frames");
  EXPECT_EQ(d.Of(1, "track_event")[2].tags,
            (std::vector<std::string>{"debug", "slow"}));
  EXPECT_EQ(Names(d.Of(1, "other")), (std::vector<std::string>{"gfx"}));
  EXPECT_EQ(d.CountOf(1), 4u);
  EXPECT_EQ(d.CountOf(2), 1u);
  EXPECT_TRUE(d.Of(3, "track_event").empty());
  EXPECT_TRUE(d.Of(1, "nothing").empty());

  d.RemoveProducer(1);
  EXPECT_TRUE(d.Of(1, "track_event").empty());
  EXPECT_EQ(d.CountOf(1), 0u);
  EXPECT_EQ(d.num_producers(), 1u);
  EXPECT_EQ(d.CountOf(2), 1u);
}

TEST(DeclaredCategoriesTest, RepeatedNamesAreRefusedAndNothingIsKept) {
  DeclaredCategories d;
  ASSERT_TRUE(d.Add(1, "track_event", {Cat("gfx")}).ok());
  // Declared before.
  base::Status s = d.Add(1, "track_event", {Cat("io"), Cat("gfx")});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("\"gfx\""), std::string::npos) << s.message();
  // Twice in one message.
  EXPECT_FALSE(d.Add(1, "track_event", {Cat("net"), Cat("net")}).ok());
  EXPECT_EQ(Names(d.Of(1, "track_event")), (std::vector<std::string>{"gfx"}));
  EXPECT_EQ(d.CountOf(1), 1u);
}

TEST(DeclaredCategoriesTest, AtMostTheLimitPerProducerInAllDataSources) {
  DeclaredCategories d;
  size_t n = 0;
  const size_t kLimit = ipc::kMaxDeclaredCategoriesPerProducer;
  while (n < kLimit) {
    std::vector<ipc::CategoryDescriptor> batch;
    for (size_t i = 0; i < ipc::kMaxCategoriesPerMessage && n < kLimit; i++)
      batch.push_back(Cat("c" + std::to_string(n++)));
    // Two data sources share the producer's allowance.
    ASSERT_TRUE(d.Add(1, n % 2 ? "a" : "b", batch).ok()) << n;
  }
  EXPECT_EQ(d.CountOf(1), kLimit);
  EXPECT_FALSE(d.Add(1, "a", {Cat("one.more")}).ok());
  EXPECT_FALSE(d.Add(1, "c", {Cat("one.more")}).ok());
  EXPECT_EQ(d.CountOf(1), kLimit);
  // Another producer has its own.
  EXPECT_TRUE(d.Add(2, "a", {Cat("one.more")}).ok());
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
