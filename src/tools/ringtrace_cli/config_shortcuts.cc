/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/config_shortcuts.h"

#include <ctype.h>

#include <set>

#include "src/base/checked_math.h"

namespace ringtrace {
namespace cli {
namespace {

using perfetto::protos::TraceConfig;

// Splits "10s" into 10 and "s". False if there is no leading digit or the
// number does not fit a uint64.
bool SplitNumberAndUnit(const std::string& text,
                        uint64_t* number,
                        std::string* unit) {
  size_t i = 0;
  uint64_t n = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (!base::CheckedMul<uint64_t>(n, 10, &n) ||
        !base::CheckedAdd<uint64_t>(n, static_cast<uint64_t>(text[i] - '0'),
                                    &n)) {
      return false;
    }
    i++;
  }
  if (i == 0)
    return false;
  *number = n;
  unit->clear();
  for (; i < text.size(); i++)
    unit->push_back(
        static_cast<char>(tolower(static_cast<unsigned char>(text[i]))));
  return true;
}

bool IsValidCategory(const std::string& category) {
  if (category.empty())
    return false;
  for (char c : category) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u <= ' ' || u == 0x7f)
      return false;
  }
  return true;
}

}  // namespace

// Splits a decimal fraction off a duration: "1.5s" -> "1s" and "5" (at
// most 9 digits after the point). False if the point has no digit on
// either side or too many after it.
bool SplitFraction(const std::string& text,
                   std::string* whole,
                   std::string* fraction) {
  const size_t dot = text.find('.');
  *whole = text;
  fraction->clear();
  if (dot == std::string::npos)
    return true;
  size_t end = dot + 1;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9')
    end++;
  *fraction = text.substr(dot + 1, end - dot - 1);
  *whole = text.substr(0, dot) + text.substr(end);
  return dot > 0 && !fraction->empty() && fraction->size() <= 9;
}

base::Status ParseDurationMs(const std::string& text, uint32_t* duration_ms) {
  uint64_t n = 0;
  std::string unit, whole, fraction;
  if (!SplitFraction(text, &whole, &fraction) ||
      !SplitNumberAndUnit(whole, &n, &unit)) {
    return base::ErrStatus(
        "bad duration '%s' for -t: expected a number with ms, s, m or h "
        "(e.g. 10s)",
        text.c_str());
  }
  uint64_t scale = 0;
  if (unit == "ms")
    scale = 1;
  else if (unit.empty() || unit == "s")
    scale = 1000;
  else if (unit == "m")
    scale = 60 * 1000;
  else if (unit == "h")
    scale = 60 * 60 * 1000;
  else
    return base::ErrStatus("bad unit '%s' in -t %s: use ms, s, m or h",
                           unit.c_str(), text.c_str());
  uint64_t ms = 0;
  bool fits = base::CheckedMul(n, scale, &ms);
  if (!fraction.empty()) {
    // At most 9 digits and a scale below 2^22: no overflow here.
    uint64_t f = 0, denominator = 1;
    for (char d : fraction) {
      f = f * 10 + static_cast<uint64_t>(d - '0');
      denominator *= 10;
    }
    const uint64_t fraction_units = f * scale;
    if (fraction_units % denominator != 0) {
      return base::ErrStatus(
          "duration %s for -t is not a whole number of milliseconds",
          text.c_str());
    }
    fits = fits && base::CheckedAdd(ms, fraction_units / denominator, &ms);
  }
  if (!fits || ms > UINT32_MAX) {
    return base::ErrStatus("duration %s for -t is too long (at most %u ms)",
                           text.c_str(), UINT32_MAX);
  }
  *duration_ms = static_cast<uint32_t>(ms);
  return base::OkStatus();
}

base::Status ParseBufferSizeKb(const std::string& text, uint32_t* size_kb) {
  uint64_t n = 0;
  std::string unit;
  if (!SplitNumberAndUnit(text, &n, &unit)) {
    return base::ErrStatus(
        "bad size '%s' for -b: expected a number with kb, mb or gb (e.g. "
        "32mb)",
        text.c_str());
  }
  uint64_t scale = 0;
  if (unit == "kb" || unit == "k")
    scale = 1;
  else if (unit == "mb" || unit == "m")
    scale = 1024;
  else if (unit == "gb" || unit == "g")
    scale = 1024 * 1024;
  else if (unit.empty())
    return base::ErrStatus("size %s for -b needs a unit: kb, mb or gb",
                           text.c_str());
  else
    return base::ErrStatus("bad unit '%s' in -b %s: use kb, mb or gb",
                           unit.c_str(), text.c_str());
  uint64_t kb = 0;
  if (!base::CheckedMul(n, scale, &kb) || kb > UINT32_MAX) {
    return base::ErrStatus("size %s for -b is too large (at most %u kb)",
                           text.c_str(), UINT32_MAX);
  }
  if (kb == 0)
    return base::ErrStatus("size %s for -b is zero", text.c_str());
  *size_kb = static_cast<uint32_t>(kb);
  return base::OkStatus();
}

base::Status ParseFillPolicy(const std::string& text,
                             TraceConfig::BufferConfig::FillPolicy* policy) {
  if (text == "ring") {
    *policy = TraceConfig::BufferConfig::RING_BUFFER;
  } else if (text == "discard") {
    *policy = TraceConfig::BufferConfig::DISCARD;
  } else {
    return base::ErrStatus("bad --fill '%s': use ring or discard",
                           text.c_str());
  }
  return base::OkStatus();
}

base::Status ParseCategories(const std::vector<std::string>& category_args,
                             std::vector<std::string>* categories) {
  categories->clear();
  std::set<std::string> seen;
  for (const std::string& arg : category_args) {
    size_t begin = 0;
    for (;;) {
      const size_t comma = arg.find(',', begin);
      const size_t end = comma == std::string::npos ? arg.size() : comma;
      const std::string category = arg.substr(begin, end - begin);
      if (!IsValidCategory(category)) {
        return base::ErrStatus(
            "bad category list '%s': empty category, white space or control "
            "character",
            arg.c_str());
      }
      if (seen.insert(category).second)
        categories->push_back(category);
      if (comma == std::string::npos)
        break;
      begin = comma + 1;
    }
  }
  if (categories->empty())
    categories->push_back("*");
  return base::OkStatus();
}

base::Status BuildShortcutConfig(const ConfigShortcuts& shortcuts,
                                 TraceConfig* config) {
  config->Clear();
  uint32_t duration_ms = kDefaultShortcutDurationMs;
  if (!shortcuts.duration.empty()) {
    base::Status status = ParseDurationMs(shortcuts.duration, &duration_ms);
    if (!status.ok())
      return status;
  }
  uint32_t size_kb = kDefaultShortcutBufferKb;
  if (!shortcuts.buffer_size.empty()) {
    base::Status status = ParseBufferSizeKb(shortcuts.buffer_size, &size_kb);
    if (!status.ok())
      return status;
  }
  TraceConfig::BufferConfig::FillPolicy fill =
      TraceConfig::BufferConfig::RING_BUFFER;
  if (!shortcuts.fill.empty()) {
    base::Status status = ParseFillPolicy(shortcuts.fill, &fill);
    if (!status.ok())
      return status;
  }
  std::vector<std::string> categories;
  base::Status status = ParseCategories(shortcuts.category_args, &categories);
  if (!status.ok())
    return status;

  TraceConfig::BufferConfig* buffer = config->add_buffers();
  buffer->set_size_kb(size_kb);
  buffer->set_fill_policy(fill);
  perfetto::protos::DataSourceConfig* source =
      config->add_data_sources()->mutable_config();
  source->set_name("track_event");
  source->set_target_buffer(0);
  // Exactly these (Perfetto's "enable a specific category"): everything
  // else off, a slow or debug category on only when named.
  source->mutable_track_event_config()->add_disabled_categories("*");
  for (const std::string& category : categories)
    source->mutable_track_event_config()->add_enabled_categories(category);
  if (duration_ms != 0)
    config->set_duration_ms(duration_ms);
  return base::OkStatus();
}

}  // namespace cli
}  // namespace ringtrace
