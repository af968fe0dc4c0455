/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ScopedFd: owns one file descriptor and closes it on destruction (or on
// reset()). The only place in product code that calls close(2) on an fd it
// owns: every component holds its descriptors in one of these, so an early
// return cannot leak one.
//
// Thread model: a ScopedFd is a plain value; one thread at a time.

#ifndef SRC_BASE_SCOPED_FD_H_
#define SRC_BASE_SCOPED_FD_H_

namespace ringtrace {
namespace base {

// Owns one file descriptor (closed on destruction); -1 means none.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() { reset(); }
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other)
      reset(other.release());
    return *this;
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership: the caller closes the returned fd.
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the owned fd (if any) and takes |fd|.
  void reset(int fd = -1);
  // Closes the owned fd and returns close(2)'s result (0 when none was
  // owned), for callers that must report a failed close (a file written
  // with write-back errors).
  int Close();

 private:
  int fd_ = -1;
};

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_SCOPED_FD_H_
