/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Where ringtraced's sockets live by default, so that an app (the SDK), the
// `ringtrace` CLI and ringtraced started without socket flags meet
// (docs/sessions.md, "Sockets and who may use them"):
//
//   producer: $RINGTRACE_PRODUCER_SOCK, else
//             $XDG_RUNTIME_DIR/ringtrace/producer.sock, else
//             /run/ringtrace/producer.sock when the effective uid is 0, else
//             /tmp/ringtrace-<uid>/producer.sock
//   consumer: the same with $RINGTRACE_CONSUMER_SOCK and consumer.sock.
//
// An empty variable counts as unset; so does an XDG_RUNTIME_DIR that is not
// an absolute path (the XDG Base Directory rules say to ignore it).
//
// The directory of the default paths (DefaultSocketDirectory()) is created
// by EnsureSocketDirectory(), which the service calls before binding: mode
// 0700 for a user's own service, 0755 for root's /run/ringtrace (every
// user's apps must reach its producer socket; the socket files' own modes
// are the access control). A directory that is there already is used only
// if it is a real directory (not a symbolic link), owned by the effective
// uid and writable by nobody else: in /tmp anyone can create
// /tmp/ringtrace-<uid> first, and a directory someone else controls lets
// them swap the sockets for their own.
//
// Thread model: free functions; getenv() makes the process-environment
// variants unsafe against a concurrent setenv(), like any getenv() user.

#ifndef SRC_TRACING_IPC_DEFAULT_SOCKET_PATHS_H_
#define SRC_TRACING_IPC_DEFAULT_SOCKET_PATHS_H_

#include <sys/types.h>

#include <string>

#include "ringtrace/status.h"

namespace ringtrace {
namespace ipc {

constexpr char kProducerSocketEnv[] = "RINGTRACE_PRODUCER_SOCK";
constexpr char kConsumerSocketEnv[] = "RINGTRACE_CONSUMER_SOCK";

// What the defaults depend on. FromProcess() reads the environment and
// geteuid(); tests build one by hand.
struct SocketEnvironment {
  std::string producer_sock;    // $RINGTRACE_PRODUCER_SOCK
  std::string consumer_sock;    // $RINGTRACE_CONSUMER_SOCK
  std::string xdg_runtime_dir;  // $XDG_RUNTIME_DIR
  uid_t uid = 0;                // the effective uid

  static SocketEnvironment FromProcess();
};

// The directory of the default socket paths when no variable names a
// socket: $XDG_RUNTIME_DIR/ringtrace, /run/ringtrace or /tmp/ringtrace-<uid>.
std::string DefaultSocketDirectory(const SocketEnvironment& env);
std::string DefaultProducerSocketPath(const SocketEnvironment& env);
std::string DefaultConsumerSocketPath(const SocketEnvironment& env);

// The same for this process.
std::string DefaultProducerSocketPath();
std::string DefaultConsumerSocketPath();

// Makes the directory of |socket_path| ready for bind(2):
//   - the default directory (DefaultSocketDirectory(env)): created if
//     missing (one level: its parent must exist), then checked as described
//     above; an error names the directory and the defect;
//   - any other directory (a path the user chose with a flag or variable):
//     must exist and be a directory; its ownership is the user's choice.
base::Status EnsureSocketDirectory(const std::string& socket_path,
                                   const SocketEnvironment& env);
base::Status EnsureSocketDirectory(const std::string& socket_path);

}  // namespace ipc
}  // namespace ringtrace

#endif  // SRC_TRACING_IPC_DEFAULT_SOCKET_PATHS_H_
