/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. What the tests of trace file creation (src/base/safe_file.h)
// need to play another local user: a directory shared like /tmp (sticky,
// world-writable), a forked child that acts as "nobody" (uid and gid 65534)
// to plant files and links there, and a look at a file and at what was left
// beside it. Switching uids needs root: a test checks CanActAsOtherUser()
// and GTEST_SKIP()s otherwise.
//
// Thread model: one thread.

#ifndef SRC_BASE_TEST_OTHER_USER_H_
#define SRC_BASE_TEST_OTHER_USER_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace ringtrace {
namespace base {

constexpr uid_t kNobodyUid = 65534;
constexpr gid_t kNobodyGid = 65534;

// The message of the GTEST_SKIP()s of tests that need another uid.
extern const char kNeedsRootMessage[];

// True when this process may become another user (it runs as root).
bool CanActAsOtherUser();

// Runs |body| in a forked child as kNobodyUid / kNobodyGid (no
// supplementary groups, umask 0) and returns its result (0: it worked), or
// 126 if the child could not switch, -1 if fork failed, 128 + N if signal N
// ended it. |body| must only make async-signal-safe calls (open, write,
// close, symlink, mkfifo, fchmod...): the test process may have threads.
int RunAsNobody(const std::function<int()>& body);

// Makes |dir| (a TempDir, mode 0700) searchable by everyone (0711) and
// creates |dir|/shared with mode 01777, like /tmp. Returns its path, "" on
// failure.
std::string MakeSharedStickyDir(const std::string& dir);

// Creates |path| (O_EXCL) with |mode| (exactly: fchmod) holding |data|.
// For RunAsNobody() bodies: async-signal-safe. 0 on success.
int PlantFile(const char* path, const char* data, mode_t mode);

// What lstat says of |path|, and what it holds if it is a regular file.
struct FileFacts {
  bool exists = false;
  bool is_link = false;
  bool is_regular = false;
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0;  // the permission bits (07777)
  std::string link_target;
  std::string data;
};
FileFacts Inspect(const std::string& path);

// The names, sorted, in the directory of |path| that begin with its name
// and PendingFile::kTempInfix: temporary files left beside it.
std::vector<std::string> TempFilesBeside(const std::string& path);

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_TEST_OTHER_USER_H_
