/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/logging.h"

#include <gtest/gtest.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

namespace ringtrace {
namespace base {
namespace {

TEST(LoggingTest, FileBasenameDropsTheDirectories) {
  EXPECT_STREQ(FileBasename("../../src/tracing/service/traced/x.cc"), "x.cc");
  EXPECT_STREQ(FileBasename("/abs/y.h"), "y.h");
  EXPECT_STREQ(FileBasename("plain.cc"), "plain.cc");
  EXPECT_STREQ(FileBasename("dir/"), "");
}

// What RT_LOG prints: the file's base name and line, never the path the
// build used to reach it.
TEST(LoggingTest, LogLineNamesTheFileNotABuildPath) {
  char path[] = "/tmp/ringtrace_logging_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(dup2(fd, STDERR_FILENO), STDERR_FILENO);
  const int line = __LINE__ + 1;
  RT_LOG("hello %d", 42);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);

  std::string text(256, '\0');
  const ssize_t n = pread(fd, &text[0], text.size(), 0);
  close(fd);
  unlink(path);
  ASSERT_GT(n, 0);
  text.resize(static_cast<size_t>(n));
  EXPECT_EQ(text,
            "[logging_unittest.cc:" + std::to_string(line) + "] hello 42\n");
}

}  // namespace
}  // namespace base
}  // namespace ringtrace
