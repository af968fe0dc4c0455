/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/safe_file.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "src/base/test/other_user.h"
#include "src/base/test/subprocess.h"
#include "src/base/test/temp_dir.h"

namespace ringtrace {
namespace base {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Sets the umask for a scope.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(umask(mask)) {}
  ~ScopedUmask() { umask(old_); }

 private:
  const mode_t old_;
};

void WriteAll(int fd, const std::string& data) {
  ASSERT_EQ(write(fd, data.data(), data.size()),
            static_cast<ssize_t>(data.size()));
}

// A file of ours (not through PendingFile), with |mode| exactly.
void Plant(const std::string& path, const std::string& data, mode_t mode) {
  ASSERT_EQ(PlantFile(path.c_str(), data.c_str(), mode), 0) << path;
}

// The attributes a test compares to prove a file was not touched.
struct Untouched {
  explicit Untouched(const std::string& p) : path(p), before(Inspect(p)) {
    struct stat st = {};
    if (lstat(p.c_str(), &st) == 0) {
      ino = st.st_ino;
      mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    }
  }
  void Check() const {
    SCOPED_TRACE(path);
    const FileFacts now = Inspect(path);
    ASSERT_TRUE(now.exists);
    EXPECT_EQ(now.is_link, before.is_link);
    EXPECT_EQ(now.uid, before.uid);
    EXPECT_EQ(now.gid, before.gid);
    EXPECT_EQ(now.mode, before.mode);
    EXPECT_EQ(now.data, before.data);
    EXPECT_EQ(now.link_target, before.link_target);
    struct stat st = {};
    ASSERT_EQ(lstat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_ino, ino);
    EXPECT_EQ(st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec, mtime_ns);
  }
  std::string path;
  FileFacts before;
  ino_t ino = 0;
  long long mtime_ns = 0;
};

// Every test runs with O_TMPFILE (true) and with the named temporary file
// a file system without it gets (false).
class PendingFileTest : public ::testing::TestWithParam<bool> {
 protected:
  PendingFileOptions Options() const {
    PendingFileOptions options;
    options.use_tmpfile = GetParam();
    return options;
  }

  // Create(), a write of |data| and Commit() in one; the status of the
  // first step that failed.
  Status WriteWhole(const std::string& path,
                    const PendingFileOptions& options,
                    const std::string& data) {
    std::unique_ptr<PendingFile> file;
    Status status = PendingFile::Create(path, options, &file);
    if (!status.ok())
      return status;
    EXPECT_NE(file->fd(), -1);
    WriteAll(file->fd(), data);
    return file->Commit();
  }

  TempDir dir_{"ringtrace_safe_file"};
  const std::string out_ = dir_.File("trace.pftrace");
  // The fixed temporary name of the code before PendingFile.
  const std::string old_temp_ = out_ + ".ringtrace-tmp";
};

INSTANTIATE_TEST_SUITE_P(TmpfileAndNamed,
                         PendingFileTest,
                         ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param_info) {
                           return param_info.param ? "Tmpfile" : "NamedTemp";
                         });

// Rule 1: 0600 exactly, even under umask 0, owned by us; a previous file's
// mode (0644) is not inherited: it is replaced.
TEST_P(PendingFileTest, Mode0600WhateverTheUmask) {
  Plant(out_, "previous", 0644);
  ScopedUmask no_mask(0);
  ASSERT_TRUE(WriteWhole(out_, Options(), "trace").ok());
  const FileFacts facts = Inspect(out_);
  EXPECT_TRUE(facts.is_regular);
  EXPECT_EQ(facts.mode, 0600u);
  EXPECT_EQ(facts.uid, geteuid());
  EXPECT_EQ(facts.data, "trace");
  EXPECT_THAT(TempFilesBeside(out_), IsEmpty());

  // A umask that takes the owner's bits does not make the file unusable.
  ScopedUmask strict(0277);
  const std::string second = dir_.File("second");
  ASSERT_TRUE(WriteWhole(second, Options(), "x").ok());
  EXPECT_EQ(Inspect(second).mode, 0600u);
}

// Rule 1: a group makes it 0640 and that group's.
TEST_P(PendingFileTest, GroupMakesIt0640) {
  PendingFileOptions options = Options();
  // Root may give it any group; everyone may give it their own.
  options.group = CanActAsOtherUser() ? kNobodyGid : getegid();
  ScopedUmask no_mask(0);
  ASSERT_TRUE(WriteWhole(out_, options, "trace").ok());
  const FileFacts facts = Inspect(out_);
  EXPECT_EQ(facts.mode, 0640u);
  EXPECT_EQ(facts.gid, options.group);
}

// Until Commit() the path holds what it held; with O_TMPFILE the file has
// no name at all, else one temporary name of the documented form.
TEST_P(PendingFileTest, NothingAtThePathUntilCommit) {
  Plant(out_, "previous", 0600);
  std::unique_ptr<PendingFile> file;
  ASSERT_TRUE(PendingFile::Create(out_, Options(), &file).ok());
  WriteAll(file->fd(), "new");
  EXPECT_EQ(Inspect(out_).data, "previous");
  const std::vector<std::string> temps = TempFilesBeside(out_);
  if (GetParam()) {
    EXPECT_THAT(temps, IsEmpty());
    EXPECT_EQ(file->temp_path(), "");
  } else {
    ASSERT_EQ(temps.size(), 1u);
    EXPECT_EQ(temps[0].size(), strlen("trace.pftrace") +
                                   strlen(PendingFile::kTempInfix) +
                                   PendingFile::kTempSuffixLength);
    EXPECT_EQ(file->temp_path(), dir_.File(temps[0]));
    EXPECT_EQ(Inspect(file->temp_path()).mode, 0600u);
  }
  EXPECT_FALSE(Inspect(old_temp_).exists);
  ASSERT_TRUE(file->Commit().ok());
  EXPECT_TRUE(file->committed());
  EXPECT_EQ(file->fd(), -1);
  EXPECT_EQ(Inspect(out_).data, "new");
  EXPECT_THAT(TempFilesBeside(out_), IsEmpty());
  file.reset();  // the destructor leaves a committed file alone
  EXPECT_EQ(Inspect(out_).data, "new");
}

// Rule 2: names that exist beforehand, the old fixed one and a random one
// that is drawn first, are never opened, written, removed or changed: the
// next name is drawn.
TEST_P(PendingFileTest, PreexistingTempNamesAreNeverWrittenOrTouched) {
  const std::string taken =
      out_ + PendingFile::kTempInfix + std::string(12, 'A');
  Plant(old_temp_, "planted", 0666);
  Plant(taken, "planted too", 0666);
  const Untouched old_temp(old_temp_);
  const Untouched taken_temp(taken);
  PendingFileOptions options = Options();
  int drawn = 0;
  options.temp_suffix_for_testing = [&drawn] {
    return std::string(12, drawn++ == 0 ? 'A' : 'B');
  };
  ASSERT_TRUE(WriteWhole(out_, options, "trace").ok());
  EXPECT_EQ(drawn, 2);
  EXPECT_EQ(Inspect(out_).data, "trace");
  EXPECT_EQ(Inspect(out_).mode, 0600u);
  old_temp.Check();
  taken_temp.Check();
  // Only the planted name is left beside it.
  EXPECT_EQ(TempFilesBeside(out_),
            std::vector<std::string>{"trace.pftrace" +
                                     std::string(PendingFile::kTempInfix) +
                                     std::string(12, 'A')});

  // A discarded file leaves them too.
  {
    std::unique_ptr<PendingFile> file;
    drawn = 0;
    ASSERT_TRUE(PendingFile::Create(out_, options, &file).ok());
    WriteAll(file->fd(), "discarded");
  }
  old_temp.Check();
  taken_temp.Check();
  EXPECT_EQ(Inspect(out_).data, "trace");
}

// When every name drawn is taken the file fails, touching none of them.
TEST_P(PendingFileTest, EveryTempNameTakenFailsAndTouchesNothing) {
  const std::string taken =
      out_ + PendingFile::kTempInfix + std::string(12, 'A');
  Plant(out_, "previous", 0600);
  Plant(taken, "planted", 0666);
  const Untouched taken_temp(taken);
  PendingFileOptions options = Options();
  options.temp_suffix_for_testing = [] { return std::string(12, 'A'); };
  const Status status = WriteWhole(out_, options, "trace");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("cannot write " + out_ + ": no free temporary name"));
  taken_temp.Check();
  EXPECT_EQ(Inspect(out_).data, "previous");
}

// In a sticky directory like /tmp another user (nobody) pre-creates the
// temporary names, mode 0666. Our file is ours, 0600; theirs stay theirs,
// untouched.
TEST_P(PendingFileTest, AnotherUsersPreexistingTempIsNeverUsed) {
  if (!CanActAsOtherUser())
    GTEST_SKIP() << kNeedsRootMessage;
  const std::string shared = MakeSharedStickyDir(dir_.path());
  ASSERT_FALSE(shared.empty());
  const std::string out = shared + "/trace.pftrace";
  const std::string old_temp = out + ".ringtrace-tmp";
  const std::string taken =
      out + PendingFile::kTempInfix + std::string(12, 'A');
  ASSERT_EQ(RunAsNobody([&] {
              return PlantFile(old_temp.c_str(), "attacker", 0666) |
                     PlantFile(taken.c_str(), "attacker", 0666);
            }),
            0);
  ASSERT_EQ(Inspect(old_temp).uid, kNobodyUid);
  const Untouched old_one(old_temp);
  const Untouched taken_one(taken);
  PendingFileOptions options = Options();
  int drawn = 0;
  options.temp_suffix_for_testing = [&drawn] {
    return std::string(12, drawn++ == 0 ? 'A' : 'C');
  };
  ScopedUmask no_mask(0);
  ASSERT_TRUE(WriteWhole(out, options, "secret trace").ok());
  const FileFacts facts = Inspect(out);
  EXPECT_EQ(facts.uid, geteuid());
  EXPECT_EQ(facts.mode, 0600u);
  EXPECT_EQ(facts.data, "secret trace");
  old_one.Check();
  taken_one.Check();
  EXPECT_EQ(Inspect(old_temp).data, "attacker");
}

// In a sticky directory another user's file at the path cannot be
// replaced (rename(2) would fail with EPERM once the trace is written):
// refused at once, their file untouched. Here "another user" is root's
// file, and nobody writes.
TEST_P(PendingFileTest, AnotherUsersFileInAStickyDirectoryIsRefusedAtOnce) {
  if (!CanActAsOtherUser())
    GTEST_SKIP() << kNeedsRootMessage;
  // The child runs PendingFile (malloc...), safe after fork() only in a
  // process with one thread.
  if (ThreadsInThisProcess() != 1)
    GTEST_SKIP() << "the test process has other threads";
  const std::string shared = MakeSharedStickyDir(dir_.path());
  ASSERT_FALSE(shared.empty());
  const std::string out = shared + "/trace.pftrace";
  Plant(out, "root's", 0666);
  const Untouched theirs(out);
  const PendingFileOptions options = Options();
  const std::string expected =
      "cannot write " + out + ": " + out + " belongs to uid 0 and " + shared +
      " is a sticky directory: only its owner can replace it";
  EXPECT_EQ(RunAsNobody([&] {
              std::unique_ptr<PendingFile> file;
              const Status status = PendingFile::Create(out, options, &file);
              if (status.ok())
                return 1;
              return status.message().find(expected) == std::string::npos ? 2
                                                                          : 0;
            }),
            0)
      << expected;
  theirs.Check();
  EXPECT_THAT(TempFilesBeside(out), IsEmpty());
}

// Rule 4: a symbolic link at the path is refused, naming it; the file it
// names and the link stay as they are, nothing is created beside either.
TEST_P(PendingFileTest, SymlinkAtThePathIsRefused) {
  const std::string precious = dir_.File("precious");
  Plant(precious, "precious", 0644);
  ASSERT_EQ(symlink(precious.c_str(), out_.c_str()), 0);
  const Untouched target(precious);
  const Untouched link(out_);
  PendingFileOptions options = Options();
  options.follow_hint = "--out-symlink follow writes through it";
  const Status status = WriteWhole(out_, options, "trace");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("refusing to write " + out_ +
                        ": it is a symbolic link (to " + precious +
                        ", owned by uid " + std::to_string(geteuid()) + ")"));
  EXPECT_THAT(status.message(),
              HasSubstr("; --out-symlink follow writes through it"));
  target.Check();
  link.Check();
  EXPECT_THAT(TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(TempFilesBeside(precious), IsEmpty());
}

// A dangling one too: the message says so, and its target is not created.
TEST_P(PendingFileTest, DanglingSymlinkIsRefused) {
  const std::string nowhere = dir_.File("nowhere");
  ASSERT_EQ(symlink(nowhere.c_str(), out_.c_str()), 0);
  const Status status = WriteWhole(out_, Options(), "trace");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("refusing to write " + out_ +
                                          ": it is a symbolic link (to " +
                                          nowhere + ", which does not exist"));
  EXPECT_FALSE(Inspect(nowhere).exists);
  EXPECT_TRUE(Inspect(out_).is_link);
}

// With follow_symlink the file the link names is replaced (0600), the
// link stays.
TEST_P(PendingFileTest, FollowSymlinkReplacesTheFileItNames) {
  const std::string precious = dir_.File("precious");
  Plant(precious, "old", 0644);
  ASSERT_EQ(symlink("precious", out_.c_str()), 0);  // relative
  PendingFileOptions options = Options();
  options.follow_symlink = true;
  std::unique_ptr<PendingFile> file;
  ASSERT_TRUE(PendingFile::Create(out_, options, &file).ok());
  EXPECT_EQ(file->final_path(), precious);
  WriteAll(file->fd(), "via link");
  ASSERT_TRUE(file->Commit().ok());
  const FileFacts link = Inspect(out_);
  EXPECT_TRUE(link.is_link);
  EXPECT_EQ(link.link_target, "precious");
  EXPECT_EQ(Inspect(precious).data, "via link");
  EXPECT_EQ(Inspect(precious).mode, 0600u);
  EXPECT_THAT(TempFilesBeside(precious), IsEmpty());
}

// ... and a dangling chain of links creates the file at its end.
TEST_P(PendingFileTest, FollowSymlinkCreatesTheTargetOfADanglingLink) {
  ASSERT_EQ(mkdir(dir_.File("sub").c_str(), 0700), 0);
  const std::string end = dir_.File("sub/end");
  ASSERT_EQ(symlink("sub/middle", out_.c_str()), 0);
  ASSERT_EQ(symlink("end", dir_.File("sub/middle").c_str()), 0);
  PendingFileOptions options = Options();
  options.follow_symlink = true;
  ScopedUmask no_mask(0);
  ASSERT_TRUE(WriteWhole(out_, options, "created").ok());
  EXPECT_EQ(Inspect(end).data, "created");
  EXPECT_EQ(Inspect(end).mode, 0600u);
  EXPECT_TRUE(Inspect(out_).is_link);
  EXPECT_TRUE(Inspect(dir_.File("sub/middle")).is_link);

  // A loop is an error, not a hang.
  const std::string a = dir_.File("loop_a");
  ASSERT_EQ(symlink("loop_b", a.c_str()), 0);
  ASSERT_EQ(symlink("loop_a", dir_.File("loop_b").c_str()), 0);
  const Status status = WriteWhole(a, options, "x");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("cannot write " + a));
}

// Rule 3: a link that appears at the path while the file is written is
// not replaced by Commit(): refused, our file discarded.
TEST_P(PendingFileTest, SymlinkPlantedBeforeCommitIsRefused) {
  const std::string precious = dir_.File("precious");
  Plant(precious, "precious", 0644);
  std::unique_ptr<PendingFile> file;
  ASSERT_TRUE(PendingFile::Create(out_, Options(), &file).ok());
  WriteAll(file->fd(), "trace");
  ASSERT_EQ(symlink(precious.c_str(), out_.c_str()), 0);
  const Untouched target(precious);
  const Untouched link(out_);
  const Status status = file->Commit();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("refusing to write " + out_ + ": " +
                                          out_ + " became a symbolic link"));
  EXPECT_FALSE(file->committed());
  target.Check();
  link.Check();
  EXPECT_THAT(TempFilesBeside(out_), IsEmpty());
}

// Rule 8: with no_clobber nothing at the path is replaced: Create() refuses
// what is there, and a file that appears before Commit() is kept.
TEST_P(PendingFileTest, NoClobberRefusesWhatExistsAndWhatAppears) {
  PendingFileOptions options = Options();
  options.no_clobber = true;
  options.no_clobber_hint = "drop --no-clobber to replace it";
  Plant(out_, "previous", 0644);
  {
    const Untouched previous(out_);
    std::unique_ptr<PendingFile> file;
    const Status status = PendingFile::Create(out_, options, &file);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.message(), "refusing to overwrite " + out_ +
                                    ": it exists (a file); drop --no-clobber "
                                    "to replace it");
    previous.Check();
  }
  const std::string dangling = dir_.File("dangling");
  ASSERT_EQ(symlink(dir_.File("nowhere").c_str(), dangling.c_str()), 0);
  std::unique_ptr<PendingFile> refused;
  EXPECT_THAT(PendingFile::Create(dangling, options, &refused).message(),
              HasSubstr("it exists (a symbolic link)"));

  // A new path: written as usual.
  const std::string fresh = dir_.File("fresh.pftrace");
  ASSERT_TRUE(WriteWhole(fresh, options, "new").ok());
  EXPECT_EQ(Inspect(fresh).data, "new");

  // A file that appears while the trace is written wins.
  const std::string raced = dir_.File("raced.pftrace");
  std::unique_ptr<PendingFile> file;
  ASSERT_TRUE(PendingFile::Create(raced, options, &file).ok());
  WriteAll(file->fd(), "trace");
  Plant(raced, "theirs", 0644);
  const Untouched theirs(raced);
  const Status status = file->Commit();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("refusing to overwrite " + raced +
                                          ": it appeared while the trace was "
                                          "written, and is kept"));
  EXPECT_FALSE(file->committed());
  theirs.Check();
  EXPECT_THAT(TempFilesBeside(raced), IsEmpty());
}

// Rule 5: Discard() and the destructor remove only our temporary file.
TEST_P(PendingFileTest, DiscardKeepsThePreviousFile) {
  Plant(out_, "previous", 0644);
  std::unique_ptr<PendingFile> file;
  ASSERT_TRUE(PendingFile::Create(out_, Options(), &file).ok());
  WriteAll(file->fd(), "partial");
  file->Discard();
  EXPECT_EQ(file->fd(), -1);
  EXPECT_EQ(Inspect(out_).data, "previous");
  EXPECT_EQ(Inspect(out_).mode, 0644u);
  EXPECT_THAT(TempFilesBeside(out_), IsEmpty());
  const Status again = file->Commit();
  EXPECT_FALSE(again.ok());
  EXPECT_THAT(again.message(), HasSubstr("already finished"));
  EXPECT_EQ(Inspect(out_).data, "previous");

  {
    std::unique_ptr<PendingFile> dropped;
    ASSERT_TRUE(PendingFile::Create(out_, Options(), &dropped).ok());
  }
  EXPECT_EQ(Inspect(out_).data, "previous");
  EXPECT_THAT(TempFilesBeside(out_), IsEmpty());
}

// A named temporary file replaced by someone else is theirs: Discard()
// leaves it.
TEST(PendingFileNamedTest, DiscardLeavesATempNameThatIsNoLongerOurs) {
  TempDir dir("ringtrace_safe_file");
  const std::string out = dir.File("t");
  PendingFileOptions options;
  options.use_tmpfile = false;
  std::unique_ptr<PendingFile> file;
  ASSERT_TRUE(PendingFile::Create(out, options, &file).ok());
  const std::string temp = file->temp_path();
  ASSERT_FALSE(temp.empty());
  ASSERT_EQ(unlink(temp.c_str()), 0);
  Plant(temp, "someone else's", 0644);
  file->Discard();
  EXPECT_EQ(Inspect(temp).data, "someone else's");
}

// A failed rename removes our file and keeps what is at the path.
TEST_P(PendingFileTest, FailedRenameKeepsThePath) {
  std::unique_ptr<PendingFile> file;
  ASSERT_TRUE(PendingFile::Create(out_, Options(), &file).ok());
  // The path became a non-empty directory: rename(2) fails.
  ASSERT_EQ(mkdir(out_.c_str(), 0700), 0);
  Plant(out_ + "/x", "x", 0600);
  const Status status = file->Commit();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("cannot write " + out_ + ": cannot rename "));
  EXPECT_THAT(TempFilesBeside(out_), IsEmpty());
  EXPECT_EQ(Inspect(out_ + "/x").data, "x");
}

TEST_P(PendingFileTest, DirectoriesAndMissingDirectories) {
  std::unique_ptr<PendingFile> file;
  Status status = PendingFile::Create(dir_.path(), Options(), &file);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("cannot write " + dir_.path() + ": it is a directory"));
  EXPECT_EQ(file, nullptr);

  const std::string missing = dir_.File("no/such/t.pftrace");
  status = PendingFile::Create(missing, Options(), &file);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("cannot write " + missing + ": directory " +
                        dir_.File("no/such") + ": No such file"));
  status = PendingFile::Create("", Options(), &file);
  EXPECT_FALSE(status.ok());
}

// Rule 6: devices and FIFOs only with allow_direct, written in place.
TEST(PendingFileDirectTest, DevicesAndFifos) {
  TempDir dir("ringtrace_safe_file");
  PendingFileOptions regular_only;
  std::unique_ptr<PendingFile> file;
  Status status = PendingFile::Create("/dev/null", regular_only, &file);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("cannot write /dev/null: it is a character device "
                        "(only a regular file can be written here)"));

  PendingFileOptions direct;
  direct.allow_direct = true;
  ASSERT_TRUE(PendingFile::Create("/dev/null", direct, &file).ok());
  EXPECT_TRUE(file->writes_directly());
  EXPECT_EQ(file->final_path(), "");
  WriteAll(file->fd(), "x");
  EXPECT_TRUE(file->Commit().ok());
  struct stat st = {};
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));

  // A FIFO: nobody reads, a failure at once; with a reader, the bytes
  // arrive; the FIFO stays.
  const std::string fifo = dir.File("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  status = PendingFile::Create(fifo, direct, &file);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("cannot write " + fifo + ": a FIFO nobody reads"));
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  ASSERT_TRUE(PendingFile::Create(fifo, direct, &file).ok());
  WriteAll(file->fd(), "piped");
  EXPECT_TRUE(file->Commit().ok());
  char buf[16] = {};
  EXPECT_EQ(read(reader, buf, sizeof(buf)), 5);
  EXPECT_STREQ(buf, "piped");
  close(reader);
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_THAT(TempFilesBeside(fifo), IsEmpty());

  // Through a link of our own (like /dev/stdout, root's), without
  // follow_symlink.
  const std::string link = dir.File("null_link");
  ASSERT_EQ(symlink("/dev/null", link.c_str()), 0);
  ASSERT_TRUE(PendingFile::Create(link, direct, &file).ok());
  EXPECT_TRUE(file->writes_directly());
  EXPECT_TRUE(file->Commit().ok());
  EXPECT_TRUE(Inspect(link).is_link);
  status = PendingFile::Create(link, regular_only, &file);
  EXPECT_FALSE(status.ok());
}

// Another user's link to a device is not followed without follow_symlink:
// it is how a trace would reach a device (or FIFO) that user chose.
TEST(PendingFileDirectTest, AnotherUsersLinkToADeviceIsRefused) {
  if (!CanActAsOtherUser())
    GTEST_SKIP() << kNeedsRootMessage;
  TempDir dir("ringtrace_safe_file");
  const std::string shared = MakeSharedStickyDir(dir.path());
  ASSERT_FALSE(shared.empty());
  const std::string link = shared + "/trace";
  ASSERT_EQ(RunAsNobody([&] { return symlink("/dev/null", link.c_str()); }), 0);
  PendingFileOptions direct;
  direct.allow_direct = true;
  std::unique_ptr<PendingFile> file;
  const Status status = PendingFile::Create(link, direct, &file);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("refusing to write " + link +
                        ": it is a symbolic link (to /dev/null, owned by "
                        "uid 65534)"));
  direct.follow_symlink = true;
  ASSERT_TRUE(PendingFile::Create(link, direct, &file).ok());
  EXPECT_TRUE(file->writes_directly());
  EXPECT_TRUE(file->Commit().ok());
}

// Another user's link at the path, to a file of
// ours, in a sticky directory: refused, both untouched; with follow_symlink
// the file it names is replaced, and is ours and 0600.
TEST_P(PendingFileTest, AnotherUsersSymlinkToOurFile) {
  if (!CanActAsOtherUser())
    GTEST_SKIP() << kNeedsRootMessage;
  const std::string shared = MakeSharedStickyDir(dir_.path());
  ASSERT_FALSE(shared.empty());
  const std::string precious = dir_.File("precious");
  Plant(precious, "precious", 0644);
  const std::string out = shared + "/trace.pftrace";
  ASSERT_EQ(RunAsNobody([&] { return symlink(precious.c_str(), out.c_str()); }),
            0);
  const Untouched target(precious);
  const Untouched link(out);
  Status status = WriteWhole(out, Options(), "trace");
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("refusing to write " + out +
                                          ": it is a symbolic link (to " +
                                          precious + ", owned by uid 65534)"));
  target.Check();
  link.Check();

  PendingFileOptions options = Options();
  options.follow_symlink = true;
  ASSERT_TRUE(WriteWhole(out, options, "trace").ok());
  EXPECT_EQ(Inspect(precious).data, "trace");
  EXPECT_EQ(Inspect(precious).mode, 0600u);
  link.Check();
}

}  // namespace
}  // namespace base
}  // namespace ringtrace
