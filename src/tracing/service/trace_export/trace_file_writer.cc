/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/trace_export/trace_file_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace ringtrace {
namespace trace_export {

TraceFileWriter::TraceFileWriter(int fd, const Options& options)
    : fd_(fd),
      batch_size_(options.batch_size),
      write_fn_(options.write_fn ? options.write_fn : &::write),
      batch_(new uint8_t[options.batch_size]) {
  RT_CHECK(batch_size_ > 0);
}

TraceFileWriter::~TraceFileWriter() = default;

void TraceFileWriter::AppendSlow(const uint8_t* data, size_t size) {
  while (size > 0 && status_.ok()) {
    if (used_ == batch_size_) {
      WriteFully(batch_.get(), used_);
      used_ = 0;
      continue;
    }
    const size_t n = std::min(size, batch_size_ - used_);
    memcpy(batch_.get() + used_, data, n);
    used_ += n;
    stats_.bytes_appended += n;
    data += n;
    size -= n;
  }
  if (!status_.ok())
    used_ = batch_size_;  // keeps the fast path of Append() closed
}

base::Status TraceFileWriter::Flush() {
  if (status_.ok() && used_ > 0) {
    WriteFully(batch_.get(), used_);
    used_ = 0;
  }
  return status_;
}

void TraceFileWriter::WriteFully(const uint8_t* data, size_t size) {
  uint32_t no_progress = 0;
  while (size > 0) {
    if (no_progress >= kMaxNoProgressRetries) {
      status_ =
          base::ErrStatus("write: no progress after %u tries", no_progress);
      return;
    }
    stats_.write_calls++;
    const ssize_t r = write_fn_(fd_, data, size);
    if (r > 0) {
      const size_t written = static_cast<size_t>(r);
      if (RT_UNLIKELY(written > size)) {
        status_ = base::ErrStatus("write returned %zd > %zu", r, size);
        return;
      }
      if (written < size)
        stats_.short_writes++;
      stats_.bytes_written += written;
      data += written;
      size -= written;
      no_progress = 0;
      continue;
    }
    ++no_progress;
    if (r == 0)
      continue;  // nothing written, no error: try again (bounded)
    const int err = errno;
    if (err == EINTR) {
      stats_.eintr_retries++;
      continue;
    }
    if (err == EAGAIN || err == EWOULDBLOCK) {
      stats_.eagain_waits++;
      struct pollfd pfd = {};
      pfd.fd = fd_;
      pfd.events = POLLOUT;
      // Blocks like write(2) on a blocking fd would; EINTR just loops.
      if (poll(&pfd, 1, -1) < 0 && errno != EINTR) {
        status_ = base::ErrStatus("poll: %s", strerror(errno));
        return;
      }
      continue;
    }
    status_ = base::ErrStatus("write: %s", strerror(err));
    return;
  }
}

namespace {

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Opens a device or FIFO for writing, without truncating it. A FIFO is
// opened non-blocking (open(2) would otherwise wait for a reader forever),
// then made blocking for the writes.
int OpenDirect(const std::string& path, bool fifo, base::Status* status) {
  int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY;
  if (fifo)
    flags |= O_NONBLOCK;
  base::ScopedFd fd(open(path.c_str(), flags));
  if (!fd.valid()) {
    *status = base::ErrStatus(errno == ENXIO && fifo
                                  ? "cannot write %s: a FIFO nobody reads"
                                  : "cannot open %s: %s",
                              path.c_str(), strerror(errno));
    return -1;
  }
  if (fifo) {
    const int fl = fcntl(fd.get(), F_GETFL);
    if (fl < 0 || fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK) != 0) {
      *status = base::ErrStatus("%s: fcntl: %s", path.c_str(), strerror(errno));
      return -1;
    }
  }
  return fd.release();
}

// |temp| exists (O_EXCL failed). If it is the leftover of a ringtraced that
// died while writing (a regular file with one link, owned by our effective
// uid, under nobody's flock), takes it over: returns its fd, truncated and
// locked by us. Otherwise returns -1 with |*status| saying why: a live
// writer holds it, or it is something we will not touch.
int ReclaimLeftoverTemp(const std::string& path,
                        const std::string& temp,
                        base::Status* status) {
  base::ScopedFd fd(open(temp.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.valid()) {
    if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      const bool held = errno == EWOULDBLOCK;
      fd.reset();
      if (held) {
        *status = base::ErrStatus(
            "another ringtraced is writing %s (it holds %s); choose another "
            "output file",
            path.c_str(), temp.c_str());
        return -1;
      }
    } else {
      struct stat st = {};
      if (fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) &&
          st.st_nlink == 1 && st.st_uid == geteuid() &&
          ftruncate(fd.get(), 0) == 0) {
        RT_LOG("%s: taking over %s, left by a ringtraced that did not finish",
               path.c_str(), temp.c_str());
        return fd.release();
      }
    }
  }
  *status = base::ErrStatus(
      "cannot write %s: %s exists and is not a leftover of ours (not a "
      "regular file of this user, or linked elsewhere); remove it if no "
      "ringtraced is writing %s",
      path.c_str(), temp.c_str(), path.c_str());
  return -1;
}

}  // namespace

std::unique_ptr<TraceOutputFile> TraceOutputFile::Create(
    const std::string& path,
    base::Status* status) {
  if (path.empty()) {
    *status = base::ErrStatus("no output file name");
    return nullptr;
  }
  std::unique_ptr<TraceOutputFile> out(new TraceOutputFile());
  out->path_ = path;
  out->final_path_ = path;
  struct stat st = {};
  bool exists = false;
  if (lstat(path.c_str(), &st) == 0) {
    exists = true;
    if (S_ISLNK(st.st_mode)) {
      char resolved[PATH_MAX];
      if (stat(path.c_str(), &st) != 0 || !realpath(path.c_str(), resolved)) {
        *status = base::ErrStatus("cannot write %s: a symbolic link to nothing",
                                  path.c_str());
        return nullptr;
      }
      out->final_path_ = resolved;
    }
  } else if (errno != ENOENT) {
    *status =
        base::ErrStatus("cannot write %s: %s", path.c_str(), strerror(errno));
    return nullptr;
  }
  if (exists && !S_ISREG(st.st_mode)) {
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
      out->fd_.reset(
          OpenDirect(out->final_path_, S_ISFIFO(st.st_mode), status));
      if (!out->fd_.valid())
        return nullptr;
      *status = base::OkStatus();
      return out;
    }
    *status =
        base::ErrStatus("cannot write %s: it is %s", path.c_str(),
                        S_ISDIR(st.st_mode) ? "a directory"
                        : S_ISSOCK(st.st_mode)
                            ? "a socket"
                            : "not a regular file, character device or FIFO");
    return nullptr;
  }
  const std::string temp = out->final_path_ + kTempSuffix;
  int fd = open(temp.c_str(),
                O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  bool reclaimed = false;
  if (fd < 0 && errno == EEXIST) {
    fd = ReclaimLeftoverTemp(path, temp, status);
    if (fd < 0)
      return nullptr;
    reclaimed = true;
  } else if (fd < 0) {
    *status = base::ErrStatus("cannot write %s: cannot create %s: %s",
                              path.c_str(), temp.c_str(), strerror(errno));
    return nullptr;
  }
  out->fd_.reset(fd);
  out->temp_path_ = temp;
  struct stat tst = {};
  if (fstat(fd, &tst) != 0 ||
      (!reclaimed && flock(fd, LOCK_EX | LOCK_NB) != 0)) {
    *status = base::ErrStatus("cannot write %s: cannot lock %s: %s",
                              path.c_str(), temp.c_str(), strerror(errno));
    // We created the name with O_EXCL just now: remove it (the inode check
    // of Discard() needs an fstat that may be what failed).
    unlink(temp.c_str());
    out->temp_path_.clear();
    return nullptr;
  }
  out->temp_dev_ = tst.st_dev;
  out->temp_ino_ = tst.st_ino;
  *status = base::OkStatus();
  return out;
}

TraceOutputFile::~TraceOutputFile() {
  if (!committed_)
    Discard();
}

void TraceOutputFile::Discard() {
  if (!temp_path_.empty() && temp_ino_ != 0) {
    struct stat st = {};
    if (lstat(temp_path_.c_str(), &st) == 0 && st.st_dev == temp_dev_ &&
        st.st_ino == temp_ino_) {
      unlink(temp_path_.c_str());
    }
  }
  fd_.reset();
}

base::Status TraceOutputFile::Commit() {
  RT_CHECK(!committed_ && fd_.valid());
  base::Status status;
  if (fsync(fd_.get()) != 0 && errno != EINVAL && errno != EROFS)
    status = base::ErrStatus("%s: fsync: %s", path_.c_str(), strerror(errno));
  if (writes_directly()) {
    const int rc = fd_.Close();
    committed_ = true;
    if (rc != 0 && status.ok())
      status = base::ErrStatus("%s: close: %s", path_.c_str(), strerror(errno));
    return status;
  }
  if (!status.ok()) {
    Discard();
    return status;
  }
  // Renamed while our fd (and flock) is still open: a second writer cannot
  // create the temporary name before it is gone.
  if (rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    status = base::ErrStatus("cannot write %s: rename %s: %s", path_.c_str(),
                             temp_path_.c_str(), strerror(errno));
    Discard();
    return status;
  }
  committed_ = true;
  fd_.reset();  // fsync'ed above: nothing left for close to report
  const base::ScopedFd dir(
      open(DirName(final_path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.valid()) {
    // The rename itself is durable once the directory is synced; a failure
    // here is reported, the file is in place all the same.
    if (fsync(dir.get()) != 0 && errno != EINVAL && errno != EROFS)
      status = base::ErrStatus("%s: fsync of its directory: %s", path_.c_str(),
                               strerror(errno));
  }
  return status;
}

}  // namespace trace_export
}  // namespace ringtrace
