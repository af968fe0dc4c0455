/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Forked producer processes for the cross-process tests: a child
// that runs a body and _exit()s (never returning into gtest), killed and
// reaped by the parent on every path so a failing test never leaves a
// producer behind or hangs CI; objects shared across fork() in anonymous
// MAP_SHARED memory; /proc helpers to see whether a child sleeps.

#ifndef SRC_TRACING_SERVICE_RING_DRAINER_TEST_CHILD_PROCESS_H_
#define SRC_TRACING_SERVICE_RING_DRAINER_TEST_CHILD_PROCESS_H_

#include <stdint.h>
#include <sys/mman.h>
#include <sys/types.h>

#include <functional>
#include <new>
#include <string>

#include "src/base/logging.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

// Exit codes of a child.
constexpr int kChildOk = 0;
constexpr int kChildOrphaned = 70;  // the parent was gone at start

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

// The number of threads of this process (/proc/self/status), 0 if unknown.
uint32_t ThreadsInThisProcess();

// The state letter of process |pid| in /proc/<pid>/stat ('R', 'S', ...), or
// 0 if it cannot be read.
char ProcessState(pid_t pid);

// A forked child. The child runs |body| and _exit()s with its result; it
// never returns into gtest. While it runs, the parent side owns it: the
// destructor kills (SIGKILL) and reaps a child that is still running, so a
// failing test never leaves a producer behind.
class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess() {
    if (running())
      Kill();
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Forks. Returns false if this process has other threads (a child of a
  // multi-threaded process may inherit a lock held by a thread that does
  // not exist in it) or if fork() failed. Never returns in the child.
  bool Start(const std::function<int()>& body);

  bool running() const { return pid_ > 0; }

  // Non-blocking. True once the child ended (ExitedOk(), KilledBy() and
  // DescribeStatus() then tell how).
  bool Ended();

  // SIGKILL, then reap (a killed child always ends, so this cannot block).
  void Kill();

  // True if the child is asleep in the kernel (state 'S'). The child is
  // single-threaded, and while it is registered in num_writers_waiting its
  // only blocking call is FUTEX_WAIT (ring_wait.h, W4): registered and
  // asleep means asleep on the futex.
  bool IsAsleep() const { return ProcessState(pid_) == 'S'; }

  // "exited with N" / "killed by signal N", for failure messages.
  std::string DescribeStatus() const;
  bool ExitedOk() const {
    return WIFEXITED(status_) && WEXITSTATUS(status_) == kChildOk;
  }
  bool KilledBy(int sig) const {
    return WIFSIGNALED(status_) && WTERMSIG(status_) == sig;
  }

 private:
  pid_t pid_ = -1;
  int status_ = 0;
};

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_RING_DRAINER_TEST_CHILD_PROCESS_H_
