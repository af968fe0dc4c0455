/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/output_file.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "src/base/test/temp_dir.h"

namespace ringtrace {
namespace cli {
namespace {

using ::testing::HasSubstr;

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::string ReadFile(const std::string& path) {
  std::string data;
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return "<missing>";
  char buf[256];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0)
    data.append(buf, static_cast<size_t>(n));
  close(fd);
  return data;
}

void WriteFile(const std::string& path, const std::string& data) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, data.data(), data.size()),
            static_cast<ssize_t>(data.size()));
  close(fd);
}

class PendingOutputFileTest : public ::testing::Test {
 protected:
  base::TempDir dir_;
  const std::string out_ = dir_.File("trace.pftrace");
  const std::string temp_ = out_ + ".ringtrace-tmp";
};

TEST_F(PendingOutputFileTest, CommitRenamesOntoOut) {
  WriteFile(out_, "previous");
  std::unique_ptr<PendingOutputFile> file;
  ASSERT_TRUE(PendingOutputFile::Create(out_, &file).ok());
  EXPECT_EQ(file->temp_path(), temp_);
  ASSERT_EQ(write(file->fd(), "trace", 5), 5);
  uint64_t size = 0;
  ASSERT_TRUE(file->Size(&size).ok());
  EXPECT_EQ(size, 5u);
  // Until the commit, OUT is the previous file.
  EXPECT_EQ(ReadFile(out_), "previous");
  ASSERT_TRUE(file->Commit().ok());
  EXPECT_EQ(file->fd(), -1);
  EXPECT_EQ(ReadFile(out_), "trace");
  EXPECT_FALSE(Exists(temp_));
  file.reset();  // the destructor leaves a committed file alone
  EXPECT_EQ(ReadFile(out_), "trace");
}

TEST_F(PendingOutputFileTest, DiscardLeavesPreviousOut) {
  WriteFile(out_, "previous");
  std::unique_ptr<PendingOutputFile> file;
  ASSERT_TRUE(PendingOutputFile::Create(out_, &file).ok());
  ASSERT_EQ(write(file->fd(), "partial", 7), 7);
  EXPECT_TRUE(Exists(temp_));
  file->Discard();
  EXPECT_FALSE(Exists(temp_));
  EXPECT_EQ(ReadFile(out_), "previous");
  base::Status again = file->Commit();
  EXPECT_FALSE(again.ok());
  EXPECT_EQ(ReadFile(out_), "previous");
}

TEST_F(PendingOutputFileTest, DestructorDiscards) {
  {
    std::unique_ptr<PendingOutputFile> file;
    ASSERT_TRUE(PendingOutputFile::Create(out_, &file).ok());
    EXPECT_TRUE(Exists(temp_));
  }
  EXPECT_FALSE(Exists(temp_));
  EXPECT_FALSE(Exists(out_));
}

TEST_F(PendingOutputFileTest, StaleTempIsTruncated) {
  WriteFile(temp_, "stale data from a killed run");
  std::unique_ptr<PendingOutputFile> file;
  ASSERT_TRUE(PendingOutputFile::Create(out_, &file).ok());
  ASSERT_EQ(write(file->fd(), "new", 3), 3);
  ASSERT_TRUE(file->Commit().ok());
  EXPECT_EQ(ReadFile(out_), "new");
}

TEST_F(PendingOutputFileTest, RefusesDirectoryOut) {
  ASSERT_EQ(mkdir(out_.c_str(), 0700), 0);
  std::unique_ptr<PendingOutputFile> file;
  base::Status status = PendingOutputFile::Create(out_, &file);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("is a directory"));
  EXPECT_FALSE(Exists(temp_));
}

TEST_F(PendingOutputFileTest, RefusesSymlinkAndFifoAtTemp) {
  const std::string target = dir_.File("elsewhere");
  WriteFile(target, "keep");
  ASSERT_EQ(symlink(target.c_str(), temp_.c_str()), 0);
  std::unique_ptr<PendingOutputFile> file;
  EXPECT_FALSE(PendingOutputFile::Create(out_, &file).ok());
  EXPECT_EQ(ReadFile(target), "keep");
  ASSERT_EQ(unlink(temp_.c_str()), 0);

  ASSERT_EQ(mkfifo(temp_.c_str(), 0600), 0);
  // Fails at once (no reader) instead of blocking.
  EXPECT_FALSE(PendingOutputFile::Create(out_, &file).ok());
  EXPECT_TRUE(Exists(temp_));  // not ours: left alone
}

TEST_F(PendingOutputFileTest, MissingDirectory) {
  std::unique_ptr<PendingOutputFile> file;
  base::Status status =
      PendingOutputFile::Create(dir_.File("no/such/dir/t.pftrace"), &file);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("cannot create"));
}

TEST_F(PendingOutputFileTest, FailedRenameRemovesTempAndKeepsOut) {
  std::unique_ptr<PendingOutputFile> file;
  ASSERT_TRUE(PendingOutputFile::Create(out_, &file).ok());
  // OUT became a non-empty directory meanwhile: rename(2) fails.
  ASSERT_EQ(mkdir(out_.c_str(), 0700), 0);
  WriteFile(out_ + "/x", "x");
  base::Status status = file->Commit();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("cannot rename"));
  EXPECT_FALSE(Exists(temp_));
  EXPECT_EQ(ReadFile(out_ + "/x"), "x");
}

}  // namespace
}  // namespace cli
}  // namespace ringtrace
