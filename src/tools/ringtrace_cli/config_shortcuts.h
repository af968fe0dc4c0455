/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The TraceConfig `ringtrace` builds when no -c config is given, from
// shortcuts in the style of `perfetto -t 10s -b 32mb cat1,cat2`:
//
//   -t DURATION   duration_ms. A decimal number with a unit: ms, s, m or h
//                 ("500ms", "10s", "5m", "2h"); a bare number is seconds.
//                 "0" traces until Ctrl-C or --stop. Default 10s.
//   -b SIZE       the one buffer's size_kb. A decimal number with a unit:
//                 kb, mb or gb (also k, m, g; any case). Default 32mb.
//   --fill MODE   the buffer's fill_policy: "ring" (RING_BUFFER, the default:
//                 the newest data is kept) or "discard" (DISCARD: the oldest
//                 is kept, later packets are dropped and counted).
//   CATEGORIES    each argument a comma-separated list of TrackEvent
//                 categories (patterns as in TrackEventConfig: "*" or a
//                 prefix ending in "*"); none given enables "*".
//
// The result has one buffer and one "track_event" data source writing into
// it whose track_event_config.enabled_categories are the categories, in the
// order given, each once, and disabled_categories "*": those categories and
// no others (a category tagged slow or debug only if named; with "*", every
// category but those).
//
// Every value is checked: garbage, a missing unit, a value that does not fit
// the field (duration_ms and size_kb are uint32) or a zero buffer is an
// error naming the option.

#ifndef SRC_TOOLS_RINGTRACE_CLI_CONFIG_SHORTCUTS_H_
#define SRC_TOOLS_RINGTRACE_CLI_CONFIG_SHORTCUTS_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "ringtrace/status.h"

namespace ringtrace {
namespace cli {

constexpr uint32_t kDefaultShortcutDurationMs = 10 * 1000;
constexpr uint32_t kDefaultShortcutBufferKb = 32 * 1024;

// The shortcuts as written on the command line; "" means not given.
struct ConfigShortcuts {
  std::string duration;
  std::string buffer_size;
  std::string fill;
  // The positional arguments, each a comma-separated list.
  std::vector<std::string> category_args;
};

// "10s" -> 10000. See the header comment for the syntax.
base::Status ParseDurationMs(const std::string& text, uint32_t* duration_ms);

// "32mb" -> 32768.
base::Status ParseBufferSizeKb(const std::string& text, uint32_t* size_kb);

// "ring" or "discard".
base::Status ParseFillPolicy(
    const std::string& text,
    perfetto::protos::TraceConfig::BufferConfig::FillPolicy* policy);

// Splits |category_args| into categories: every comma-separated piece, each
// once, in order. An empty piece or one with white space or a control
// character is an error. No arguments give {"*"}.
base::Status ParseCategories(const std::vector<std::string>& category_args,
                             std::vector<std::string>* categories);

// Builds the whole config (|*config| is cleared first).
base::Status BuildShortcutConfig(const ConfigShortcuts& shortcuts,
                                 perfetto::protos::TraceConfig* config);

}  // namespace cli
}  // namespace ringtrace

#endif  // SRC_TOOLS_RINGTRACE_CLI_CONFIG_SHORTCUTS_H_
