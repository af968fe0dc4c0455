/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/output_file.h"

namespace ringtrace {
namespace cli {

base::Status CreateOutputFile(const std::string& path,
                              bool follow_symlink,
                              std::unique_ptr<base::PendingFile>* file) {
  base::PendingFileOptions options;
  options.follow_symlink = follow_symlink;
  options.follow_hint = "--out-symlink follow writes through it";
  // The service takes only a regular file (ipc::CheckTraceFileFd).
  options.allow_direct = false;
  return base::PendingFile::Create(path, options, file);
}

}  // namespace cli
}  // namespace ringtrace
