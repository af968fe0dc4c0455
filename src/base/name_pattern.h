/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The name patterns of Perfetto's TrackEventConfig (category and tag
// lists): an entry is a name, or a prefix followed by one trailing '*'
// ("*" alone matches every name). The consumer protocol refuses a '*'
// anywhere else. The one definition, used where categories are selected
// (src/tracing/track_event/category_matching.cc) and where a session's
// patterns are checked against what producers declare
// (src/tracing/service/traced/session_start_warnings.cc).

#ifndef SRC_BASE_NAME_PATTERN_H_
#define SRC_BASE_NAME_PATTERN_H_

#include <string_view>

namespace ringtrace {
namespace base {

// Whether |entry| is a pattern (ends in '*') rather than a name.
inline bool IsNamePattern(std::string_view entry) {
  return !entry.empty() && entry.back() == '*';
}

// Whether the pattern |entry| (IsNamePattern) matches |name|: its prefix
// begins |name|.
inline bool NamePatternMatches(std::string_view entry, std::string_view name) {
  const std::string_view prefix = entry.substr(0, entry.size() - 1);
  return name.substr(0, prefix.size()) == prefix;
}

// Exact (a name equal to |name|) or pattern match, whichever |entry| is.
inline bool NameOrPatternMatches(std::string_view entry,
                                 std::string_view name) {
  return IsNamePattern(entry) ? NamePatternMatches(entry, name) : entry == name;
}

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_NAME_PATTERN_H_
