/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/service_state_format.h"

#include <inttypes.h>
#include <stdio.h>

#include <algorithm>
#include <utility>

#include "src/base/checked_math.h"

namespace ringtrace {
namespace cli {
namespace {

using ringtrace::protos::ServiceState;

std::string U64(uint64_t v) {
  return std::to_string(v);
}

const char* FillPolicyName(int policy) {
  switch (policy) {
    case perfetto::protos::TraceConfig::BufferConfig::RING_BUFFER:
      return "ring";
    case perfetto::protos::TraceConfig::BufferConfig::DISCARD:
      return "discard";
    default:
      return "unspecified";
  }
}

// "1.2 MiB/32.0 MiB (3%)".
std::string FormatFill(uint64_t used, uint64_t size) {
  const uint64_t percent =
      size == 0
          ? 0
          : (used >= size
                 ? 100
                 : static_cast<uint64_t>(static_cast<unsigned __int128>(used) *
                                         100 / size));
  return FormatBytes(used) + "/" + FormatBytes(size) + " (" + U64(percent) +
         "%)";
}

// Integer division with one decimal, rounded down: 1536/1024 -> "1.5".
std::string OneDecimal(uint64_t value, uint64_t unit) {
  const uint64_t whole = value / unit;
  const uint64_t tenth = (value % unit) * 10 / unit;
  return U64(whole) + "." + U64(tenth);
}

// The categories the producers' data sources declared, one row each, or ""
// when none was declared (nor left out of the answer).
std::string FormatCategories(const ServiceState& state) {
  TextTable table(
      {"PRODUCER", "DATA SOURCE", "CATEGORY", "TAGS", "DESCRIPTION"});
  size_t rows = 0;
  for (const auto& p : state.producers()) {
    for (const auto& list : p.categories()) {
      for (const auto& c : list.categories()) {
        std::string tags;
        for (const std::string& tag : c.tags())
          tags += (tags.empty() ? "" : ",") + Sanitize(tag);
        table.AddRow({U64(p.id()), Sanitize(list.data_source()),
                      Sanitize(c.name()), tags.empty() ? "-" : tags,
                      Sanitize(c.description())});
        rows++;
      }
    }
  }
  if (rows == 0 && state.categories_omitted() == 0)
    return "";
  std::string out =
      "Categories (" + std::to_string(rows) + "):\n" + table.Render();
  if (state.categories_omitted() != 0) {
    out += "(" + U64(state.categories_omitted()) +
           " more left out: the service's answer has room for no more)\n";
  }
  return out;
}

}  // namespace

TextTable::TextTable(std::vector<std::string> header) {
  rows_.push_back(std::move(header));
}

void TextTable::AddRow(std::vector<std::string> row) {
  row.resize(rows_[0].size());
  rows_.push_back(std::move(row));
}

std::string TextTable::Render() const {
  std::vector<size_t> widths(rows_[0].size(), 0);
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); i++)
      widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows_) {
    std::string line;
    for (size_t i = 0; i < row.size(); i++) {
      line += row[i];
      if (i + 1 < row.size())
        line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string Sanitize(const std::string& s) {
  if (s.empty())
    return "-";
  std::string out = s;
  for (char& c : out) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f)
      c = '?';
  }
  return out;
}

std::string FormatBytes(uint64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024)
    return U64(bytes) + " B";
  uint64_t unit = 1024;
  size_t index = 0;
  while (index + 1 < sizeof(kUnits) / sizeof(kUnits[0]) &&
         bytes / unit >= 1024) {
    unit *= 1024;
    index++;
  }
  return OneDecimal(bytes, unit) + " " + kUnits[index];
}

std::string FormatDurationMs(uint64_t ms) {
  char buf[64];
  if (ms < 60 * 1000)
    return OneDecimal(ms, 1000) + "s";
  const uint64_t s = ms / 1000;
  if (s < 3600) {
    snprintf(buf, sizeof(buf), "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
  } else {
    snprintf(buf, sizeof(buf), "%" PRIu64 "h%02" PRIu64 "m", s / 3600,
             (s % 3600) / 60);
  }
  return buf;
}

std::string FormatServiceState(const ServiceState& state) {
  std::string out;
  if (state.producers_size() == 0) {
    out += "Producers: none\n";
  } else {
    out += "Producers (" + std::to_string(state.producers_size()) + "):\n";
    TextTable producers({"ID", "NAME", "PID", "UID", "RING", "DATA SOURCES"});
    for (const auto& p : state.producers()) {
      std::string sources;
      for (const std::string& source : p.data_sources())
        sources += (sources.empty() ? "" : ",") + Sanitize(source);
      producers.AddRow({U64(p.id()), Sanitize(p.name()),
                        std::to_string(p.pid()), U64(p.uid()),
                        FormatBytes(p.ring_bytes()),
                        sources.empty() ? "-" : sources});
    }
    out += producers.Render();
  }
  const std::string categories = FormatCategories(state);
  if (!categories.empty())
    out += "\n" + categories;
  out += "\n";
  if (state.sessions_size() == 0) {
    out += "Sessions: none\n";
  } else {
    out += "Sessions (" + std::to_string(state.sessions_size()) + "):\n";
    TextTable sessions({"ID", "NAME", "CONSUMER UID", "STATE", "ELAPSED",
                        "INSTANCES", "PACKETS LOST"});
    TextTable buffers({"SESSION", "BUFFER", "FILL", "POLICY"});
    for (const auto& s : state.sessions()) {
      sessions.AddRow(
          {U64(s.id()), Sanitize(s.unique_name()), U64(s.consumer_uid()),
           Sanitize(s.state()), FormatDurationMs(s.elapsed_ms()),
           U64(s.num_data_source_instances()), U64(s.packets_lost())});
      for (const auto& b : s.buffers()) {
        buffers.AddRow({U64(s.id()), U64(b.id()),
                        FormatFill(b.used_bytes(), b.size_bytes()),
                        FillPolicyName(b.fill_policy())});
      }
    }
    out += sessions.Render();
    out += "\nBuffers:\n";
    out += buffers.Render();
  }
  out += "\nLimits: " + U64(state.max_sessions()) + " sessions, " +
         FormatBytes(state.max_total_buffer_bytes()) + " of buffers, " +
         U64(state.max_producers()) + " producers\n";
  return out;
}

std::string FormatProgressLine(const ServiceState& state, uint64_t session_id) {
  const ServiceState::Session* session = nullptr;
  for (const auto& s : state.sessions()) {
    if (s.id() == session_id) {
      session = &s;
      break;
    }
  }
  if (!session)
    return "session " + U64(session_id) + ": not found";
  uint64_t used = 0;
  uint64_t size = 0;
  for (const auto& b : session->buffers()) {
    // Saturating: the numbers come from another process.
    if (!base::CheckedAdd(used, b.used_bytes(), &used))
      used = UINT64_MAX;
    if (!base::CheckedAdd(size, b.size_bytes(), &size))
      size = UINT64_MAX;
  }
  return "session " + U64(session_id) + "  " +
         FormatDurationMs(session->elapsed_ms()) + "  buffer " +
         FormatFill(used, size) + "  " +
         std::to_string(state.producers_size()) + " producers  " +
         U64(session->num_data_source_instances()) + " instances  " +
         U64(session->packets_lost()) + " packets lost";
}

}  // namespace cli
}  // namespace ringtrace
