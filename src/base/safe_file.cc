/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/safe_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

namespace ringtrace {
namespace base {

namespace {

// Links followed before ELOOP, as the kernel's limit.
constexpr int kMaxLinkHops = 40;

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// What a symbolic link holds; "?" if it cannot be read (for messages).
std::string ReadLink(const std::string& path) {
  char buf[PATH_MAX];
  const ssize_t n = readlink(path.c_str(), buf, sizeof(buf));
  if (n < 0 || static_cast<size_t>(n) >= sizeof(buf))
    return "?";
  return std::string(buf, static_cast<size_t>(n));
}

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISFIFO(mode))
    return "a FIFO";
  return "not a regular file";
}

std::string ProcFdPath(int fd) {
  return "/proc/self/fd/" + std::to_string(fd);
}

// fsync that accepts the files which cannot be synced (a pipe, /dev/null,
// a read-only file system's file).
bool Sync(int fd) {
  return fsync(fd) == 0 || errno == EINVAL || errno == EROFS;
}

// |n| random bytes from getrandom(2), else /dev/urandom.
bool RandomBytes(uint8_t* out, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = getrandom(out + got, n - got, 0);
    if (r > 0) {
      got += static_cast<size_t>(r);
      continue;
    }
    if (r < 0 && errno == EINTR)
      continue;
    break;
  }
  if (got == n)
    return true;
  const ScopedFd urandom(open("/dev/urandom", O_RDONLY | O_CLOEXEC));
  while (urandom.valid() && got < n) {
    const ssize_t r = read(urandom.get(), out + got, n - got);
    if (r > 0)
      got += static_cast<size_t>(r);
    else if (!(r < 0 && errno == EINTR))
      break;
  }
  return got == n;
}

}  // namespace

constexpr gid_t PendingFileOptions::kNoGroup;
constexpr const char* PendingFile::kTempInfix;
constexpr size_t PendingFile::kTempSuffixLength;
constexpr int PendingFile::kMaxTempAttempts;

PendingFile::PendingFile(const std::string& path,
                         const PendingFileOptions& options)
    : path_(path), options_(options) {}

PendingFile::~PendingFile() {
  Discard();
}

// static
Status PendingFile::Create(const std::string& path,
                           const PendingFileOptions& options,
                           std::unique_ptr<PendingFile>* file) {
  file->reset();
  if (path.empty())
    return ErrStatus("no output file name");
  std::unique_ptr<PendingFile> pending(new PendingFile(path, options));
  Status status = pending->Open();
  if (!status.ok()) {
    pending->Discard();
    return status;
  }
  *file = std::move(pending);
  return OkStatus();
}

std::string PendingFile::final_path() const {
  if (direct_ || name_.empty())
    return std::string();
  return dir_ == "/" ? "/" + name_ : dir_ + "/" + name_;
}

std::string PendingFile::temp_path() const {
  if (temp_name_.empty())
    return std::string();
  return dir_ == "/" ? "/" + temp_name_ : dir_ + "/" + temp_name_;
}

Status PendingFile::Fail(const char* what, int err) {
  return ErrStatus("cannot write %s: %s: %s", path_.c_str(), what,
                   strerror(err));
}

Status PendingFile::Open() {
  struct stat lst = {};
  if (lstat(path_.c_str(), &lst) != 0) {
    if (errno != ENOENT)
      return ErrStatus("cannot write %s: %s", path_.c_str(), strerror(errno));
    return OpenTemp(path_);  // a new file
  }
  if (options_.no_clobber) {  // rule 8
    const char* kind = S_ISREG(lst.st_mode)   ? "a file"
                       : S_ISLNK(lst.st_mode) ? "a symbolic link"
                                              : KindOf(lst.st_mode);
    return ErrStatus("refusing to overwrite %s: it exists (%s)%s%s",
                     path_.c_str(), kind,
                     options_.no_clobber_hint.empty() ? "" : "; ",
                     options_.no_clobber_hint.c_str());
  }
  if (S_ISREG(lst.st_mode))
    return OpenTemp(path_);  // replaced at Commit()
  if (!S_ISLNK(lst.st_mode)) {
    if (options_.allow_direct &&
        (S_ISCHR(lst.st_mode) || S_ISFIFO(lst.st_mode)))
      return OpenDirect(S_ISFIFO(lst.st_mode));
    return ErrStatus("cannot write %s: it is %s%s", path_.c_str(),
                     KindOf(lst.st_mode),
                     options_.allow_direct || S_ISDIR(lst.st_mode)
                         ? ""
                         : " (only a regular file can be written here)");
  }
  // A symbolic link (rule 4; rule 6 for one that leads to a device).
  struct stat st = {};
  const bool resolves = stat(path_.c_str(), &st) == 0;
  const bool dangling = !resolves && errno == ENOENT;
  const bool device = resolves && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
  const bool trusted_link = lst.st_uid == 0 || lst.st_uid == geteuid();
  if (device && options_.allow_direct &&
      (trusted_link || options_.follow_symlink)) {
    return OpenDirect(S_ISFIFO(st.st_mode));
  }
  if (!options_.follow_symlink) {
    return ErrStatus(
        "refusing to write %s: it is a symbolic link (to %s%s, owned by uid "
        "%u); a trace file is not written through a symbolic link%s%s",
        path_.c_str(), ReadLink(path_).c_str(),
        dangling ? ", which does not exist" : "",
        static_cast<unsigned>(lst.st_uid),
        options_.follow_hint.empty() ? "" : "; ", options_.follow_hint.c_str());
  }
  std::string target;
  Status status = ResolveLinks(&target);
  if (!status.ok())
    return status;
  if (lstat(target.c_str(), &st) != 0) {
    if (errno != ENOENT)
      return ErrStatus("cannot write %s: %s: %s", path_.c_str(), target.c_str(),
                       strerror(errno));
    return OpenTemp(target);  // a dangling link: its target is created
  }
  if (!S_ISREG(st.st_mode)) {
    return ErrStatus("cannot write %s: it leads to %s, which is %s",
                     path_.c_str(), target.c_str(), KindOf(st.st_mode));
  }
  return OpenTemp(target);
}

Status PendingFile::ResolveLinks(std::string* target) {
  std::string current = path_;
  for (int hops = 0;; ++hops) {
    if (hops > kMaxLinkHops)
      return Fail("resolving its symbolic links", ELOOP);
    struct stat st = {};
    if (lstat(current.c_str(), &st) != 0) {
      if (errno == ENOENT)
        break;
      return ErrStatus("cannot write %s: %s: %s", path_.c_str(),
                       current.c_str(), strerror(errno));
    }
    if (!S_ISLNK(st.st_mode))
      break;
    char buf[PATH_MAX];
    const ssize_t n = readlink(current.c_str(), buf, sizeof(buf));
    if (n <= 0 || static_cast<size_t>(n) >= sizeof(buf))
      return Fail("readlink", n < 0 ? errno : ENAMETOOLONG);
    std::string next(buf, static_cast<size_t>(n));
    if (next[0] != '/') {
      std::string relative = DirName(current);
      relative += '/';
      relative += next;
      next = std::move(relative);
    }
    current = std::move(next);
  }
  *target = current;
  return OkStatus();
}

Status PendingFile::OpenDirect(bool fifo) {
  // No O_CREAT, no O_TRUNC: a device or FIFO is used as it is. A FIFO is
  // opened non-blocking (open(2) would wait for a reader forever), then
  // made blocking for the writes.
  int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY;
  if (fifo)
    flags |= O_NONBLOCK;
  ScopedFd fd(open(path_.c_str(), flags));
  if (!fd.valid()) {
    if (fifo && errno == ENXIO)
      return ErrStatus("cannot write %s: a FIFO nobody reads", path_.c_str());
    return ErrStatus("cannot open %s: %s", path_.c_str(), strerror(errno));
  }
  // What was opened is still a device or FIFO: anything swapped in since
  // the lstat is left as it was (opened without O_TRUNC, nothing written).
  struct stat st = {};
  if (fstat(fd.get(), &st) != 0)
    return Fail("fstat", errno);
  if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    return ErrStatus("cannot write %s: it changed while it was opened (now %s)",
                     path_.c_str(), KindOf(st.st_mode));
  }
  if (fifo) {
    const int fl = fcntl(fd.get(), F_GETFL);
    if (fl < 0 || fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK) != 0)
      return Fail("fcntl", errno);
  }
  fd_ = std::move(fd);
  direct_ = true;
  return OkStatus();
}

Status PendingFile::OpenTemp(const std::string& target) {
  dir_ = DirName(target);
  name_ = BaseName(target);
  if (name_.empty() || name_ == "." || name_ == "..")
    return ErrStatus("cannot write %s: it is a directory", path_.c_str());
  dir_fd_.reset(open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd_.valid()) {
    return ErrStatus("cannot write %s: directory %s: %s", path_.c_str(),
                     dir_.c_str(), strerror(errno));
  }
  // In a sticky directory (like /tmp) only the owner of a file, of the
  // directory, or root may replace the file: fail now, not once the whole
  // trace was written and rename(2) says EPERM.
  struct stat dir_st = {};
  struct stat old_st = {};
  const uid_t euid = geteuid();
  if (euid != 0 && fstat(dir_fd_.get(), &dir_st) == 0 &&
      (dir_st.st_mode & S_ISVTX) && dir_st.st_uid != euid &&
      fstatat(dir_fd_.get(), name_.c_str(), &old_st, AT_SYMLINK_NOFOLLOW) ==
          0 &&
      old_st.st_uid != euid) {
    return ErrStatus(
        "cannot write %s: %s belongs to uid %u and %s is a sticky directory: "
        "only its owner can replace it",
        path_.c_str(), final_path().c_str(),
        static_cast<unsigned>(old_st.st_uid), dir_.c_str());
  }
  if (options_.use_tmpfile) {
    // Unnamed: nobody can open it, nothing is left if we die.
    fd_.reset(openat(dir_fd_.get(), ".", O_TMPFILE | O_WRONLY | O_CLOEXEC,
                     S_IRUSR | S_IWUSR));
    // Without O_TMPFILE in the kernel or the file system: EISDIR,
    // EOPNOTSUPP (EINVAL for some).
    if (!fd_.valid() && errno != EOPNOTSUPP && errno != EISDIR &&
        errno != EINVAL) {
      return Fail("cannot create a file in its directory", errno);
    }
    // Commit() names it through /proc/self/fd (linkat with AT_EMPTY_PATH
    // needs CAP_DAC_READ_SEARCH): without /proc, the named file instead of
    // a trace that could not be put in place at the end.
    struct stat proc_st = {};
    if (fd_.valid() && euid != 0 &&
        stat(ProcFdPath(fd_.get()).c_str(), &proc_st) != 0) {
      fd_.reset();
    }
  }
  if (fd_.valid()) {
    struct stat st = {};
    if (fstat(fd_.get(), &st) != 0)
      return Fail("fstat", errno);
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  } else {
    Status status = CreateNamedTemp();
    if (!status.ok())
      return status;
  }
  // Rule 1, exactly: the umask only ever removed bits from 0600.
  mode_t mode = S_IRUSR | S_IWUSR;
  if (options_.group != PendingFileOptions::kNoGroup) {
    if (fchown(fd_.get(), static_cast<uid_t>(-1), options_.group) != 0) {
      const int err = errno;
      return ErrStatus("cannot write %s: cannot give it group %u: %s",
                       path_.c_str(), static_cast<unsigned>(options_.group),
                       strerror(err));
    }
    mode |= S_IRGRP;
  }
  if (fchmod(fd_.get(), mode) != 0)
    return Fail("fchmod", errno);
  return OkStatus();
}

bool PendingFile::NextTempName(std::string* name) {
  std::string suffix;
  if (options_.temp_suffix_for_testing) {
    suffix = options_.temp_suffix_for_testing();
  } else {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    uint8_t bytes[kTempSuffixLength];
    if (!RandomBytes(bytes, sizeof(bytes)))
      return false;
    for (uint8_t b : bytes)
      suffix += kAlphabet[b % (sizeof(kAlphabet) - 1)];
  }
  // Within NAME_MAX: a long name is shortened, the random part never.
  const size_t room = NAME_MAX - strlen(kTempInfix) - suffix.size();
  *name = name_.substr(0, room) + kTempInfix + suffix;
  return true;
}

Status PendingFile::CreateNamedTemp() {
  for (int attempt = 0; attempt < kMaxTempAttempts; ++attempt) {
    std::string name;
    if (!NextTempName(&name))
      return Fail("no random bytes for a temporary name", errno ? errno : EIO);
    // O_EXCL: a name that exists, whatever it is (a file, a link), is not
    // opened; someone else's, it stays as it is and another name is drawn.
    fd_.reset(openat(dir_fd_.get(), name.c_str(),
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     S_IRUSR | S_IWUSR));
    if (fd_.valid()) {
      struct stat st = {};
      if (fstat(fd_.get(), &st) != 0) {
        // Created by us a moment ago (O_EXCL), but without its inode
        // Discard() could not tell it is still ours: removed here.
        const Status status = Fail("fstat", errno);
        fd_.reset();
        unlinkat(dir_fd_.get(), name.c_str(), 0);
        return status;
      }
      dev_ = st.st_dev;
      ino_ = st.st_ino;
      temp_name_ = name;
      return OkStatus();
    }
    if (errno != EEXIST)
      return Fail("cannot create a temporary file", errno);
  }
  return Fail("no free temporary name", EEXIST);
}

Status PendingFile::LinkTmpfile() {
  const std::string proc_fd = ProcFdPath(fd_.get());
  for (int attempt = 0; attempt < kMaxTempAttempts; ++attempt) {
    std::string name;
    if (!NextTempName(&name))
      return Fail("no random bytes for a temporary name", errno ? errno : EIO);
    // linkat never replaces: a taken name is EEXIST and stays as it was.
    // Through /proc first (AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH).
    int rc = linkat(AT_FDCWD, proc_fd.c_str(), dir_fd_.get(), name.c_str(),
                    AT_SYMLINK_FOLLOW);
    if (rc != 0 && errno == ENOENT) {
      rc = linkat(fd_.get(), "", dir_fd_.get(), name.c_str(), AT_EMPTY_PATH);
    }
    if (rc == 0) {
      temp_name_ = name;
      return OkStatus();
    }
    if (errno != EEXIST)
      return Fail("linkat", errno);
  }
  return Fail("no free temporary name", EEXIST);
}

Status PendingFile::Size(uint64_t* bytes) const {
  struct stat st = {};
  if (!fd_.valid() || fstat(fd_.get(), &st) != 0)
    return ErrStatus("cannot stat %s", path_.c_str());
  *bytes = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
  return OkStatus();
}

Status PendingFile::Commit() {
  if (done_)
    return ErrStatus("%s was already finished", path_.c_str());
  // fsync reports write-back errors of every write through this open file
  // description, the service's through its copy of the fd included.
  if (!Sync(fd_.get())) {
    const Status status = Fail("fsync", errno);
    Discard();
    return status;
  }
  if (direct_) {
    const int rc = fd_.Close();
    const int err = errno;
    done_ = committed_ = true;
    return rc == 0 ? OkStatus() : Fail("close", err);
  }
  Status status;
  if (temp_name_.empty())
    status = LinkTmpfile();
  if (status.ok() && fd_.Close() != 0)
    status = Fail("close", errno);
  if (!status.ok()) {
    Discard();
    return status;
  }
  // Rule 3: never renamed onto a symbolic link, not even one that appeared
  // after Create() looked (rename(2) would replace the link, not follow
  // it, but a link there is not what the user asked to replace).
  struct stat st = {};
  if (fstatat(dir_fd_.get(), name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISLNK(st.st_mode)) {
    status = ErrStatus(
        "refusing to write %s: %s became a symbolic link while the file was "
        "written; it was left as it is",
        path_.c_str(), final_path().c_str());
    Discard();
    return status;
  }
  const int rc = options_.no_clobber
                     ? renameat2(dir_fd_.get(), temp_name_.c_str(),
                                 dir_fd_.get(), name_.c_str(), RENAME_NOREPLACE)
                     : renameat(dir_fd_.get(), temp_name_.c_str(),
                                dir_fd_.get(), name_.c_str());
  if (rc != 0) {
    if (options_.no_clobber && errno == EEXIST) {
      status = ErrStatus(
          "refusing to overwrite %s: it appeared while the trace was "
          "written, and is kept; the trace was discarded",
          final_path().c_str());
    } else {
      status = ErrStatus("cannot write %s: cannot rename %s to %s: %s",
                         path_.c_str(), temp_path().c_str(),
                         final_path().c_str(), strerror(errno));
    }
    Discard();
    return status;
  }
  temp_name_.clear();
  done_ = committed_ = true;
  // The rename is durable once the directory is synced; a failure here is
  // reported, the file is in place all the same.
  if (!Sync(dir_fd_.get()))
    status = Fail("fsync of its directory", errno);
  dir_fd_.reset();
  return status;
}

void PendingFile::Discard() {
  if (done_)
    return;
  done_ = true;
  fd_.reset();
  if (!temp_name_.empty() && dir_fd_.valid()) {
    // Rule 5: only while the name is still the inode we created.
    struct stat st = {};
    if (fstatat(dir_fd_.get(), temp_name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) ==
            0 &&
        st.st_dev == dev_ && st.st_ino == ino_) {
      unlinkat(dir_fd_.get(), temp_name_.c_str(), 0);
    }
  }
  temp_name_.clear();
  dir_fd_.reset();
}

}  // namespace base
}  // namespace ringtrace
