/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The file a `ringtrace` run writes (-o OUT), whole or not at all.
//
// The trace goes to OUT.ringtrace-tmp in OUT's directory; its fd is what the
// service gets. Only Commit(), called once the service reported the trace
// complete, renames it onto OUT (after fdatasync, so that OUT never names a
// file whose data a crash could lose). Everything else, Discard() or the
// destructor, removes the temporary file and leaves a previous OUT as it
// was. A stale OUT.ringtrace-tmp left by a killed run is truncated and
// reused.
//
// Not thread-safe: one thread owns it.

#ifndef SRC_TOOLS_RINGTRACE_CLI_OUTPUT_FILE_H_
#define SRC_TOOLS_RINGTRACE_CLI_OUTPUT_FILE_H_

#include <stdint.h>

#include <memory>
#include <string>

#include "ringtrace/status.h"
#include "src/base/scoped_fd.h"

namespace ringtrace {
namespace cli {

class PendingOutputFile {
 public:
  static constexpr const char* kTempSuffix = ".ringtrace-tmp";

  // Creates (or truncates) |out_path| + kTempSuffix. Fails if OUT is a
  // directory, if the temporary path is a symbolic link or not a regular
  // file, or if it cannot be created.
  static base::Status Create(const std::string& out_path,
                             std::unique_ptr<PendingOutputFile>* file);

  ~PendingOutputFile();
  PendingOutputFile(const PendingOutputFile&) = delete;
  PendingOutputFile& operator=(const PendingOutputFile&) = delete;

  // The temporary file, open for writing; -1 after Commit() or Discard().
  int fd() const { return fd_.get(); }
  const std::string& out_path() const { return out_path_; }
  const std::string& temp_path() const { return temp_path_; }

  // The temporary file's current size (for the summary line).
  base::Status Size(uint64_t* bytes) const;

  // Syncs, closes and renames the temporary file onto OUT. On failure the
  // temporary file is removed and OUT is as it was. Call at most once.
  base::Status Commit();

  // Closes and removes the temporary file (if not committed yet).
  void Discard();

 private:
  PendingOutputFile(std::string out_path, base::ScopedFd fd);

  const std::string out_path_;
  const std::string temp_path_;
  base::ScopedFd fd_;
  bool done_ = false;  // committed or discarded
};

}  // namespace cli
}  // namespace ringtrace

#endif  // SRC_TOOLS_RINGTRACE_CLI_OUTPUT_FILE_H_
