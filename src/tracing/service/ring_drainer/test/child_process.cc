/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/test/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

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
namespace ring_drainer {
namespace test {

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

char ProcessState(pid_t pid) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  // "pid (comm) state ...": comm may contain anything but ends at the last
  // ')'.
  const char* p = strrchr(buf, ')');
  return p != nullptr && p[1] == ' ' ? p[2] : 0;
}

bool ChildProcess::Start(const std::function<int()>& body) {
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
      _exit(kChildOrphaned);
    _exit(body());
  }
  pid_ = pid;
  return true;
}

bool ChildProcess::Ended() {
  if (!running())
    return true;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_)
    return false;
  status_ = status;
  pid_ = -1;
  return true;
}

void ChildProcess::Kill() {
  RT_CHECK(running());
  kill(pid_, SIGKILL);
  int status = 0;
  RT_CHECK(waitpid(pid_, &status, 0) == pid_);
  status_ = status;
  pid_ = -1;
}

std::string ChildProcess::DescribeStatus() const {
  if (WIFEXITED(status_))
    return "exited with " + std::to_string(WEXITSTATUS(status_));
  if (WIFSIGNALED(status_))
    return "killed by signal " + std::to_string(WTERMSIG(status_));
  return "status " + std::to_string(status_);
}

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace
