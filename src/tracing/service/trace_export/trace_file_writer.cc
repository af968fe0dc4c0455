/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/trace_export/trace_file_writer.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
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

uint8_t* TraceFileWriter::ReserveSlow(size_t size) {
  RT_CHECK(size <= batch_size_);
  if (!status_.ok())
    return nullptr;
  WriteFully(batch_.get(), used_);
  used_ = 0;
  if (!status_.ok()) {
    used_ = batch_size_;  // keeps the fast paths closed
    return nullptr;
  }
  return batch_.get();
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

}  // namespace trace_export
}  // namespace ringtrace
