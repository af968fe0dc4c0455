/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The TraceConfig of a `ringtrace` trace command, as main() loads it: the
// -c file (read, then parsed as text with --txt or as binary:
// trace_config_text.h) or the shortcuts (config_shortcuts.h), then the
// service's own rules (ipc::ValidateTraceConfig), so that every defect is a
// usage error before anything is sent. Tests load configs through this
// too, so that what they accept and refuse is what the command line does
// (docs/cli.md, "Perfetto configs").

#ifndef SRC_TOOLS_RINGTRACE_CLI_LOAD_CONFIG_H_
#define SRC_TOOLS_RINGTRACE_CLI_LOAD_CONFIG_H_

#include "protos/perfetto/config/trace_config.pb.h"
#include "ringtrace/status.h"
#include "src/tools/ringtrace_cli/cli_options.h"

namespace ringtrace {
namespace cli {

// Fills |*config| from |options| (config_path, txt, shortcuts). An error is
// what ringtrace prints before exiting kExitUsage: the parser's
// "FILE:LINE:COL: PATH: what" lines, or "NAME: PATH: rule" for a value the
// service's rules refuse (NAME: the file, "<stdin>" or "shortcuts").
base::Status LoadTraceConfig(const CliOptions& options,
                             perfetto::protos::TraceConfig* config);

}  // namespace cli
}  // namespace ringtrace

#endif  // SRC_TOOLS_RINGTRACE_CLI_LOAD_CONFIG_H_
