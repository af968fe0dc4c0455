/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Reading a TraceConfig (protos/perfetto/config/trace_config.proto) from a
// file, as `ringtrace -c FILE` does: Perfetto's protobuf text format with
// --txt, the binary encoding without.
//
// A config names only fields ringtrace knows. Anything else is an error, never
// silently dropped: an unknown field, an enum value the proto does not have, a
// value of the wrong type, a number out of range, a syntax error. A text
// error reads "FILE:LINE:COL: FIELD.PATH: what", with 1-based line and column
// (a tab advances the column to the next multiple of 8, as protobuf counts)
// of the name or value at fault, and names the field it is in as a path from
// the TraceConfig ("buffers.size_kb"). A binary config with a field number this
// proto does not have is rejected with the field number and where it was.
//
// Thread-safe (no shared state).

#ifndef SRC_TRACING_CONSUMER_TRACE_CONFIG_TEXT_H_
#define SRC_TRACING_CONSUMER_TRACE_CONFIG_TEXT_H_

#include <stddef.h>

#include <string>

#include "protos/perfetto/config/trace_config.pb.h"
#include "ringtrace/status.h"

namespace ringtrace {
namespace consumer {

// The largest config file read (a real config is a few KiB; this keeps
// `-c /dev/zero` from eating the memory).
constexpr size_t kMaxConfigFileBytes = 16u << 20;

// At most this many problems are listed in one error.
constexpr size_t kMaxConfigProblemsShown = 20;

// Parses |text| (protobuf text format) into |*config|, which is cleared
// first. |file_name| is only for messages. On failure |*config| is
// unspecified. When the text has several fields ringtrace does not know
// (Perfetto's ftrace_config, process_stats_config, ...), the error names
// every one ("N problems:" then one "FILE:LINE:COL: PATH: what" per line,
// at most kMaxConfigProblemsShown), not only the first.
base::Status ParseTextTraceConfig(const std::string& text,
                                  const std::string& file_name,
                                  perfetto::protos::TraceConfig* config);

// Parses |bytes| (a serialized TraceConfig) into |*config|. Fails on a
// malformed encoding (with a hint that a text config needs --txt) and on any
// field this proto does not define.
base::Status ParseBinaryTraceConfig(const std::string& bytes,
                                    const std::string& file_name,
                                    perfetto::protos::TraceConfig* config);

// Reads the whole file |path| into |*contents|; "-" reads stdin. Fails if the
// file cannot be read or is larger than kMaxConfigFileBytes.
base::Status ReadConfigFile(const std::string& path, std::string* contents);

// The field path ("buffers.size_kb") at 0-based |line| and |column| of the
// text config |text|: the message fields open there and the field whose name
// or value is at the position (if any). "" at the top level outside a field.
// For error messages; exposed for tests.
std::string TextFieldPathAt(const std::string& text, int line, int column);

}  // namespace consumer
}  // namespace ringtrace

#endif  // SRC_TRACING_CONSUMER_TRACE_CONFIG_TEXT_H_
