/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/proc_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "src/traced_probes/proc_parsers.h"

namespace ringtrace {
namespace probes {
namespace {

ReadStatus Failed(int err, ScanCounters* counters) {
  if (err == ENOENT || err == ESRCH) {
    counters->vanished++;
    return ReadStatus::kGone;
  }
  counters->unreadable++;
  return ReadStatus::kError;
}

}  // namespace

ProcFs::ProcFs(std::string root) : root_(std::move(root)) {}

ReadStatus ProcFs::Read(int dir_fd,
                        const char* path,
                        size_t max_bytes,
                        std::string* out,
                        ScanCounters* counters) {
  out->clear();
  base::ScopedFd fd(
      openat(dir_fd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd.valid())
    return Failed(errno, counters);
  // /proc files report a size of 0: read until EOF or the bound, one byte
  // beyond it to tell a file of exactly max_bytes from a longer one.
  out->resize(max_bytes + 1);
  size_t size = 0;
  while (size < out->size()) {
    const ssize_t n = read(fd.get(), &(*out)[size], out->size() - size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      const int err = errno;
      out->clear();
      return Failed(err, counters);
    }
    if (n == 0)
      break;
    size += static_cast<size_t>(n);
  }
  counters->files_read++;
  if (size > max_bytes) {
    out->resize(max_bytes);
    counters->truncated++;
    return ReadStatus::kTruncated;
  }
  out->resize(size);
  return ReadStatus::kOk;
}

ReadStatus ProcFs::ReadRootFile(const char* name,
                                size_t max_bytes,
                                std::string* out,
                                ScanCounters* counters) const {
  const std::string path = root_ + "/" + name;
  return Read(AT_FDCWD, path.c_str(), max_bytes, out, counters);
}

bool ProcFs::ListPids(std::vector<int32_t>* pids,
                      ScanCounters* counters,
                      size_t max) const {
  pids->clear();
  base::ScopedFd dir(
      open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!dir.valid()) {
    Failed(errno, counters);
    return false;
  }
  return ListPidsIn(dir.get(), pids, counters, max);
}

bool ProcFs::ListPidsIn(int dir_fd,
                        std::vector<int32_t>* pids,
                        ScanCounters* counters,
                        size_t max) {
  pids->clear();
  // fdopendir() takes its descriptor: give it a copy.
  const int copy = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) {
    Failed(errno, counters);
    return false;
  }
  DIR* dir = fdopendir(copy);
  if (!dir) {
    const int err = errno;
    close(copy);
    Failed(err, counters);
    return false;
  }
  // The copy shares the original's offset: list from the start.
  rewinddir(dir);
  bool ok = true;
  for (;;) {
    errno = 0;
    const struct dirent* entry = readdir(dir);
    if (!entry) {
      if (errno != 0) {
        // The listing broke off (the directory of an exiting process):
        // keep what was listed.
        Failed(errno, counters);
        ok = !pids->empty();
      }
      break;
    }
    int32_t pid = 0;
    if (!ParsePid(entry->d_name, &pid))
      continue;  // "self", "meminfo", ".", ...
    if (pids->size() >= max) {
      counters->over_limit++;
      continue;
    }
    pids->push_back(pid);
  }
  closedir(dir);
  std::sort(pids->begin(), pids->end());
  return ok;
}

base::ScopedFd ProcFs::OpenProcess(int32_t pid, ScanCounters* counters) const {
  const std::string path = root_ + "/" + std::to_string(pid);
  base::ScopedFd fd(
      open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid())
    Failed(errno, counters);
  return fd;
}

}  // namespace probes
}  // namespace ringtrace
