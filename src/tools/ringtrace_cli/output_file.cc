/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

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

namespace {

// The spool of -o -: an unnamed file in |dir|, readable and writable by us
// alone (fchmod: whatever the umask), or a memfd where |dir|'s file system
// has no O_TMPFILE.
base::Status CreateSpool(const std::string& dir, base::ScopedFd* spool) {
  // O_EXCL: the file can never be given a name.
  spool->reset(open(dir.c_str(), O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC,
                    S_IRUSR | S_IWUSR));
  if (!spool->valid()) {
    const int err = errno;
    // Without O_TMPFILE in the kernel or the file system: EISDIR,
    // EOPNOTSUPP (EINVAL for some).
    if (err != EOPNOTSUPP && err != EISDIR && err != EINVAL) {
      return base::ErrStatus(
          "-o -: cannot create the temporary file that holds the trace until "
          "it is complete in %s: %s ($TMPDIR chooses the directory)",
          dir.c_str(), strerror(err));
    }
    spool->reset(memfd_create("ringtrace-stdout", MFD_CLOEXEC));
    if (!spool->valid()) {
      return base::ErrStatus(
          "-o -: %s has no O_TMPFILE and memfd_create failed: %s "
          "($TMPDIR chooses the directory)",
          dir.c_str(), strerror(errno));
    }
  }
  if (fchmod(spool->get(), S_IRUSR | S_IWUSR) != 0) {
    const int err = errno;
    spool->reset();
    return base::ErrStatus("-o -: fchmod of the temporary file: %s",
                           strerror(err));
  }
  return base::OkStatus();
}

// Writes |size| bytes of |data| to |fd|, waiting (poll) where |fd| is
// non-blocking and full. |*written| counts what was accepted.
base::Status WriteAll(int fd,
                      const char* data,
                      size_t size,
                      uint64_t* written) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = write(fd, data + done, size - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      *written += static_cast<uint64_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd pfd = {fd, POLLOUT, 0};
      if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
        return base::ErrStatus("poll: %s", strerror(errno));
      continue;
    }
    if (n == 0)
      return base::ErrStatus("write accepted nothing");
    if (errno == EPIPE)
      return base::ErrStatus("the reader closed the pipe");
    return base::ErrStatus("%s", strerror(errno));
  }
  return base::OkStatus();
}

}  // namespace

base::Status TraceOutput::ForFile(const std::string& path,
                                  bool follow_symlink,
                                  bool no_clobber,
                                  std::unique_ptr<TraceOutput>* output) {
  output->reset();
  std::unique_ptr<TraceOutput> out(new TraceOutput());
  out->path_ = path;
  base::Status status =
      CreateOutputFile(path, follow_symlink, &out->file_, no_clobber);
  if (!status.ok())
    return status;
  *output = std::move(out);
  return base::OkStatus();
}

base::Status TraceOutput::ForStdout(int stdout_fd,
                                    std::unique_ptr<TraceOutput>* output,
                                    const std::string& spool_dir) {
  output->reset();
  const int flags = fcntl(stdout_fd, F_GETFL);
  if (flags < 0)
    return base::ErrStatus("-o -: stdout is closed");
  if ((flags & O_ACCMODE) == O_RDONLY)
    return base::ErrStatus("-o -: stdout is not open for writing");
  if (isatty(stdout_fd)) {
    return base::ErrStatus(
        "-o -: refusing to write the trace to stdout: it is a terminal, and a "
        "trace is binary data; redirect stdout (ringtrace -o - ... > "
        "trace.pftrace, or | into a program), or give -o FILE");
  }
  std::string dir = spool_dir;
  if (dir.empty()) {
    const char* tmpdir = getenv("TMPDIR");
    dir = tmpdir && tmpdir[0] != '\0' ? tmpdir : "/tmp";
  }
  std::unique_ptr<TraceOutput> out(new TraceOutput());
  out->path_ = kStdoutPath;
  out->stdout_fd_ = stdout_fd;
  base::Status status = CreateSpool(dir, &out->spool_);
  if (!status.ok())
    return status;
  *output = std::move(out);
  return base::OkStatus();
}

TraceOutput::~TraceOutput() {
  Discard();
}

int TraceOutput::fd() const {
  if (file_)
    return file_->fd();
  return spool_.get();
}

std::string TraceOutput::name() const {
  return to_stdout() ? "stdout" : path_;
}

base::Status TraceOutput::Size(uint64_t* bytes) const {
  if (file_)
    return file_->Size(bytes);
  struct stat st = {};
  if (!spool_.valid() || fstat(spool_.get(), &st) != 0)
    return base::ErrStatus("-o -: the temporary file is gone");
  *bytes = static_cast<uint64_t>(st.st_size);
  return base::OkStatus();
}

base::Status TraceOutput::Commit() {
  if (done_)
    return base::ErrStatus("%s: already committed or discarded",
                           name().c_str());
  done_ = true;
  if (file_)
    return file_->Commit();
  base::Status status = CopySpoolToStdout();
  spool_.reset();
  return status;
}

base::Status TraceOutput::CopySpoolToStdout() {
  uint64_t size = 0;
  base::Status status = Size(&size);
  if (!status.ok())
    return status;
  std::vector<char> block(
      static_cast<size_t>(std::min<uint64_t>(size, kCopyBlockBytes)));
  uint64_t copied = 0;
  // pread: the offset of the fd, which the service shares, stays where the
  // service's writes left it.
  while (copied < size) {
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(size - copied, block.size()));
    const ssize_t n =
        pread(spool_.get(), block.data(), want, static_cast<off_t>(copied));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      return base::ErrStatus("-o -: reading the temporary file at %" PRIu64
                             " of %" PRIu64 " bytes: %s",
                             copied, size,
                             n < 0 ? strerror(errno) : "it ended early");
    }
    uint64_t written = 0;
    status =
        WriteAll(stdout_fd_, block.data(), static_cast<size_t>(n), &written);
    copied += written;
    if (!status.ok()) {
      return base::ErrStatus(
          "-o -: writing the trace to stdout failed after "
          "%" PRIu64 " of %" PRIu64 " bytes: %s",
          copied, size, status.message().c_str());
    }
  }
  return base::OkStatus();
}

void TraceOutput::Discard() {
  if (done_)
    return;
  done_ = true;
  if (file_)
    file_->Discard();
  spool_.reset();
}

}  // namespace cli
}  // namespace ringtrace
