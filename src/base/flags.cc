/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/flags.h"

#include <string.h>

namespace ringtrace {
namespace base {

namespace {

// Whether |normalized| (no '_') equals |name| with '_' read as '-'.
bool SameName(const std::string& normalized, const char* name) {
  const size_t size = strlen(name);
  if (normalized.size() != size)
    return false;
  for (size_t i = 0; i < size; ++i) {
    const char c = name[i] == '_' ? '-' : name[i];
    if (normalized[i] != c)
      return false;
  }
  return true;
}

}  // namespace

bool Flag::Is(const char* other) const {
  return SameName(normalized_name, other);
}

FlagReader::FlagReader(int argc, const char* const* argv)
    : argc_(argc), argv_(argv) {}

bool FlagReader::Next(Flag* flag) {
  if (help_ || !error_.empty() || next_ >= argc_)
    return false;
  const std::string arg = argv_[next_++];
  if (arg == "-h" || arg == "--help") {
    help_ = true;
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
