/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/trace_export/trace_file_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

// Direct appends interleaved with copies: the bytes come out in order, a
// Reserve() that does not fit writes the batch out first, and once an error
// is latched Reserve() gives nullptr.
TEST(TraceFileWriterTest, ReserveAndCommitInterleaveWithAppends) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string data = Pattern(5000);
  std::string read_back;
  std::thread reader([&] { read_back = ReadAll(fds[0]); });
  TraceFileWriter::Options options;
  options.batch_size = 100;
  {
    TraceFileWriter writer(fds[1], options);
    size_t off = 0;
    for (size_t n = 1; off < data.size(); n = n * 7 % 97 + 1) {
      const size_t take = std::min(n, data.size() - off);
      if (n % 2) {
        writer.Append(data.data() + off, take);
      } else {
        // Reserve more than is used, as the exporter does.
        uint8_t* p = writer.Reserve(std::min<size_t>(take + 3, 100));
        ASSERT_NE(p, nullptr);
        memcpy(p, data.data() + off, take);
        writer.Commit(take);
      }
      off += take;
    }
    ASSERT_TRUE(writer.Flush().ok());
    EXPECT_EQ(writer.stats().bytes_appended, data.size());
    EXPECT_GT(writer.stats().write_calls, data.size() / 100);
  }
  close(fds[1]);
  reader.join();
  close(fds[0]);
  EXPECT_EQ(read_back, data);

  options.write_fn = &FailingWrite;
  TraceFileWriter failing(/*fd=*/-1, options);
  uint8_t* p = failing.Reserve(60);
  ASSERT_NE(p, nullptr);
  failing.Commit(60);
  EXPECT_EQ(failing.Reserve(60), nullptr);  // writing the batch out failed
  EXPECT_TRUE(failing.failed());
  EXPECT_EQ(failing.Reserve(1), nullptr);
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

}  // namespace
}  // namespace trace_export
}  // namespace ringtrace
