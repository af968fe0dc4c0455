/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceFileWriter: buffered, bounded writes of a trace to a file descriptor.
//
// Bytes are appended into a fixed batch buffer (64 KiB by default, allocated
// once) and written out with write(2) whenever it is full, or on Flush(). A
// single append larger than the free room is split, so no write(2) call is
// ever larger than the batch and memory stays bounded whatever is appended.
//
// write(2) outcomes, all handled:
//   - a short write (pipes, sockets, signals): the rest is written again;
//   - EINTR: retried;
//   - EAGAIN / EWOULDBLOCK (a non-blocking fd): poll(2) for POLLOUT, then
//     retried, so a non-blocking fd behaves like a blocking one;
//   - any other error, or kMaxNoProgressRetries consecutive calls that wrote
//     nothing: the writer latches the error. Later appends are ignored, and
//     status() / Flush() report the first error. Nothing is retried after
//     that, so a dead disk never makes the service spin.
//
// The fd is not owned (the caller opens, fsyncs and closes it; trace files
// are created by base::PendingFile, src/base/safe_file.h). The writer
// never seeks: it works on files, pipes and sockets alike. Its errors name
// the call ("write: No space left on device"), not the fd: the caller, who
// knows the path, prefixes it.
//
// Thread model: not thread-safe; one thread appends and flushes.

#ifndef SRC_TRACING_SERVICE_TRACE_EXPORT_TRACE_FILE_WRITER_H_
#define SRC_TRACING_SERVICE_TRACE_EXPORT_TRACE_FILE_WRITER_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <memory>
#include <string>

#include "ringtrace/logging.h"
#include "ringtrace/status.h"

namespace ringtrace {
namespace trace_export {

struct TraceFileWriterStats {
  uint64_t bytes_appended = 0;  // accepted by Append() before any error
  uint64_t bytes_written = 0;   // accepted by write(2)
  uint64_t write_calls = 0;     // write(2) calls, failed ones included
  uint64_t short_writes = 0;    // calls that wrote less than asked
  uint64_t eintr_retries = 0;
  uint64_t eagain_waits = 0;  // poll(2) waits on a non-blocking fd
};

class TraceFileWriter {
 public:
  static constexpr size_t kDefaultBatchSize = 64 * 1024;
  // Consecutive write(2) calls without progress (EINTR, 0 bytes, EAGAIN)
  // tolerated before the writer gives up.
  static constexpr uint32_t kMaxNoProgressRetries = 10000;

  // write(2)'s signature; tests inject short writes and errors through it.
  using WriteFn = ssize_t (*)(int fd, const void* buf, size_t count);

  struct Options {
    size_t batch_size = kDefaultBatchSize;  // > 0
    WriteFn write_fn = nullptr;             // null: ::write
  };

  explicit TraceFileWriter(int fd) : TraceFileWriter(fd, Options()) {}
  TraceFileWriter(int fd, const Options& options);
  // Does NOT flush: call Flush() and check its status.
  ~TraceFileWriter();

  TraceFileWriter(const TraceFileWriter&) = delete;
  TraceFileWriter& operator=(const TraceFileWriter&) = delete;

  // Appends |size| bytes. Ignored once an error is latched.
  inline void Append(const void* data, size_t size) {
    if (RT_LIKELY(size <= batch_size_ - used_)) {
      memcpy(batch_.get() + used_, data, size);
      used_ += size;
      stats_.bytes_appended += size;
      return;
    }
    AppendSlow(static_cast<const uint8_t*>(data), size);
  }

  // Direct appends, for a caller that builds bytes in place: room for
  // |size| bytes (at most batch_size()) at the end of the batch, which is
  // written out first if needed. Returns where to write them, or nullptr
  // once an error is latched. The caller writes at most |size| bytes there
  // and then Commit()s how many it wrote (nothing else in between).
  inline uint8_t* Reserve(size_t size) {
    if (RT_LIKELY(size <= batch_size_ - used_))
      return batch_.get() + used_;
    return ReserveSlow(size);
  }
  inline void Commit(size_t size) {
    RT_DCHECK(size <= batch_size_ - used_);
    used_ += size;
    stats_.bytes_appended += size;
  }

  // Writes out everything appended so far. Returns the latched error if any.
  base::Status Flush();

  const base::Status& status() const { return status_; }
  bool failed() const { return !status_.ok(); }
  const TraceFileWriterStats& stats() const { return stats_; }
  size_t batch_size() const { return batch_size_; }

 private:
  void AppendSlow(const uint8_t* data, size_t size);
  uint8_t* ReserveSlow(size_t size);
  // Writes |size| bytes from |data| completely, or latches an error.
  void WriteFully(const uint8_t* data, size_t size);

  const int fd_;
  const size_t batch_size_;
  const WriteFn write_fn_;
  std::unique_ptr<uint8_t[]> batch_;
  size_t used_ = 0;
  base::Status status_;
  TraceFileWriterStats stats_;
};

}  // namespace trace_export
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_EXPORT_TRACE_FILE_WRITER_H_
