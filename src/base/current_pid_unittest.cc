/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/current_pid.h"

#include <sys/wait.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace ringtrace {
namespace base {
namespace {

TEST(CurrentPidTest, IsThePid) {
  EXPECT_EQ(CurrentPid(), static_cast<int32_t>(getpid()));
  EXPECT_EQ(CurrentPid(), static_cast<int32_t>(getpid()));  // cached
}

// A fork child reports its own pid, not the parent's cached one.
TEST(CurrentPidTest, AForkChildHasItsOwn) {
  const int32_t parent = CurrentPid();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int32_t mine = CurrentPid();
    _exit(mine == static_cast<int32_t>(getpid()) && mine != parent ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(CurrentPid(), parent);
}

}  // namespace
}  // namespace base
}  // namespace ringtrace
