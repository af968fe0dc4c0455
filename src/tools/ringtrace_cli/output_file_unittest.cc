/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "src/base/test/other_user.h"
#include "src/base/test/temp_dir.h"
#include "src/tools/ringtrace_cli/test/pipe_capture.h"

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

// ---- TraceOutput: -o FILE and -o - ----

// |size| bytes that differ from block to block, so that a block copied
// twice or out of order shows.
std::string Pattern(size_t size) {
  std::string data(size, '\0');
  uint32_t x = 12345;
  for (size_t i = 0; i < size; i++) {
    x = x * 1103515245u + 12345u;
    data[i] = static_cast<char>(x >> 24);
  }
  return data;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (!d)
    return names;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..")
      names.push_back(name);
  }
  closedir(d);
  return names;
}

TEST_F(OutputFileTest, FileOutputIsThePendingFile) {
  std::unique_ptr<TraceOutput> output;
  ASSERT_TRUE(TraceOutput::ForFile(out_, false, false, &output).ok());
  EXPECT_FALSE(output->to_stdout());
  EXPECT_EQ(output->name(), out_);
  ASSERT_EQ(write(output->fd(), "trace", 5), 5);
  ASSERT_TRUE(output->Commit().ok());
  EXPECT_EQ(output->fd(), -1);
  EXPECT_EQ(base::Inspect(out_).data, "trace");
  EXPECT_FALSE(output->Commit().ok());
}

// A terminal gets no binary data; the refusal comes before anything is
// created.
TEST_F(OutputFileTest, StdoutOnATerminalIsRefused) {
  int master = -1, slave = -1;
  ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  std::unique_ptr<TraceOutput> output;
  base::Status status = TraceOutput::ForStdout(slave, &output, dir_.path());
  close(master);
  close(slave);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(output, nullptr);
  EXPECT_THAT(status.message(),
              HasSubstr("refusing to write the trace to stdout: it is a "
                        "terminal, and a trace is binary data"));
  EXPECT_THAT(Entries(dir_.path()), IsEmpty());
}

TEST_F(OutputFileTest, StdoutClosedOrReadOnlyIsRefused) {
  std::unique_ptr<TraceOutput> output;
  base::Status status = TraceOutput::ForStdout(-1, &output, dir_.path());
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("stdout is closed"));
  const int read_only = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(read_only, 0);
  status = TraceOutput::ForStdout(read_only, &output, dir_.path());
  close(read_only);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("stdout is not open for writing"));
}

// The service writes a regular file (the spool: unnamed, 0600 under any
// umask); the commit copies it to stdout whole, in several blocks, waiting
// where a non-blocking pipe is full.
TEST_F(OutputFileTest, StdoutGetsTheSpoolWhole) {
  PipeCapture pipe;
  ASSERT_TRUE(pipe.ok());
  ASSERT_EQ(fcntl(pipe.write_fd(), F_SETFL, O_NONBLOCK), 0);
  const mode_t old_mask = umask(0);
  std::unique_ptr<TraceOutput> output;
  const base::Status status =
      TraceOutput::ForStdout(pipe.write_fd(), &output, dir_.path());
  umask(old_mask);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(output->to_stdout());
  EXPECT_EQ(output->name(), "stdout");
  EXPECT_EQ(output->path(), kStdoutPath);
  struct stat st = {};
  ASSERT_EQ(fstat(output->fd(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_THAT(Entries(dir_.path()), IsEmpty());

  const std::string data = Pattern(3 * TraceOutput::kCopyBlockBytes + 17);
  // As the service writes: appends at the fd's offset, in pieces.
  const size_t half = data.size() / 2;
  ASSERT_EQ(write(output->fd(), data.data(), half), static_cast<ssize_t>(half));
  ASSERT_EQ(write(output->fd(), data.data() + half, data.size() - half),
            static_cast<ssize_t>(data.size() - half));
  uint64_t size = 0;
  ASSERT_TRUE(output->Size(&size).ok());
  EXPECT_EQ(size, data.size());
  const base::Status commit = output->Commit();
  ASSERT_TRUE(commit.ok()) << commit.message();
  EXPECT_EQ(output->fd(), -1);
  EXPECT_FALSE(output->Commit().ok());
  const std::string got = pipe.Finish();
  EXPECT_EQ(got.size(), data.size());
  EXPECT_TRUE(got == data);
}

TEST_F(OutputFileTest, StdoutGetsNothingOnDiscard) {
  PipeCapture pipe;
  ASSERT_TRUE(pipe.ok());
  std::unique_ptr<TraceOutput> output;
  ASSERT_TRUE(
      TraceOutput::ForStdout(pipe.write_fd(), &output, dir_.path()).ok());
  ASSERT_EQ(write(output->fd(), "half a trace", 12), 12);
  output->Discard();
  EXPECT_EQ(output->fd(), -1);
  EXPECT_FALSE(output->Commit().ok());
  output.reset();
  EXPECT_EQ(pipe.Finish(), "");
}

// A reader that went away fails the commit (EPIPE: SIGPIPE is ignored, as
// ringtrace's main() does), saying how much it had taken.
TEST_F(OutputFileTest, StdoutReaderGoneFailsTheCommit) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  close(fds[0]);
  struct sigaction ignore = {}, old = {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGPIPE, &ignore, &old), 0);
  std::unique_ptr<TraceOutput> output;
  ASSERT_TRUE(TraceOutput::ForStdout(fds[1], &output, dir_.path()).ok());
  ASSERT_EQ(write(output->fd(), "trace", 5), 5);
  const base::Status status = output->Commit();
  sigaction(SIGPIPE, &old, nullptr);
  close(fds[1]);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("writing the trace to stdout failed after 0 of 5 "
                        "bytes: the reader closed the pipe"));
}

TEST_F(OutputFileTest, StdoutSpoolDirectoryMustExist) {
  PipeCapture pipe;
  ASSERT_TRUE(pipe.ok());
  std::unique_ptr<TraceOutput> output;
  const std::string missing = dir_.File("missing");
  const base::Status status =
      TraceOutput::ForStdout(pipe.write_fd(), &output, missing);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(),
              HasSubstr("-o -: cannot create the temporary file that holds "
                        "the trace until it is complete in " +
                        missing));
  EXPECT_THAT(status.message(), HasSubstr("$TMPDIR"));
}

}  // namespace
}  // namespace cli
}  // namespace ringtrace
