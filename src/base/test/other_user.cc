/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/test/other_user.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "src/base/safe_file.h"
#include "src/base/scoped_fd.h"

namespace ringtrace {
namespace base {

const char kNeedsRootMessage[] =
    "needs root: the other user's step runs as uid 65534 (nobody), and only "
    "root can switch to it";

bool CanActAsOtherUser() {
  return geteuid() == 0;
}

int RunAsNobody(const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    // Groups first: once the uid is nobody's, they cannot change.
    if (setgroups(0, nullptr) != 0 ||
        setresgid(kNobodyGid, kNobodyGid, kNobodyGid) != 0 ||
        setresuid(kNobodyUid, kNobodyUid, kNobodyUid) != 0) {
      _exit(126);
    }
    umask(0);
    _exit(body());
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return -1;
  }
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

std::string MakeSharedStickyDir(const std::string& dir) {
  const std::string shared = dir + "/shared";
  if (chmod(dir.c_str(), 0711) != 0 || mkdir(shared.c_str(), 0700) != 0 ||
      chmod(shared.c_str(), 01777) != 0) {
    return std::string();
  }
  return shared;
}

int PlantFile(const char* path, const char* data, mode_t mode) {
  const int fd =
      open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0)
    return 1;
  const size_t size = strlen(data);
  const bool ok = fchmod(fd, mode) == 0 &&
                  write(fd, data, size) == static_cast<ssize_t>(size);
  return close(fd) == 0 && ok ? 0 : 2;
}

FileFacts Inspect(const std::string& path) {
  FileFacts facts;
  struct stat st = {};
  if (lstat(path.c_str(), &st) != 0)
    return facts;
  facts.exists = true;
  facts.is_link = S_ISLNK(st.st_mode);
  facts.is_regular = S_ISREG(st.st_mode);
  facts.uid = st.st_uid;
  facts.gid = st.st_gid;
  facts.mode = st.st_mode & 07777;
  if (facts.is_link) {
    char buf[PATH_MAX];
    const ssize_t n = readlink(path.c_str(), buf, sizeof(buf));
    if (n > 0)
      facts.link_target.assign(buf, static_cast<size_t>(n));
    return facts;
  }
  if (!facts.is_regular)
    return facts;
  const ScopedFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  char buf[4096];
  ssize_t n;
  while (fd.valid() && (n = read(fd.get(), buf, sizeof(buf))) > 0)
    facts.data.append(buf, static_cast<size_t>(n));
  return facts;
}

std::vector<std::string> TempFilesBeside(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string prefix =
      (slash == std::string::npos ? path : path.substr(slash + 1)) +
      PendingFile::kTempInfix;
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (!d)
    return names;
  while (struct dirent* e = readdir(d)) {
    if (strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0)
      names.push_back(e->d_name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace base
}  // namespace ringtrace
