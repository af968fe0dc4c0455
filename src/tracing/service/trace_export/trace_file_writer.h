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
// The fd is not owned (the caller opens, fsyncs and closes it). The writer
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
#include "src/base/scoped_fd.h"

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

  // Writes out everything appended so far. Returns the latched error if any.
  base::Status Flush();

  const base::Status& status() const { return status_; }
  bool failed() const { return !status_.ok(); }
  const TraceFileWriterStats& stats() const { return stats_; }
  size_t batch_size() const { return batch_size_; }

 private:
  void AppendSlow(const uint8_t* data, size_t size);
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

// TraceOutputFile: the file a trace is written to, so that a trace file
// appears whole or not at all and no file the service did not create is
// ever truncated or removed.
//
// For a regular file (or a path that does not exist yet) the trace is
// written to "<path>.ringtraced-tmp" in the same directory, created with
// O_EXCL and held under an exclusive flock(2) while it is written, and
// Commit() renames it over <path> once it is complete (after fsync, then an
// fsync of the directory). A failure before that, or destruction without
// Commit(), removes only that temporary file (if the name still names the
// inode we created); <path> keeps whatever it held. A symbolic link is
// followed: the file it points to is replaced, the link stays.
//
// A second writer of the same path is refused by Create(): the temporary
// name exists and its flock is held ("another ringtraced is writing PATH").
// If nobody holds it, its writer died without cleaning up (SIGKILL, power
// loss): a leftover that is ours beyond doubt (a regular file with one
// link, owned by this effective uid) is taken over (locked, truncated, and
// renamed into place at Commit(), like a file we created), so a restart
// after a crash just works; anything else at that name (another user's
// file, a hard link, a symlink, a directory) is refused, named, untouched.
//
// Not a regular file: a character device (/dev/null, /dev/full, a tty) or a
// FIFO is written directly (no temporary file, nothing to rename; a FIFO
// must have a reader when Create() runs). A directory, a socket, a block
// device or a dangling link is refused. Every error names the path.
//
// Thread model: one thread.
class TraceOutputFile {
 public:
  static constexpr const char* kTempSuffix = ".ringtraced-tmp";

  // Opens the output for |path|; null with |*status| set on failure.
  static std::unique_ptr<TraceOutputFile> Create(const std::string& path,
                                                 base::Status* status);
  // Removes the temporary file unless Commit() succeeded.
  ~TraceOutputFile();

  TraceOutputFile(const TraceOutputFile&) = delete;
  TraceOutputFile& operator=(const TraceOutputFile&) = delete;

  // Where the trace bytes go (a temporary file, or the device / FIFO).
  int fd() const { return fd_.get(); }
  // The path given to Create().
  const std::string& path() const { return path_; }
  // The temporary file; empty when writing directly.
  const std::string& temp_path() const { return temp_path_; }
  bool writes_directly() const { return temp_path_.empty(); }
  // Commit() put the file in place (it may still report a failed fsync of
  // the directory).
  bool committed() const { return committed_; }

  // Makes the output final: fsync and close the fd, then (regular files)
  // rename the temporary file over the target and fsync the directory.
  // Errors name path(); after one the temporary file is removed and the
  // target is untouched. Call at most once.
  base::Status Commit();

 private:
  TraceOutputFile() = default;
  // Closes fd_ and removes the temporary file if it is still ours.
  void Discard();

  std::string path_;        // as given
  std::string final_path_;  // the target after following a symlink
  std::string temp_path_;   // empty: writing directly
  dev_t temp_dev_ = 0;
  ino_t temp_ino_ = 0;
  base::ScopedFd fd_;
  bool committed_ = false;
};

}  // namespace trace_export
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_EXPORT_TRACE_FILE_WRITER_H_
