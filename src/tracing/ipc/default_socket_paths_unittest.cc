/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/ipc/default_socket_paths.h"

#include <gtest/gtest.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "src/base/test/temp_dir.h"

namespace ringtrace {
namespace ipc {
namespace {

SocketEnvironment Env(const std::string& xdg, uid_t uid) {
  SocketEnvironment env;
  env.xdg_runtime_dir = xdg;
  env.uid = uid;
  return env;
}

mode_t ModeOf(const std::string& path) {
  struct stat st = {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(DefaultSocketPathsTest, TheTableOfDocsSessions) {
  // Variables win.
  SocketEnvironment env = Env("/run/user/1000", 1000);
  env.producer_sock = "/x/p.sock";
  env.consumer_sock = "/y/c.sock";
  EXPECT_EQ(DefaultProducerSocketPath(env), "/x/p.sock");
  EXPECT_EQ(DefaultConsumerSocketPath(env), "/y/c.sock");

  // Then XDG_RUNTIME_DIR, for root too.
  env = Env("/run/user/1000", 1000);
  EXPECT_EQ(DefaultProducerSocketPath(env),
            "/run/user/1000/ringtrace/producer.sock");
  EXPECT_EQ(DefaultConsumerSocketPath(env),
            "/run/user/1000/ringtrace/consumer.sock");
  env = Env("/run/user/0", 0);
  EXPECT_EQ(DefaultProducerSocketPath(env),
            "/run/user/0/ringtrace/producer.sock");

  // Then /run/ringtrace for root, /tmp/ringtrace-<uid> for the others.
  env = Env("", 0);
  EXPECT_EQ(DefaultProducerSocketPath(env), "/run/ringtrace/producer.sock");
  EXPECT_EQ(DefaultConsumerSocketPath(env), "/run/ringtrace/consumer.sock");
  env = Env("", 1234);
  EXPECT_EQ(DefaultProducerSocketPath(env),
            "/tmp/ringtrace-1234/producer.sock");
  EXPECT_EQ(DefaultConsumerSocketPath(env),
            "/tmp/ringtrace-1234/consumer.sock");

  // A relative XDG_RUNTIME_DIR is ignored (XDG Base Directory rules).
  env = Env("run/user", 1234);
  EXPECT_EQ(DefaultSocketDirectory(env), "/tmp/ringtrace-1234");
}

TEST(DefaultSocketPathsTest, ProcessEnvironmentIsRead) {
  const char* saved = getenv(kConsumerSocketEnv);
  const std::string saved_value = saved ? saved : "";
  setenv(kConsumerSocketEnv, "/somewhere/c.sock", 1);
  EXPECT_EQ(DefaultConsumerSocketPath(), "/somewhere/c.sock");
  // Empty counts as unset.
  setenv(kConsumerSocketEnv, "", 1);
  EXPECT_EQ(DefaultConsumerSocketPath(),
            DefaultSocketDirectory(SocketEnvironment::FromProcess()) +
                "/consumer.sock");
  if (saved)
    setenv(kConsumerSocketEnv, saved_value.c_str(), 1);
  else
    unsetenv(kConsumerSocketEnv);
  EXPECT_EQ(SocketEnvironment::FromProcess().uid, geteuid());
}

TEST(DefaultSocketPathsTest, DefaultDirectoryIsCreatedPrivate) {
  base::TempDir xdg;
  const SocketEnvironment env = Env(xdg.path(), geteuid());
  const std::string dir = xdg.File("ringtrace");
  const std::string sock = DefaultConsumerSocketPath(env);
  ASSERT_EQ(sock, dir + "/consumer.sock");
  const mode_t old_umask = umask(0);  // the mode must not depend on it
  const base::Status s = EnsureSocketDirectory(sock, env);
  umask(old_umask);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(ModeOf(dir), 0700u);
  // Idempotent.
  EXPECT_TRUE(EnsureSocketDirectory(DefaultProducerSocketPath(env), env).ok());
}

TEST(DefaultSocketPathsTest, UnsafeDefaultDirectoriesAreRefused) {
  base::TempDir xdg;
  const std::string dir = xdg.File("ringtrace");
  const std::string sock = dir + "/producer.sock";

  // Writable by others.
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  EXPECT_EQ(EnsureSocketDirectory(sock, Env(xdg.path(), geteuid())).message(),
            "socket directory " + dir +
                " has mode 777: writable by others; refusing to use it");
  ASSERT_EQ(chmod(dir.c_str(), 0720), 0);
  EXPECT_EQ(EnsureSocketDirectory(sock, Env(xdg.path(), geteuid())).message(),
            "socket directory " + dir +
                " has mode 720: writable by others; refusing to use it");
  ASSERT_EQ(chmod(dir.c_str(), 0755), 0);
  EXPECT_TRUE(EnsureSocketDirectory(sock, Env(xdg.path(), geteuid())).ok());

  // Not ours (the environment says we are another uid).
  const uid_t other = geteuid() + 1;
  EXPECT_EQ(EnsureSocketDirectory(sock, Env(xdg.path(), other)).message(),
            "socket directory " + dir + " is owned by uid " +
                std::to_string(geteuid()) + ", not by uid " +
                std::to_string(other) + "; refusing to use it");

  // A symbolic link (to a directory that would pass) or a file.
  ASSERT_EQ(rmdir(dir.c_str()), 0);
  ASSERT_EQ(mkdir(xdg.File("elsewhere").c_str(), 0700), 0);
  ASSERT_EQ(symlink(xdg.File("elsewhere").c_str(), dir.c_str()), 0);
  EXPECT_EQ(
      EnsureSocketDirectory(sock, Env(xdg.path(), geteuid())).message(),
      "socket directory " + dir + " is a symbolic link; refusing to use it");
  ASSERT_EQ(unlink(dir.c_str()), 0);
  FILE* f = fopen(dir.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fclose(f);
  EXPECT_EQ(EnsureSocketDirectory(sock, Env(xdg.path(), geteuid())).message(),
            "socket directory " + dir + " is not a directory");

  // Its parent is missing: one level only is created.
  const std::string deep = xdg.File("no/such");
  EXPECT_EQ(
      EnsureSocketDirectory(deep + "/ringtrace/p.sock", Env(deep, geteuid()))
          .message(),
      "cannot create the socket directory " + deep +
          "/ringtrace: No such file or directory");
}

// A directory the user chose is used as it is, but must exist.
TEST(DefaultSocketPathsTest, ChosenDirectoriesAreOnlyRequiredToExist) {
  base::TempDir xdg;
  base::TempDir chosen;
  const SocketEnvironment env = Env(xdg.path(), geteuid());
  ASSERT_EQ(chmod(chosen.path().c_str(), 01777), 0);
  EXPECT_TRUE(EnsureSocketDirectory(chosen.File("p.sock"), env).ok());
  EXPECT_EQ(ModeOf(chosen.path()), 01777u);
  EXPECT_EQ(EnsureSocketDirectory(chosen.File("missing/p.sock"), env).message(),
            "socket directory " + chosen.File("missing") +
                ": No such file or directory");
  EXPECT_TRUE(EnsureSocketDirectory("relative.sock", env).ok());  // "."
}

}  // namespace
}  // namespace ipc
}  // namespace ringtrace
