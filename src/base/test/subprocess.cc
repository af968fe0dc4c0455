/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/test/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <utility>

#include "ringtrace/logging.h"
#include "src/base/scoped_fd.h"

extern char** environ;

// Threads this process may have when it forks: the test thread, plus under
// TSan the runtime's own background thread (started once the process has
// had a second thread; TSan's fork() handles it).
#if defined(__SANITIZE_THREAD__)
#define RT_MAX_THREADS_AT_FORK 2
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RT_MAX_THREADS_AT_FORK 2
#endif
#endif
#ifndef RT_MAX_THREADS_AT_FORK
#define RT_MAX_THREADS_AT_FORK 1
#endif

namespace ringtrace {
namespace base {

std::string ExecutableDir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return ".";
  std::string path(buf, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

uint32_t ThreadsInThisProcess() {
  FILE* f = fopen("/proc/self/status", "re");
  if (!f)
    return 0;
  char line[256];
  uint32_t threads = 0;
  while (fgets(line, sizeof(line), f)) {
    if (strncmp(line, "Threads:", 8) == 0)
      threads = static_cast<uint32_t>(strtoul(line + 8, nullptr, 10));
  }
  fclose(f);
  return threads;
}

Subprocess::Subprocess(std::vector<std::string> argv)
    : argv_(std::move(argv)) {}

Subprocess::~Subprocess() {
  if (running())
    Kill();
  if (!output_path_.empty())
    unlink(output_path_.c_str());
}

bool Subprocess::Start(std::string* error) {
  RT_CHECK(pid_ <= 0 && !argv_.empty());
  char tmpl[] = "/tmp/ringtrace_subprocess_XXXXXX";
  const ScopedFd out_fd(mkstemp(tmpl));
  if (!out_fd.valid()) {
    *error = std::string("mkstemp: ") + strerror(errno);
    return false;
  }
  output_path_ = tmpl;

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(
      &actions, stdout_fd_ >= 0 ? stdout_fd_ : out_fd.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_fd.get(), STDERR_FILENO);
  std::vector<char*> args;
  for (std::string& a : argv_)
    args.push_back(&a[0]);
  args.push_back(nullptr);
  // The child starts with default dispositions and nothing blocked, however
  // the test binary was started: a test run under nohup (SIGHUP ignored) or
  // from a thread with signals blocked must not change what a signal does
  // to ringtraced or an app.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, none;
  sigemptyset(&defaults);
  for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGPIPE,
                  SIGCHLD, SIGALRM}) {
    sigaddset(&defaults, sig);
  }
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  const int rc =
      posix_spawn(&pid_, args[0], &actions, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    pid_ = -1;
    *error = "posix_spawn " + argv_[0] + ": " + strerror(rc);
    return false;
  }
  return true;
}

bool Subprocess::Fork(const std::function<int()>& body) {
  RT_CHECK(pid_ <= 0);
  const uint32_t threads = ThreadsInThisProcess();
  if (threads > RT_MAX_THREADS_AT_FORK) {
    RT_ELOG("refusing to fork: %u threads", threads);
    return false;
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0)
    return false;
  if (pid == 0) {
    // Die with the parent, whatever happens to it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
      _exit(kOrphanedExitCode);
    _exit(body());
  }
  pid_ = pid;
  return true;
}

void Subprocess::Reaped(int status) {
  exited_ = true;
  status_ = status;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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
      Reaped(status);
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

void Subprocess::Kill() {
  RT_CHECK(running());
  kill(pid_, SIGKILL);
  int status = 0;
  pid_t r;
  while ((r = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  RT_CHECK(r == pid_);
  Reaped(status);
}

void Subprocess::Signal(int sig) {
  if (running())
    kill(pid_, sig);
}

bool Subprocess::StopAndWait(int timeout_ms) {
  if (!running())
    return false;
  kill(pid_, SIGSTOP);
  const std::string path = "/proc/" + std::to_string(pid_) + "/stat";
  for (int i = 0; i < timeout_ms; i++) {
    std::string stat;
    if (FILE* f = fopen(path.c_str(), "re")) {
      char buf[512];
      const size_t n = fread(buf, 1, sizeof(buf), f);
      fclose(f);
      stat.assign(buf, n);
    }
    // "pid (comm) S ...": the state follows the last ')'.
    const size_t paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size() &&
        stat[paren + 2] == 'T') {
      return true;
    }
    usleep(1000);
  }
  return false;
}

bool Subprocess::ExitedOk() const {
  return exited_ && WIFEXITED(status_) && WEXITSTATUS(status_) == 0;
}

bool Subprocess::KilledBy(int sig) const {
  return exited_ && WIFSIGNALED(status_) && WTERMSIG(status_) == sig;
}

std::string Subprocess::DescribeStatus() const {
  if (!exited_)
    return pid_ > 0 ? "still running" : "not started";
  if (WIFEXITED(status_))
    return "exited with " + std::to_string(WEXITSTATUS(status_));
  if (WIFSIGNALED(status_))
    return "killed by signal " + std::to_string(WTERMSIG(status_));
  return "status " + std::to_string(status_);
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

}  // namespace base
}  // namespace ringtrace
