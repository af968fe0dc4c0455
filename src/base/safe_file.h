/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// PendingFile: how ringtrace and ringtraced create every trace file (the
// CLI's -o FILE, its --clone and SIGUSR1 snapshots, the fd a write_into_file
// session streams into, ringtraced's --out FILE and its snapshots). The file
// appears at its path whole, after Commit(), or not at all, and nobody else
// can have prepared, or can reach, what is written into it.
//
// The rules (docs/sessions.md, "Trace files"):
//   1. Mode 0600 (0640 with PendingFileOptions::group, which names the
//      file's group), set with fchmod whatever the umask, owned by the
//      caller. A file at the path is replaced, never written into.
//   2. Nothing is written through a name someone else could have created
//      first: the file is an unnamed O_TMPFILE file in the target's
//      directory. Where the file system has no O_TMPFILE (or /proc, through
//      which Commit() names it, is missing for a non-root user), a name
//      "<name>.ringtrace-tmp.<12 random characters>" is created with
//      O_CREAT | O_EXCL | O_NOFOLLOW; a name that is taken is left alone and
//      another one is drawn.
//   3. Commit(): fsync, close; the O_TMPFILE file gets such a random name
//      (linkat, which never replaces anything); then lstat of the final path:
//      a symbolic link there is refused (it appeared meanwhile); else
//      rename(2) onto it and fsync of the directory. The directory is held
//      open from Create() on: every step names the same directory.
//   4. A symbolic link at the path is refused with a message that names it,
//      dangling or not, unless PendingFileOptions::follow_symlink: then the
//      chain of links is read (readlink, never written) and the file it ends
//      at is created or replaced, the links stay.
//   5. Only what this object created is ever removed: on failure, Discard()
//      or destruction, its temporary name, and only while that name still
//      names the inode it created. A previous file at the path is kept.
//   6. A character device or a FIFO (/dev/null, a pipe, /dev/stdout on a
//      terminal or pipe) is written directly when
//      PendingFileOptions::allow_direct: opened without O_CREAT or O_TRUNC
//      (a FIFO must have a reader: a non-blocking open fails instead of
//      waiting), checked with fstat to still be one, nothing created or
//      renamed. Reached through a symbolic link, that needs the link to be
//      root's or the caller's own (/dev/stdout is root's), or
//      follow_symlink. Without allow_direct they are refused, as are a
//      directory, a socket and a block device.
//   7. In a sticky directory (/tmp) another user's file at the path, which
//      only its owner, the directory's owner or root may replace, is
//      refused by Create(), not by the rename once the trace is written.
//   8. PendingFileOptions::no_clobber: anything at the path (a file, a
//      link, dangling or not, a device) makes Create() fail, and Commit()
//      puts the file in place with renameat2(RENAME_NOREPLACE), so a file
//      that appeared meanwhile is kept and the commit fails (the trace is
//      then discarded, as on any failed commit).
// Every error names the path, and no error leaves anything behind.
//
// Thread model: one thread owns a PendingFile.

#ifndef SRC_BASE_SAFE_FILE_H_
#define SRC_BASE_SAFE_FILE_H_

#include <stdint.h>
#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include "ringtrace/status.h"
#include "src/base/scoped_fd.h"

namespace ringtrace {
namespace base {

struct PendingFileOptions {
  static constexpr gid_t kNoGroup = static_cast<gid_t>(-1);

  // Rule 4: write through a symbolic link at the path.
  bool follow_symlink = false;
  // Appended to the message that refuses a symbolic link: how the user
  // asks to follow it ("--out-symlink follow writes through it").
  std::string follow_hint;
  // Rule 6: write a character device or a FIFO directly.
  bool allow_direct = false;
  // Rule 1: kNoGroup for 0600; else the file's group, mode 0640 (the caller
  // must be a member of the group, or root).
  gid_t group = kNoGroup;
  // Rule 8: never replace anything at the path.
  bool no_clobber = false;
  // Appended to the no_clobber refusal: how the user lifts it.
  std::string no_clobber_hint;

  // TEST ONLY. False: no O_TMPFILE, the named temporary file of rule 2.
  bool use_tmpfile = true;
  // TEST ONLY. When set, draws the random part of the temporary names.
  std::function<std::string()> temp_suffix_for_testing;
};

class PendingFile {
 public:
  // The temporary names: <name> + kTempInfix + kTempSuffixLength random
  // characters of [A-Za-z0-9].
  static constexpr const char* kTempInfix = ".ringtrace-tmp.";
  static constexpr size_t kTempSuffixLength = 12;
  // Taken names tried before giving up.
  static constexpr int kMaxTempAttempts = 100;

  // Opens the output for |path| (rules 1, 2, 4, 6). On failure |*file| is
  // null and nothing was created.
  static Status Create(const std::string& path,
                       const PendingFileOptions& options,
                       std::unique_ptr<PendingFile>* file);

  // Discard()s unless committed.
  ~PendingFile();
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

  // Where the bytes go; -1 after Commit() or Discard().
  int fd() const { return fd_.get(); }
  // The path given to Create().
  const std::string& path() const { return path_; }
  // The path Commit() renames onto: path(), or where its symbolic links
  // lead (follow_symlink); empty when writing directly.
  std::string final_path() const;
  // The temporary file's name while it has one (the O_TMPFILE file has none
  // until Commit()); empty otherwise.
  std::string temp_path() const;
  // A character device or FIFO, written in place (rule 6).
  bool writes_directly() const { return direct_; }
  bool committed() const { return committed_; }

  // The bytes written so far (fstat; 0 for a FIFO or device).
  Status Size(uint64_t* bytes) const;

  // Rule 3. Makes the file final; on failure it is discarded and the path
  // holds what it held before. A failed fsync of the directory is reported
  // with the file already in place (committed() is true). Once only: a
  // second call, or one after Discard(), is an error.
  Status Commit();

  // Closes the file and removes its temporary name, if any (rule 5). The
  // path keeps what it held.
  void Discard();

 private:
  PendingFile(const std::string& path, const PendingFileOptions& options);

  Status Open();
  // Rule 4 with follow_symlink: where the chain of links at path_ ends.
  Status ResolveLinks(std::string* target);
  // Rule 6 on path_; |fifo| as lstat/stat saw it.
  Status OpenDirect(bool fifo);
  // Rules 1 and 2 in the directory of |target|.
  Status OpenTemp(const std::string& target);
  // A fresh temporary name (rule 2); false if no random bytes.
  bool NextTempName(std::string* name);
  // Rule 2's fallback: a named temporary file, into fd_ and temp_name_.
  Status CreateNamedTemp();
  // Rule 3: names the O_TMPFILE file.
  Status LinkTmpfile();
  Status Fail(const char* what, int err);

  const std::string path_;
  const PendingFileOptions options_;
  std::string dir_;        // the directory of the final path
  std::string name_;       // the final path's last component
  std::string temp_name_;  // in dir_; empty: none (yet)
  base::ScopedFd dir_fd_;  // dir_, open from Create() to Commit()
  base::ScopedFd fd_;
  dev_t dev_ = 0;  // the inode we created
  ino_t ino_ = 0;
  bool direct_ = false;
  bool done_ = false;  // committed or discarded
  bool committed_ = false;
};

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_SAFE_FILE_H_
