/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/load_config.h"

#include <string>

#include "src/tools/ringtrace_cli/config_shortcuts.h"
#include "src/tracing/consumer/trace_config_text.h"
#include "src/tracing/ipc/consumer_protocol.h"

namespace ringtrace {
namespace cli {

base::Status LoadTraceConfig(const CliOptions& options,
                             perfetto::protos::TraceConfig* config) {
  base::Status status;
  std::string name = "shortcuts";
  if (options.config_path.empty()) {
    status = BuildShortcutConfig(options.shortcuts, config);
  } else {
    name = options.config_path == "-" ? "<stdin>" : options.config_path;
    std::string contents;
    status = consumer::ReadConfigFile(options.config_path, &contents);
    if (status.ok()) {
      status = options.txt
                   ? consumer::ParseTextTraceConfig(contents, name, config)
                   : consumer::ParseBinaryTraceConfig(contents, name, config);
    }
  }
  if (!status.ok())
    return status;
  status = ipc::ValidateTraceConfig(*config);
  if (!status.ok())
    return base::ErrStatus("%s: %s", name.c_str(), status.message().c_str());
  return base::OkStatus();
}

}  // namespace cli
}  // namespace ringtrace
