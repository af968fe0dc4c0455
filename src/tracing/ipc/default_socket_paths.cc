/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/ipc/default_socket_paths.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ringtrace {
namespace ipc {
namespace {

std::string GetEnv(const char* name) {
  const char* value = getenv(name);
  return value ? std::string(value) : std::string();
}

std::string SocketPath(const std::string& override_path,
                       const SocketEnvironment& env,
                       const char* file_name) {
  if (!override_path.empty())
    return override_path;
  return DefaultSocketDirectory(env) + "/" + file_name;
}

// The directory part of |path| ("." for a bare name, "/" for "/x").
std::string DirName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

// Creates |dir| with exactly |mode| if it does not exist (an existing one is
// left as it is, for the checks).
base::Status CreateDirectory(const std::string& dir, mode_t mode) {
  if (mkdir(dir.c_str(), mode) != 0) {
    if (errno == EEXIST)
      return base::OkStatus();
    return base::ErrStatus("cannot create the socket directory %s: %s",
                           dir.c_str(), strerror(errno));
  }
  // mkdir(2) applies the umask; the mode must be exactly |mode|.
  if (chmod(dir.c_str(), mode) != 0) {
    return base::ErrStatus("chmod %s %o: %s", dir.c_str(),
                           static_cast<unsigned>(mode), strerror(errno));
  }
  return base::OkStatus();
}

// The default directory may be used: a directory (not a link), ours,
// writable by nobody else.
base::Status CheckOwnDirectory(const std::string& dir, uid_t uid) {
  struct stat st = {};
  if (lstat(dir.c_str(), &st) != 0) {
    return base::ErrStatus("socket directory %s: %s", dir.c_str(),
                           strerror(errno));
  }
  if (S_ISLNK(st.st_mode)) {
    return base::ErrStatus(
        "socket directory %s is a symbolic link; refusing to use it",
        dir.c_str());
  }
  if (!S_ISDIR(st.st_mode)) {
    return base::ErrStatus("socket directory %s is not a directory",
                           dir.c_str());
  }
  if (st.st_uid != uid) {
    return base::ErrStatus(
        "socket directory %s is owned by uid %u, not by uid %u; refusing to "
        "use it",
        dir.c_str(), static_cast<unsigned>(st.st_uid),
        static_cast<unsigned>(uid));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return base::ErrStatus(
        "socket directory %s has mode %o: writable by others; refusing to "
        "use it",
        dir.c_str(), static_cast<unsigned>(st.st_mode & 07777));
  }
  return base::OkStatus();
}

}  // namespace

SocketEnvironment SocketEnvironment::FromProcess() {
  SocketEnvironment env;
  env.producer_sock = GetEnv(kProducerSocketEnv);
  env.consumer_sock = GetEnv(kConsumerSocketEnv);
  env.xdg_runtime_dir = GetEnv("XDG_RUNTIME_DIR");
  env.uid = geteuid();
  return env;
}

std::string DefaultSocketDirectory(const SocketEnvironment& env) {
  if (!env.xdg_runtime_dir.empty() && env.xdg_runtime_dir[0] == '/')
    return env.xdg_runtime_dir + "/ringtrace";
  if (env.uid == 0)
    return "/run/ringtrace";
  return "/tmp/ringtrace-" + std::to_string(env.uid);
}

std::string DefaultProducerSocketPath(const SocketEnvironment& env) {
  return SocketPath(env.producer_sock, env, "producer.sock");
}

std::string DefaultConsumerSocketPath(const SocketEnvironment& env) {
  return SocketPath(env.consumer_sock, env, "consumer.sock");
}

std::string DefaultProducerSocketPath() {
  return DefaultProducerSocketPath(SocketEnvironment::FromProcess());
}

std::string DefaultConsumerSocketPath() {
  return DefaultConsumerSocketPath(SocketEnvironment::FromProcess());
}

base::Status EnsureSocketDirectory(const std::string& socket_path,
                                   const SocketEnvironment& env) {
  const std::string dir = DirName(socket_path);
  if (dir == DefaultSocketDirectory(env)) {
    const mode_t mode = env.uid == 0 && dir == "/run/ringtrace" ? 0755 : 0700;
    base::Status s = CreateDirectory(dir, mode);
    if (!s.ok())
      return s;
    return CheckOwnDirectory(dir, env.uid);
  }
  struct stat st = {};
  if (stat(dir.c_str(), &st) != 0) {
    return base::ErrStatus("socket directory %s: %s", dir.c_str(),
                           strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    return base::ErrStatus("socket directory %s is not a directory",
                           dir.c_str());
  }
  return base::OkStatus();
}

base::Status EnsureSocketDirectory(const std::string& socket_path) {
  return EnsureSocketDirectory(socket_path, SocketEnvironment::FromProcess());
}

}  // namespace ipc
}  // namespace ringtrace
