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

#include "src/base/test/other_user.h"
#include "src/base/test/temp_dir.h"

namespace ringtrace {
namespace cli {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The rules themselves are tested with base::PendingFile
// (src/base/safe_file_unittest.cc); these are the CLI's choices.
class OutputFileTest : public ::testing::Test {
 protected:
  base::TempDir dir_;
  const std::string out_ = dir_.File("trace.pftrace");
};

// 0600 under any umask; OUT keeps the previous trace until the commit.
TEST_F(OutputFileTest, CommitPutsAPrivateFileAtOut) {
  ASSERT_EQ(base::PlantFile(out_.c_str(), "previous", 0644), 0);
  const mode_t old_mask = umask(0);
  std::unique_ptr<base::PendingFile> file;
  const base::Status status = CreateOutputFile(out_, false, &file);
  umask(old_mask);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(write(file->fd(), "trace", 5), 5);
  uint64_t size = 0;
  ASSERT_TRUE(file->Size(&size).ok());
  EXPECT_EQ(size, 5u);
  EXPECT_EQ(base::Inspect(out_).data, "previous");
  ASSERT_TRUE(file->Commit().ok());
  const base::FileFacts facts = base::Inspect(out_);
  EXPECT_EQ(facts.data, "trace");
  EXPECT_EQ(facts.mode, 0600u);
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
}

// The service writes into regular files only: a device or a FIFO at OUT
// is refused (and left as it is), not replaced.
TEST_F(OutputFileTest, RefusesDevicesAndFifos) {
  std::unique_ptr<base::PendingFile> file;
  base::Status status = CreateOutputFile("/dev/null", false, &file);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("cannot write /dev/null: it is a character device "
                        "(only a regular file can be written here)"));
  ASSERT_EQ(mkfifo(out_.c_str(), 0600), 0);
  status = CreateOutputFile(out_, false, &file);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr(out_ + ": it is a FIFO"));
  struct stat st = {};
  ASSERT_EQ(lstat(out_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

// A symbolic link at OUT: refused with the flag to use; with it, the file
// it names gets the trace.
TEST_F(OutputFileTest, SymlinkNeedsOutSymlinkFollow) {
  const std::string target = dir_.File("elsewhere");
  ASSERT_EQ(base::PlantFile(target.c_str(), "keep", 0644), 0);
  ASSERT_EQ(symlink(target.c_str(), out_.c_str()), 0);
  std::unique_ptr<base::PendingFile> file;
  base::Status status = CreateOutputFile(out_, false, &file);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("refusing to write " + out_ +
                        ": it is a symbolic link (to " + target));
  EXPECT_THAT(status.message(),
              HasSubstr("--out-symlink follow writes through it"));
  EXPECT_EQ(base::Inspect(target).data, "keep");

  ASSERT_TRUE(CreateOutputFile(out_, true, &file).ok());
  ASSERT_EQ(write(file->fd(), "trace", 5), 5);
  ASSERT_TRUE(file->Commit().ok());
  EXPECT_EQ(base::Inspect(target).data, "trace");
  EXPECT_TRUE(base::Inspect(out_).is_link);
}

TEST_F(OutputFileTest, MissingDirectory) {
  std::unique_ptr<base::PendingFile> file;
  const std::string path = dir_.File("no/such/dir/t.pftrace");
  base::Status status = CreateOutputFile(path, false, &file);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("cannot write " + path));
  EXPECT_EQ(file, nullptr);
}

}  // namespace
}  // namespace cli
}  // namespace ringtrace
