/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

namespace ringtrace {
namespace cli {

base::Status PendingOutputFile::Create(
    const std::string& out_path,
    std::unique_ptr<PendingOutputFile>* file) {
  struct stat st = {};
  if (stat(out_path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return base::ErrStatus("%s is a directory", out_path.c_str());
  const std::string temp_path = out_path + kTempSuffix;
  // O_NOFOLLOW: a symbolic link planted at the temporary path is not
  // followed (the open fails with ELOOP). O_NONBLOCK: a FIFO there fails
  // (ENXIO) instead of blocking; the flag is cleared below.
  base::ScopedFd fd(
      open(temp_path.c_str(),
           O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
           0666));
  if (!fd.valid()) {
    return base::ErrStatus("cannot create %s: %s", temp_path.c_str(),
                           strerror(errno));
  }
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    // Not ours to remove: it existed and is something else.
    return base::ErrStatus("%s exists and is not a regular file",
                           temp_path.c_str());
  }
  const int flags = fcntl(fd.get(), F_GETFL);
  if (flags < 0 || fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int err = errno;
    unlink(temp_path.c_str());
    return base::ErrStatus("cannot set up %s: %s", temp_path.c_str(),
                           strerror(err));
  }
  file->reset(new PendingOutputFile(out_path, std::move(fd)));
  return base::OkStatus();
}

PendingOutputFile::PendingOutputFile(std::string out_path, base::ScopedFd fd)
    : out_path_(std::move(out_path)),
      temp_path_(out_path_ + kTempSuffix),
      fd_(std::move(fd)) {}

PendingOutputFile::~PendingOutputFile() {
  Discard();
}

base::Status PendingOutputFile::Size(uint64_t* bytes) const {
  struct stat st = {};
  if (!fd_.valid() || fstat(fd_.get(), &st) != 0)
    return base::ErrStatus("cannot stat %s", temp_path_.c_str());
  *bytes = static_cast<uint64_t>(st.st_size);
  return base::OkStatus();
}

base::Status PendingOutputFile::Commit() {
  if (done_)
    return base::ErrStatus("%s was already finished", out_path_.c_str());
  // fdatasync reports write-back errors of writes the service made through
  // its copy of the fd: they share one open file description.
  if (fdatasync(fd_.get()) != 0) {
    const int err = errno;
    Discard();
    return base::ErrStatus("cannot write %s: %s", temp_path_.c_str(),
                           strerror(err));
  }
  if (fd_.Close() != 0) {
    const int err = errno;
    Discard();
    return base::ErrStatus("cannot write %s: %s", temp_path_.c_str(),
                           strerror(err));
  }
  if (rename(temp_path_.c_str(), out_path_.c_str()) != 0) {
    const int err = errno;
    Discard();
    return base::ErrStatus("cannot rename %s to %s: %s", temp_path_.c_str(),
                           out_path_.c_str(), strerror(err));
  }
  done_ = true;
  return base::OkStatus();
}

void PendingOutputFile::Discard() {
  if (done_)
    return;
  done_ = true;
  fd_.reset();
  unlink(temp_path_.c_str());
}

}  // namespace cli
}  // namespace ringtrace
