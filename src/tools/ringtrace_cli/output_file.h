/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Where a `ringtrace` run's trace goes: -o FILE, the --clone file and the
// SIGUSR1 snapshots FILE.snapshot-N, or stdout (-o -). Either way the
// service writes into one fd, a regular file (the only kind it takes,
// ipc::CheckTraceFileFd), and the trace reaches its destination only once
// the service reported it complete (Commit()); Discard() or destruction
// leaves the destination as it was.
//
//   - A file is a base::PendingFile (src/base/safe_file.h has the rules): an
//     unnamed file, mode 0600, in the target's directory; Commit() syncs it
//     and puts it at the path. What the CLI adds to those rules: only
//     regular files, and the hints that name --out-symlink and
//     --no-clobber.
//   - stdout (like `perfetto -o -`) gets the trace through a spool: an
//     unnamed file, mode 0600, in $TMPDIR (else /tmp), or a memfd where
//     that file system has no O_TMPFILE. Commit() copies the spool to
//     stdout, so a pipe or a file redirection receives exactly the bytes a
//     file would hold, whole, or nothing when the session fails. A terminal
//     is refused: a trace is binary data.
//
// Thread model: one thread owns a TraceOutput.

#ifndef SRC_TOOLS_RINGTRACE_CLI_OUTPUT_FILE_H_
#define SRC_TOOLS_RINGTRACE_CLI_OUTPUT_FILE_H_

#include <stdint.h>

#include <memory>
#include <string>

#include "ringtrace/status.h"
#include "src/base/safe_file.h"
#include "src/base/scoped_fd.h"

namespace ringtrace {
namespace cli {

// The -o value that means stdout.
constexpr const char kStdoutPath[] = "-";

// Opens the output for |path|. |follow_symlink|: --out-symlink follow
// (only for -o FILE itself; the snapshots never follow a link).
// |no_clobber|: --no-clobber, nothing at |path| is replaced (refused at
// once, and a file that appears before the commit is kept).
base::Status CreateOutputFile(const std::string& path,
                              bool follow_symlink,
                              std::unique_ptr<base::PendingFile>* file,
                              bool no_clobber = false);

class TraceOutput {
 public:
  // The largest block Commit() copies to stdout at once.
  static constexpr size_t kCopyBlockBytes = 256 * 1024;

  // -o FILE: CreateOutputFile().
  static base::Status ForFile(const std::string& path,
                              bool follow_symlink,
                              bool no_clobber,
                              std::unique_ptr<TraceOutput>* output);
  // -o -: |stdout_fd| must be open for writing and not a terminal. The fd
  // stays the caller's. |spool_dir|: where the spool is created (""
  // for $TMPDIR, else /tmp).
  static base::Status ForStdout(int stdout_fd,
                                std::unique_ptr<TraceOutput>* output,
                                const std::string& spool_dir = "");

  ~TraceOutput();
  TraceOutput(const TraceOutput&) = delete;
  TraceOutput& operator=(const TraceOutput&) = delete;

  // Where the service writes; -1 after Commit() or Discard().
  int fd() const;
  bool to_stdout() const { return file_ == nullptr; }
  // For messages: FILE as given, or "stdout".
  std::string name() const;
  // The path given to ForFile(); kStdoutPath for stdout.
  const std::string& path() const { return path_; }

  // The bytes written so far.
  base::Status Size(uint64_t* bytes) const;

  // A file: PendingFile::Commit(). stdout: copies the spool to it, then
  // closes the spool; a write error (a reader that went away: EPIPE, with
  // SIGPIPE ignored) fails it, after what was copied. Once only.
  base::Status Commit();

  // Nothing reaches the destination.
  void Discard();

 private:
  TraceOutput() = default;

  base::Status CopySpoolToStdout();

  std::string path_;
  std::unique_ptr<base::PendingFile> file_;  // -o FILE
  base::ScopedFd spool_;                     // -o -
  int stdout_fd_ = -1;
  bool done_ = false;
};

}  // namespace cli
}  // namespace ringtrace

#endif  // SRC_TOOLS_RINGTRACE_CLI_OUTPUT_FILE_H_
