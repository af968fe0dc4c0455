/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/track_event/category_matching.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ringtrace {
namespace track_event {
namespace {

using V = std::vector<std::string>;

// One row: a config's four lists, a category (name and tags), and whether
// the config enables it.
struct Row {
  const char* why;
  V enabled_categories;
  V disabled_categories;
  V enabled_tags;
  V disabled_tags;
  const char* name;
  std::vector<const char*> tags;
  bool enabled;
};

Category MakeCategory(const char* name, const std::vector<const char*>& tags) {
  const Category c(name);
  switch (tags.size()) {
    case 0:
      return c;
    case 1:
      return c.SetTags(tags[0]);
    case 2:
      return c.SetTags(tags[0], tags[1]);
    case 3:
      return c.SetTags(tags[0], tags[1], tags[2]);
    default:
      return c.SetTags(tags[0], tags[1], tags[2], tags[3]);
  }
}

void Check(const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    CategoryConfig config;
    config.enabled_categories = row.enabled_categories;
    config.disabled_categories = row.disabled_categories;
    config.enabled_tags = row.enabled_tags;
    config.disabled_tags = row.disabled_tags;
    EXPECT_EQ(CategoryEnabledByConfig(MakeCategory(row.name, row.tags), config),
              row.enabled)
        << row.why << " (category " << row.name << ")";
  }
}

// Columns: why; enabled_categories, disabled_categories, enabled_tags,
// disabled_tags; the category's name and tags; enabled?
// clang-format off

// The examples of track_event_config.proto's comment, each with the
// categories that show what it does.
TEST(CategoryMatchingTest, TheExamplesOfTrackEventConfig) {
  Check({
      // "To enable all non-slow/debug categories: no configuration needed,
      // happens by default."
      {"no config", {}, {}, {}, {}, "gfx", {}, true},
      {"no config", {}, {}, {}, {}, "gfx", {"rendering"}, true},
      {"no config", {}, {}, {}, {}, "gfx.slow", {"slow"}, false},
      {"no config", {}, {}, {}, {}, "gfx.debug", {"debug"}, false},
      {"no config", {}, {}, {}, {}, "gfx.both", {"rendering", "debug"}, false},
      // "To enable a specific category: disabled_categories = ["*"],
      // enabled_categories = ["my_category"]."
      {"one category", {"my_category"}, {"*"}, {}, {}, "my_category", {}, true},
      {"one category", {"my_category"}, {"*"}, {}, {}, "other", {}, false},
      {"one category", {"my_category"}, {"*"}, {}, {}, "my_category2", {}, false},
      // Step 1 comes before step 4: named exactly, a slow one is on.
      {"one category", {"my_category"}, {"*"}, {}, {}, "my_category", {"slow"}, true},
      // "To enable only categories with a specific tag: disabled_tags =
      // ["*"], enabled_tags = ["my_tag"]."
      {"one tag", {}, {}, {"my_tag"}, {"*"}, "tagged", {"my_tag"}, true},
      {"one tag", {}, {}, {"my_tag"}, {"*"}, "tagged2", {"other", "my_tag"}, true},
      {"one tag", {}, {}, {"my_tag"}, {"*"}, "other_tag", {"other"}, false},
      // disabled_tags given: the default is replaced, and "*" covers slow.
      {"one tag", {}, {}, {"my_tag"}, {"*"}, "slow_one", {"slow"}, false},
      // A category without tags matches no step: enabled, the C++ SDK's
      // default (the example's "only" holds among tagged categories).
      {"one tag", {}, {}, {"my_tag"}, {"*"}, "untagged", {}, true},
  });
}

// Each of the eight steps deciding, in the rule's order: every row also
// matches a later step that would decide the other way.
TEST(CategoryMatchingTest, EachStepInOrder) {
  Check({
      {"1 exact enabled category", {"gfx"}, {"gfx"}, {}, {"t"}, "gfx", {"t"}, true},
      {"2 exact enabled tag", {}, {"gfx"}, {"t"}, {"t"}, "gfx", {"t"}, true},
      {"3 exact disabled category", {"gfx*"}, {"gfx"}, {"t*"}, {}, "gfx", {"t"}, false},
      {"4 exact disabled tag", {"gfx*"}, {}, {"t*"}, {"t"}, "gfx", {"t"}, false},
      {"5 enabled category pattern", {"gf*"}, {"g*"}, {}, {"t*"}, "gfx", {"t"}, true},
      {"6 enabled tag pattern", {}, {"g*"}, {"t*"}, {"*"}, "gfx", {"tag"}, true},
      {"7 disabled category pattern", {}, {"g*"}, {}, {"t*"}, "gfx", {"tag"}, false},
      {"8 disabled tag pattern", {}, {"x*"}, {"u*"}, {"t*"}, "gfx", {"tag"}, false},
      {"no step matches", {"io"}, {"net*"}, {"x"}, {"y*"}, "gfx", {"tag"}, true},
  });
}

// Exact entries of any list beat patterns of every list; a pattern never
// counts as an exact match.
TEST(CategoryMatchingTest, ExactMatchesBeatPatterns) {
  Check({
      {"exact enabled beats disabled *", {"gfx"}, {"*"}, {}, {}, "gfx", {}, true},
      {"exact disabled beats an enabled prefix", {"gfx*"}, {"gfx.debug"}, {}, {}, "gfx.debug", {}, false},
      {"the prefix still enables the rest", {"gfx*"}, {"gfx.debug"}, {}, {}, "gfx.draw", {}, true},
      {"exact disabled beats enabled *", {"*"}, {"io"}, {}, {}, "io", {}, false},
      {"exact enabled tag beats disabled *", {}, {"*"}, {"slow"}, {}, "gfx", {"slow"}, true},
      {"exact enabled tag beats an exact disabled category", {}, {"gfx"}, {"slow"}, {}, "gfx", {"slow"}, true},
      {"exact disabled category beats an enabled tag pattern", {}, {"gfx"}, {"s*"}, {}, "gfx", {"slow"}, false},
      // The default disabled tags are exact entries: "*" (a pattern) does
      // not enable slow or debug categories, nor does a tag pattern.
      {"default disabled tag beats enabled *", {"*"}, {}, {}, {}, "gfx", {"slow"}, false},
      {"default disabled tag beats an enabled tag pattern", {}, {}, {"sl*"}, {}, "gfx", {"slow"}, false},
      // A (dynamic) name holding the pattern's text: no exact match.
      {"a pattern never matches exactly", {}, {"gfx*"}, {"t*"}, {}, "gfx*", {"t"}, true},
      {"a prefix matches the bare prefix", {"gfx*"}, {"*"}, {}, {}, "gfx", {}, true},
      {"a prefix is a prefix, not a substring", {"fx*"}, {"*"}, {}, {}, "gfx", {}, false},
      {"a more specific disabled pattern loses", {"g*"}, {"gfx.*"}, {}, {}, "gfx.draw", {}, true},
      {"a more specific enabled pattern wins", {"gfx.*"}, {"g*"}, {}, {}, "gfx.draw", {}, true},
  });
}

TEST(CategoryMatchingTest, TheDefaultDisabledTagsAndLegacyNames) {
  Check({
      {"default: slow off", {}, {}, {}, {}, "a", {"slow"}, false},
      {"default: debug off", {}, {}, {}, {}, "a", {"debug"}, false},
      {"enabled_tags slow", {}, {}, {"slow"}, {}, "a", {"slow"}, true},
      {"enabled_tags slow, debug stays off", {}, {}, {"slow"}, {}, "a", {"debug"}, false},
      {"disabled_tags given replace the default", {}, {}, {}, {"debug"}, "a", {"slow"}, true},
      {"disabled_tags given replace the default", {}, {}, {}, {"debug"}, "a", {"debug"}, false},
      {"legacy name: slow by default", {}, {}, {}, {}, "disabled-by-default-gpu", {}, false},
      {"legacy name: on with enabled_tags slow", {}, {}, {"slow"}, {}, "disabled-by-default-gpu", {}, true},
      {"legacy name: on by name", {"disabled-by-default-gpu"}, {}, {}, {}, "disabled-by-default-gpu", {}, true},
      {"legacy name: enabled * is not enough", {"*"}, {}, {}, {}, "disabled-by-default-gpu", {}, false},
      {"legacy name: on without the slow default", {}, {}, {}, {"debug"}, "disabled-by-default-gpu", {}, true},
  });
}

// clang-format on

}  // namespace
}  // namespace track_event
}  // namespace ringtrace
