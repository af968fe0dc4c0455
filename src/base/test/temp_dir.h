/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. TempDir: a fresh private directory under /tmp (mkdtemp, mode
// 0700) for a test's socket and trace files. The destructor removes it with
// everything a test left in it (files, links, sockets, subdirectories),
// without following symbolic links, so a failing test leaves nothing behind.
//
// Thread model: one thread creates and destroys it; path() is immutable.

#ifndef SRC_BASE_TEST_TEMP_DIR_H_
#define SRC_BASE_TEST_TEMP_DIR_H_

#include <string>

namespace ringtrace {
namespace base {

class TempDir {
 public:
  // Creates /tmp/<prefix>_XXXXXX. A failure is fatal (RT_CHECK): no test can
  // run without its directory.
  explicit TempDir(const std::string& prefix = "ringtrace_test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // The path of |name| inside the directory (not created).
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_TEST_TEMP_DIR_H_
