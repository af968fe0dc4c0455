/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/output_file.h"

namespace ringtrace {
namespace cli {

base::Status CreateOutputFile(const std::string& path,
                              bool follow_symlink,
                              std::unique_ptr<base::PendingFile>* file,
                              bool no_clobber) {
  base::PendingFileOptions options;
  options.follow_symlink = follow_symlink;
  options.follow_hint = "--out-symlink follow writes through it";
  options.no_clobber = no_clobber;
  options.no_clobber_hint = "--no-clobber keeps it";
  // The service takes only a regular file (ipc::CheckTraceFileFd).
  options.allow_direct = false;
  return base::PendingFile::Create(path, options, file);
}

}  // namespace cli
}  // namespace ringtrace
