/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Support for the cross-process tests, whose producers are
// children forked with base::Subprocess::Fork() (src/base/test/subprocess.h):
// objects shared across fork() in anonymous MAP_SHARED memory, and a /proc
// helper to see whether a child sleeps.

#ifndef SRC_TRACING_SERVICE_RING_DRAINER_TEST_CHILD_PROCESS_H_
#define SRC_TRACING_SERVICE_RING_DRAINER_TEST_CHILD_PROCESS_H_

#include <stdint.h>
#include <sys/mman.h>
#include <sys/types.h>

#include <new>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

// Exit code of a child that checked everything it was asked to
// (base::Subprocess::ExitedOk()).
constexpr int kChildOk = 0;

// A T placed in an anonymous MAP_SHARED mapping: after fork() parent and
// child see the same object. T must be usable across processes (atomics
// that are always lock-free, plain data).
template <typename T>
class SharedObject {
 public:
  SharedObject() {
    mem_ = mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    RT_CHECK(mem_ != MAP_FAILED);
    obj_ = new (mem_) T();
  }
  ~SharedObject() {
    obj_->~T();
    munmap(mem_, sizeof(T));
  }
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;

  T* get() const { return obj_; }
  T* operator->() const { return obj_; }

 private:
  void* mem_ = nullptr;
  T* obj_ = nullptr;
};

// The state letter of process |pid| in /proc/<pid>/stat ('R', 'S', ...), or
// 0 if it cannot be read.
char ProcessState(pid_t pid);

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_RING_DRAINER_TEST_CHILD_PROCESS_H_
