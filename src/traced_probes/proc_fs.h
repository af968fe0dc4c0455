/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ProcFs: bounded reads of /proc (or of a directory laid out like it, for
// tests). Every failure a process can cause is an outcome, counted in
// ScanCounters, never a crash: a process that exits between the listing and
// the read (ENOENT, ESRCH), one whose files we may not read (EACCES,
// EPERM), a file longer than the bound we read it with.
//
// A process is read through a descriptor of its /proc/PID directory
// (OpenProcess), so every file read for it belongs to the same process: if
// it exits and its pid is reused meanwhile, the reads through the old
// directory fail (ESRCH) instead of returning the new process's files.
//
// Thread model: a ProcFs is used by one thread at a time.

#ifndef SRC_TRACED_PROBES_PROC_FS_H_
#define SRC_TRACED_PROBES_PROC_FS_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "src/base/scoped_fd.h"

namespace ringtrace {
namespace probes {

// At most this many processes per scan, and threads per process.
constexpr size_t kMaxProcesses = 65536;
constexpr size_t kMaxThreadsPerProcess = 8192;

// What the reads of a data source instance met, summed over its life.
struct ScanCounters {
  uint64_t files_read = 0;
  // A process (or thread) that ended while it was read.
  uint64_t vanished = 0;
  // A file that could not be opened or read for another reason.
  uint64_t unreadable = 0;
  // A file whose contents did not parse (or a line of it that did not).
  uint64_t malformed = 0;
  // A file longer than its bound: only its start was read.
  uint64_t truncated = 0;
  // Processes, threads or entries beyond the bounds above, left out.
  uint64_t over_limit = 0;
};

enum class ReadStatus {
  kOk,
  kTruncated,  // |*out| holds the first max_bytes bytes
  kGone,       // ENOENT or ESRCH: the process ended
  kError,      // any other failure
};

class ProcFs {
 public:
  // |root|: "/proc", or a test's directory laid out like it.
  explicit ProcFs(std::string root);

  const std::string& root() const { return root_; }

  // Reads |path| (relative to |dir_fd|; absolute when dir_fd is AT_FDCWD)
  // into |*out|, at most |max_bytes|. Counts the outcome in |*counters|
  // (files_read, vanished, unreadable or truncated).
  static ReadStatus Read(int dir_fd,
                         const char* path,
                         size_t max_bytes,
                         std::string* out,
                         ScanCounters* counters);

  // The root's own files (/proc/meminfo, /proc/stat, ...).
  ReadStatus ReadRootFile(const char* name,
                          size_t max_bytes,
                          std::string* out,
                          ScanCounters* counters) const;

  // The entries of the root (or of |dir_fd|'s directory, e.g.
  // /proc/PID/task) whose names are pids (decimal, 1 .. INT32_MAX),
  // ascending, at most |max| (the rest counted in over_limit). False (and
  // counted) if the directory cannot be listed.
  bool ListPids(std::vector<int32_t>* pids,
                ScanCounters* counters,
                size_t max = kMaxProcesses) const;
  static bool ListPidsIn(int dir_fd,
                         std::vector<int32_t>* pids,
                         ScanCounters* counters,
                         size_t max);

  // /proc/PID as a directory descriptor; invalid (and counted) if the
  // process is gone or cannot be opened.
  base::ScopedFd OpenProcess(int32_t pid, ScanCounters* counters) const;

 private:
  std::string root_;
};

}  // namespace probes
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_PROC_FS_H_
