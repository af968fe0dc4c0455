/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Which categories a TrackEventConfig enables: the rule of Perfetto's C++
// SDK (perfetto::Category; the comment of track_event_config.proto), for
// the data-source instances of track_event_instances.h.
//
// Each list entry ending in '*' is a pattern, matching every name (or tag)
// with the prefix before the '*' ("*" matches all); any other entry is an
// exact name (a pattern never counts as an exact match, and configs and
// the wire refuse a '*' anywhere but at the end). The category is checked,
// in this order, against:
//   1. exact entries of enabled_categories (its name)   -> enabled
//   2. exact entries of enabled_tags (any of its tags)  -> enabled
//   3. exact entries of disabled_categories             -> disabled
//   4. exact entries of disabled_tags                   -> disabled
//   5.-8. the patterns of the same four lists, in that order
// The first step that matches decides; if none does, the category is
// enabled. An empty disabled_tags means {"slow", "debug"}. A category whose
// name begins with "disabled-by-default-" (Chrome's legacy convention) is
// matched as if it also had the tag "slow".
//
// So a config without lists enables every category not tagged slow or
// debug; disabled_categories "*" with enabled_categories "gfx" enables gfx
// alone (step 1 before step 7); enabled_tags "slow" enables the slow ones
// too (step 2 before step 4).
//
// Thread model: pure functions of their arguments.

#ifndef SRC_TRACING_TRACK_EVENT_CATEGORY_MATCHING_H_
#define SRC_TRACING_TRACK_EVENT_CATEGORY_MATCHING_H_

#include <string>
#include <vector>

#include "ringtrace/track_event.h"

namespace ringtrace {
namespace track_event {

// The category-selecting lists of a TrackEventConfig.
struct CategoryConfig {
  std::vector<std::string> enabled_categories;
  std::vector<std::string> disabled_categories;
  std::vector<std::string> enabled_tags;
  std::vector<std::string> disabled_tags;  // empty: {"slow", "debug"}
};

// The rule above, for |category| (its name and tags).
bool CategoryEnabledByConfig(const Category& category,
                             const CategoryConfig& config);

}  // namespace track_event
}  // namespace ringtrace

#endif  // SRC_TRACING_TRACK_EVENT_CATEGORY_MATCHING_H_
