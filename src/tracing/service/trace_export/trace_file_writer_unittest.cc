/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/trace_export/trace_file_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "src/base/test/temp_dir.h"

#include <string>
#include <thread>

namespace ringtrace {
namespace trace_export {
namespace {

std::string Pattern(size_t size) {
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i)
    s[i] = static_cast<char>((i * 131 + i / 7) & 0xff);
  return s;
}

// Reads everything from |fd| until EOF.
std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t r = read(fd, buf, sizeof(buf));
    if (r > 0) {
      out.append(buf, static_cast<size_t>(r));
      continue;
    }
    if (r < 0 && errno == EINTR)
      continue;
    return out;
  }
}

// A flaky fd: at most 7 bytes per call; every third call fails with EINTR and
// every fifth writes nothing.
struct FlakyState {
  uint64_t calls = 0;
} g_flaky;

ssize_t FlakyWrite(int fd, const void* buf, size_t count) {
  const uint64_t call = ++g_flaky.calls;
  if (call % 3 == 0) {
    errno = EINTR;
    return -1;
  }
  if (call % 5 == 0)
    return 0;
  return write(fd, buf, count < 7 ? count : 7);
}

TEST(TraceFileWriterTest, ShortWritesEintrAndZeroWritesAreRetried) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string data = Pattern(3000);
  std::string read_back;
  std::thread reader([&] { read_back = ReadAll(fds[0]); });

  g_flaky = FlakyState();
  TraceFileWriter::Options options;
  options.batch_size = 256;
  options.write_fn = &FlakyWrite;
  {
    TraceFileWriter writer(fds[1], options);
    // Appends of assorted sizes, some larger than the batch.
    size_t off = 0;
    for (size_t n = 1; off < data.size(); n = n * 3 % 701 + 1) {
      const size_t take = std::min(n, data.size() - off);
      writer.Append(data.data() + off, take);
      off += take;
    }
    ASSERT_TRUE(writer.Flush().ok());
    EXPECT_EQ(writer.stats().bytes_appended, data.size());
    EXPECT_EQ(writer.stats().bytes_written, data.size());
    EXPECT_GT(writer.stats().short_writes, 0u);
    EXPECT_GT(writer.stats().eintr_retries, 0u);
  }
  close(fds[1]);
  reader.join();
  close(fds[0]);
  EXPECT_EQ(read_back, data);
}

ssize_t FailingWrite(int, const void*, size_t) {
  errno = EIO;
  return -1;
}

TEST(TraceFileWriterTest, ErrorIsLatchedAndLaterAppendsAreIgnored) {
  TraceFileWriter::Options options;
  options.batch_size = 64;
  options.write_fn = &FailingWrite;
  TraceFileWriter writer(/*fd=*/-1, options);
  const std::string data = Pattern(200);
  writer.Append(data.data(), data.size());  // the first batch fails
  EXPECT_TRUE(writer.failed());
  const uint64_t calls = writer.stats().write_calls;
  EXPECT_EQ(calls, 1u);
  writer.Append(data.data(), data.size());
  const base::Status s = writer.Flush();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Input/output error"), std::string::npos)
      << s.message();
  EXPECT_EQ(writer.stats().write_calls, calls);  // nothing retried
  EXPECT_EQ(writer.stats().bytes_written, 0u);
}

ssize_t NoProgressWrite(int, const void*, size_t) {
  return 0;
}

TEST(TraceFileWriterTest, EndlessZeroWritesGiveUp) {
  TraceFileWriter::Options options;
  options.batch_size = 16;
  options.write_fn = &NoProgressWrite;
  TraceFileWriter writer(/*fd=*/-1, options);
  writer.Append("0123456789", 10);
  EXPECT_FALSE(writer.Flush().ok());
  EXPECT_EQ(writer.stats().write_calls, TraceFileWriter::kMaxNoProgressRetries);
}

// A non-blocking pipe of one page, and a reader that only starts once the
// writer has seen the pipe full (EAGAIN): both the short write (a 64 KiB
// batch into a 4 KiB pipe) and the poll(2) wait happen on every run.
struct NonBlockingState {
  int read_fd = -1;
  std::thread* reader = nullptr;
  std::string* read_back = nullptr;
} g_nb;

ssize_t StartReaderOnEagain(int fd, const void* buf, size_t count) {
  const ssize_t r = write(fd, buf, count);
  if (r < 0 && errno == EAGAIN && g_nb.reader == nullptr) {
    g_nb.reader =
        new std::thread([] { *g_nb.read_back = ReadAll(g_nb.read_fd); });
    errno = EAGAIN;
  }
  return r;
}

TEST(TraceFileWriterTest, NonBlockingPipeShortWritesAndWaits) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_NONBLOCK), 0);
  ASSERT_EQ(fcntl(fds[0], F_SETFL, 0), 0);  // the reader blocks
  ASSERT_GT(fcntl(fds[1], F_SETPIPE_SZ, 4096), 0);
  const int pipe_size = fcntl(fds[1], F_GETPIPE_SZ);
  ASSERT_LT(pipe_size, 64 * 1024);

  std::string read_back;
  g_nb = NonBlockingState();
  g_nb.read_fd = fds[0];
  g_nb.read_back = &read_back;
  const std::string data = Pattern(200 * 1024);
  TraceFileWriter::Options options;
  options.write_fn = &StartReaderOnEagain;
  TraceFileWriter writer(fds[1], options);
  writer.Append(data.data(), data.size());
  ASSERT_TRUE(writer.Flush().ok());
  close(fds[1]);
  ASSERT_NE(g_nb.reader, nullptr);
  g_nb.reader->join();
  delete g_nb.reader;
  g_nb.reader = nullptr;
  close(fds[0]);

  EXPECT_EQ(read_back, data);
  EXPECT_GT(writer.stats().short_writes, 0u);
  EXPECT_GT(writer.stats().eagain_waits, 0u);
  EXPECT_EQ(writer.stats().bytes_written, data.size());
}

class TraceOutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir_.path();
    path_ = dir_ + "/trace";
    temp_ = path_ + TraceOutputFile::kTempSuffix;
  }
  static std::string Read(const std::string& path) {
    std::string out;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return "<missing>";
    char buf[256];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
      out.append(buf, static_cast<size_t>(n));
    close(fd);
    return out;
  }
  static void Write(const std::string& path, const std::string& data) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, data.data(), data.size()),
              static_cast<ssize_t>(data.size()));
    close(fd);
  }
  static bool Exists(const std::string& path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0;
  }
  base::TempDir temp_dir_{"ringtrace_out"};  // removed with its content
  std::string dir_, path_, temp_;
};

// The target keeps its old content until Commit() renames the new one in.
TEST_F(TraceOutputFileTest, CommitReplacesTheTargetOnlyWhenComplete) {
  Write(path_, "old");
  base::Status status;
  std::unique_ptr<TraceOutputFile> out =
      TraceOutputFile::Create(path_, &status);
  ASSERT_NE(out, nullptr) << status.message();
  EXPECT_EQ(out->temp_path(), temp_);
  ASSERT_EQ(write(out->fd(), "new trace", 9), 9);
  EXPECT_EQ(Read(path_), "old");
  ASSERT_TRUE(out->Commit().ok());
  EXPECT_TRUE(out->committed());
  out.reset();
  EXPECT_EQ(Read(path_), "new trace");
  EXPECT_FALSE(Exists(temp_));
}

// Without Commit() only our temporary file goes; the target is untouched.
TEST_F(TraceOutputFileTest, DestructionWithoutCommitRemovesOnlyTheTemp) {
  Write(path_, "old");
  base::Status status;
  std::unique_ptr<TraceOutputFile> out =
      TraceOutputFile::Create(path_, &status);
  ASSERT_NE(out, nullptr) << status.message();
  ASSERT_EQ(write(out->fd(), "partial", 7), 7);
  out.reset();
  EXPECT_EQ(Read(path_), "old");
  EXPECT_FALSE(Exists(temp_));
}

// A second writer is refused while the first holds the temporary file.
TEST_F(TraceOutputFileTest, SecondWriterIsRefused) {
  base::Status status;
  std::unique_ptr<TraceOutputFile> first =
      TraceOutputFile::Create(path_, &status);
  ASSERT_NE(first, nullptr) << status.message();
  EXPECT_EQ(TraceOutputFile::Create(path_, &status), nullptr);
  EXPECT_NE(status.message().find("another ringtraced is writing " + path_),
            std::string::npos)
      << status.message();
  ASSERT_EQ(write(first->fd(), "first", 5), 5);
  ASSERT_TRUE(first->Commit().ok());
  EXPECT_EQ(Read(path_), "first");
}

// A temporary file nobody holds, regular and ours, was left by a writer
// that died: the next writer takes it over, and the target keeps its old
// content until that writer commits.
TEST_F(TraceOutputFileTest, LeftoverTempOfADeadWriterIsTakenOver) {
  Write(path_, "old");
  Write(temp_, "left by a dead writer");
  base::Status status;
  std::unique_ptr<TraceOutputFile> out =
      TraceOutputFile::Create(path_, &status);
  ASSERT_NE(out, nullptr) << status.message();
  EXPECT_EQ(Read(temp_), "") << "truncated";
  EXPECT_EQ(Read(path_), "old");
  // Ours now: a third writer is refused.
  EXPECT_EQ(TraceOutputFile::Create(path_, &status), nullptr);
  EXPECT_NE(status.message().find("another ringtraced is writing"),
            std::string::npos)
      << status.message();
  ASSERT_EQ(write(out->fd(), "new", 3), 3);
  ASSERT_TRUE(out->Commit().ok());
  EXPECT_EQ(Read(path_), "new");
  EXPECT_FALSE(Exists(temp_));
}

// What sits at the temporary name but is not beyond doubt a leftover of
// ours is refused, named and left alone: a hard link to another file, a
// symbolic link, a directory.
TEST_F(TraceOutputFileTest, TempNameHoldingSomethingElseIsRefused) {
  const std::string other = dir_ + "/precious";
  Write(other, "precious");
  ASSERT_EQ(link(other.c_str(), temp_.c_str()), 0);
  base::Status status;
  EXPECT_EQ(TraceOutputFile::Create(path_, &status), nullptr);
  EXPECT_NE(status.message().find(temp_ + " exists"), std::string::npos)
      << status.message();
  EXPECT_EQ(Read(other), "precious");
  ASSERT_EQ(unlink(temp_.c_str()), 0);

  ASSERT_EQ(symlink(other.c_str(), temp_.c_str()), 0);
  EXPECT_EQ(TraceOutputFile::Create(path_, &status), nullptr);
  EXPECT_EQ(Read(other), "precious");
  ASSERT_EQ(unlink(temp_.c_str()), 0);

  ASSERT_EQ(mkdir(temp_.c_str(), 0755), 0);
  EXPECT_EQ(TraceOutputFile::Create(path_, &status), nullptr);
  struct stat st;
  ASSERT_EQ(lstat(temp_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_FALSE(Exists(path_));
}

// A link is followed (the link stays); a directory, a dangling link and a
// missing directory are refused with the path; a device is written
// directly.
TEST_F(TraceOutputFileTest, LinksDirectoriesAndDevices) {
  const std::string target = dir_ + "/real";
  Write(target, "old");
  ASSERT_EQ(symlink(target.c_str(), path_.c_str()), 0);
  base::Status status;
  std::unique_ptr<TraceOutputFile> out =
      TraceOutputFile::Create(path_, &status);
  ASSERT_NE(out, nullptr) << status.message();
  ASSERT_EQ(write(out->fd(), "via link", 8), 8);
  ASSERT_TRUE(out->Commit().ok());
  out.reset();
  struct stat st;
  ASSERT_EQ(lstat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(Read(target), "via link");

  const std::string dangling = dir_ + "/dangling";
  ASSERT_EQ(symlink((dir_ + "/nowhere").c_str(), dangling.c_str()), 0);
  EXPECT_EQ(TraceOutputFile::Create(dangling, &status), nullptr);
  EXPECT_NE(status.message().find("symbolic link to nothing"),
            std::string::npos);

  EXPECT_EQ(TraceOutputFile::Create(dir_, &status), nullptr);
  EXPECT_NE(status.message().find(dir_ + ": it is a directory"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(TraceOutputFile::Create(dir_ + "/no/such/trace", &status), nullptr);
  EXPECT_NE(status.message().find("cannot write " + dir_ + "/no/such/trace"),
            std::string::npos)
      << status.message();

  out = TraceOutputFile::Create("/dev/null", &status);
  ASSERT_NE(out, nullptr) << status.message();
  EXPECT_TRUE(out->writes_directly());
  ASSERT_EQ(write(out->fd(), "x", 1), 1);
  EXPECT_TRUE(out->Commit().ok());
}

}  // namespace
}  // namespace trace_export
}  // namespace ringtrace
