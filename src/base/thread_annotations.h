/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Clang thread-safety annotations and an annotated mutex.
//
// The RT_* macros expand to clang's thread-safety attributes under clang
// (checked by -Wthread-safety, which the clang configurations enable, see
// gn/BUILD.gn) and to nothing under gcc. libstdc++'s std::mutex carries no
// annotations, so the checked code uses base::Mutex / base::MutexLock below:
//
//   base::Mutex mutex_;
//   int count_ RT_GUARDED_BY(mutex_) = 0;
//   void Add() {
//     base::MutexLock lock(&mutex_);
//     ++count_;
//   }
//
// Condition variables wait on MutexLock::native() (a std::unique_lock over
// the wrapped std::mutex). The analysis does not see the wait release and
// re-take the mutex, which matches what the code after the wait may assume.
// A predicate lambda is analysed on its own: it states that the mutex is
// held with Mutex::AssertHeld().

#ifndef SRC_BASE_THREAD_ANNOTATIONS_H_
#define SRC_BASE_THREAD_ANNOTATIONS_H_

#include <mutex>

#if defined(__clang__)
#define RT_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define RT_THREAD_ANNOTATION(x)
#endif

#define RT_CAPABILITY(x) RT_THREAD_ANNOTATION(capability(x))
#define RT_SCOPED_CAPABILITY RT_THREAD_ANNOTATION(scoped_lockable)
#define RT_GUARDED_BY(x) RT_THREAD_ANNOTATION(guarded_by(x))
#define RT_PT_GUARDED_BY(x) RT_THREAD_ANNOTATION(pt_guarded_by(x))
#define RT_ACQUIRE(...) RT_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RT_RELEASE(...) RT_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RT_REQUIRES(...) RT_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define RT_EXCLUDES(...) RT_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define RT_ASSERT_CAPABILITY(x) RT_THREAD_ANNOTATION(assert_capability(x))
#define RT_NO_THREAD_SAFETY_ANALYSIS \
  RT_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace ringtrace {
namespace base {

// A std::mutex the analysis knows as a capability.
class RT_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() RT_ACQUIRE() { mutex_.lock(); }
  void Unlock() RT_RELEASE() { mutex_.unlock(); }
  // Tells the analysis the caller holds the mutex (checks nothing at run
  // time); for lambdas run under a lock, such as condition predicates.
  void AssertHeld() const RT_ASSERT_CAPABILITY(this) {}

  std::mutex& native() { return mutex_; }

 private:
  std::mutex mutex_;
};

// Holds |mutex| for its scope; Unlock()/Lock() drop and retake it inside.
class RT_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mutex) RT_ACQUIRE(mutex) : lock_(mutex->native()) {}
  ~MutexLock() RT_RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RT_RELEASE() { lock_.unlock(); }
  void Lock() RT_ACQUIRE() { lock_.lock(); }

  // For std::condition_variable::wait*.
  std::unique_lock<std::mutex>& native() { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_THREAD_ANNOTATIONS_H_
