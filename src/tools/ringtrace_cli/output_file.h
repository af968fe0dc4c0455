/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The files a `ringtrace` run writes: -o FILE, the --clone file and the
// SIGUSR1 snapshots FILE.snapshot-N. Each is a base::PendingFile
// (src/base/safe_file.h has the rules): an unnamed file, mode 0600, in the
// target's directory, whose fd is what the service gets; only Commit(),
// called once the service reported the trace complete, puts it at the path
// (after fsync, so that the path never names a file whose data a crash
// could lose). Discard() or destruction leaves a previous file as it was.
//
// What the CLI adds to those rules: only regular files (the service writes
// into nothing else), and the hint that names --out-symlink.

#ifndef SRC_TOOLS_RINGTRACE_CLI_OUTPUT_FILE_H_
#define SRC_TOOLS_RINGTRACE_CLI_OUTPUT_FILE_H_

#include <memory>
#include <string>

#include "ringtrace/status.h"
#include "src/base/safe_file.h"

namespace ringtrace {
namespace cli {

// Opens the output for |path|. |follow_symlink|: --out-symlink follow
// (only for -o FILE itself; the snapshots never follow a link).
// |no_clobber|: --no-clobber, nothing at |path| is replaced (refused at
// once, and a file that appears before the commit is kept).
base::Status CreateOutputFile(const std::string& path,
                              bool follow_symlink,
                              std::unique_ptr<base::PendingFile>* file,
                              bool no_clobber = false);

}  // namespace cli
}  // namespace ringtrace

#endif  // SRC_TOOLS_RINGTRACE_CLI_OUTPUT_FILE_H_
