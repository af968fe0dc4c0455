/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/flags.h"

#include <string.h>

namespace ringtrace {
namespace base {

bool Flag::Is(const char* spelling) const {
  // normalized_name has no '_'; read each '_' of |spelling| as '-'.
  const size_t size = strlen(spelling);
  if (normalized_name.size() != size)
    return false;
  for (size_t i = 0; i < size; ++i) {
    const char c = spelling[i] == '_' ? '-' : spelling[i];
    if (normalized_name[i] != c)
      return false;
  }
  return true;
}

FlagReader::FlagReader(int argc, const char* const* argv)
    : argc_(argc), argv_(argv) {}

bool FlagReader::Next(Flag* flag) {
  if (help_ || version_ || !error_.empty() || next_ >= argc_)
    return false;
  const std::string arg = argv_[next_++];
  if (arg == "-h" || arg == "--help") {
    help_ = true;
    return false;
  }
  if (arg == "--version") {
    version_ = true;
    return false;
  }
  const size_t eq = arg.find('=');
  if (eq != std::string::npos) {
    flag->name = arg.substr(0, eq);
    flag->value = arg.substr(eq + 1);
  } else if (next_ < argc_) {
    flag->name = arg;
    flag->value = argv_[next_++];
  } else {
    error_ = "missing value for " + arg;
    return false;
  }
  flag->normalized_name = flag->name;
  for (char& c : flag->normalized_name) {
    if (c == '_')
      c = '-';
  }
  return true;
}

bool ParseUint32(const std::string& s, uint32_t* out) {
  if (s.empty())
    return false;
  uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
    if (v > 0xffffffffu)  // also bounds v * 10 in the next step
      return false;
  }
  *out = static_cast<uint32_t>(v);
  return true;
}

}  // namespace base
}  // namespace ringtrace
