/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/test/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <utility>

extern char** environ;

namespace ringtrace {
namespace test {

std::string ExecutableDir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return ".";
  std::string path(buf, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

Subprocess::Subprocess(std::vector<std::string> argv)
    : argv_(std::move(argv)) {}

Subprocess::~Subprocess() {
  if (pid_ > 0 && !exited_) {
    kill(pid_, SIGKILL);
    int status;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (!output_path_.empty())
    unlink(output_path_.c_str());
}

bool Subprocess::Start(std::string* error) {
  char tmpl[] = "/tmp/ringtrace_subprocess_XXXXXX";
  const int out_fd = mkstemp(tmpl);
  if (out_fd < 0) {
    *error = std::string("mkstemp: ") + strerror(errno);
    return false;
  }
  output_path_ = tmpl;

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDERR_FILENO);
  std::vector<char*> args;
  for (std::string& a : argv_)
    args.push_back(&a[0]);
  args.push_back(nullptr);
  const int rc =
      posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_fd);
  if (rc != 0) {
    pid_ = -1;
    *error = "posix_spawn " + argv_[0] + ": " + strerror(rc);
    return false;
  }
  return true;
}

bool Subprocess::Wait(int timeout_ms) {
  if (pid_ <= 0)
    return false;
  if (exited_)
    return true;
  // Poll: waitpid has no timeout and the children are short-lived.
  for (int waited_ms = 0;; waited_ms += 5) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exited_ = true;
      exit_code_ =
          WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return true;
    }
    if (r < 0 && errno != EINTR)
      return false;
    if (waited_ms >= timeout_ms)
      return false;
    const timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
}

void Subprocess::Signal(int sig) {
  if (pid_ > 0 && !exited_)
    kill(pid_, sig);
}

std::string Subprocess::output() const {
  std::string out;
  FILE* f = fopen(output_path_.c_str(), "r");
  if (!f)
    return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
    out.append(buf, n);
  fclose(f);
  return out;
}

}  // namespace test
}  // namespace ringtrace
