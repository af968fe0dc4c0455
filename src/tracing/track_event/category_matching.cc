/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/track_event/category_matching.h"

#include <string_view>

#include "src/base/name_pattern.h"

namespace ringtrace {
namespace track_event {
namespace {

// The two passes of the matching rule (category_matching.h).
enum class Pass { kExact, kPattern };

// Whether an entry of |entries| matches |name| in |pass|: in kExact an
// entry that is not a pattern and equals |name|, in kPattern a pattern
// whose prefix begins |name|.
bool ListMatches(const std::vector<std::string>& entries,
                 std::string_view name,
                 Pass pass) {
  for (const std::string& entry : entries) {
    const bool pattern = base::IsNamePattern(entry);
    if (pass == Pass::kExact) {
      if (!pattern && entry == name)
        return true;
    } else if (pattern && base::NamePatternMatches(entry, name)) {
      return true;
    }
  }
  return false;
}

constexpr std::string_view kLegacySlowPrefix = "disabled-by-default-";
constexpr std::string_view kSlowTag = "slow";

// Whether a tag of |category| (its own, or the "slow" its legacy name
// implies) matches an entry of |entries| in |pass|.
bool TagsMatch(const Category& category,
               const std::vector<std::string>& entries,
               Pass pass) {
  for (size_t i = 0; i < category.tag_count(); i++) {
    if (ListMatches(entries, category.tag(i), pass))
      return true;
  }
  const std::string_view name = category.name();
  return name.substr(0, kLegacySlowPrefix.size()) == kLegacySlowPrefix &&
         ListMatches(entries, kSlowTag, pass);
}

const std::vector<std::string>& DefaultDisabledTags() {
  static const std::vector<std::string>* tags =
      new std::vector<std::string>{"slow", "debug"};  // never destroyed
  return *tags;
}

}  // namespace

bool CategoryEnabledByConfig(const Category& category,
                             const CategoryConfig& config) {
  const std::string_view name = category.name();
  const std::vector<std::string>& disabled_tags = config.disabled_tags.empty()
                                                      ? DefaultDisabledTags()
                                                      : config.disabled_tags;
  for (const Pass pass : {Pass::kExact, Pass::kPattern}) {
    if (ListMatches(config.enabled_categories, name, pass))
      return true;
    if (TagsMatch(category, config.enabled_tags, pass))
      return true;
    if (ListMatches(config.disabled_categories, name, pass))
      return false;
    if (TagsMatch(category, disabled_tags, pass))
      return false;
  }
  return true;  // nothing matched: enabled (the C++ SDK's default)
}

}  // namespace track_event
}  // namespace ringtrace
