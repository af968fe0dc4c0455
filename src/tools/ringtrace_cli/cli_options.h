/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The command line of `ringtrace` (docs/cli.md), read into CliOptions. Only
// the syntax and the combinations are checked here; the values of the config
// shortcuts are checked when the config is built (config_shortcuts.h).
//
// Syntax: options and positional arguments in any order. A short option
// takes the next argument as its value ("-o FILE"); a long one takes it from
// "=VALUE" or the next argument ("--out FILE", "--out=FILE"). "--" ends the
// options: every later argument is positional (a category list). A lone "-"
// is only meaningful as the value of -c (stdin).

#ifndef SRC_TOOLS_RINGTRACE_CLI_CLI_OPTIONS_H_
#define SRC_TOOLS_RINGTRACE_CLI_CLI_OPTIONS_H_

#include <stdint.h>

#include <string>

#include "ringtrace/status.h"
#include "src/tools/ringtrace_cli/config_shortcuts.h"

namespace ringtrace {
namespace cli {

// The exit codes of `ringtrace`.
constexpr int kExitOk = 0;
// The service could not be reached, refused the request, the session failed
// or was aborted (a second Ctrl-C), or the output could not be written.
constexpr int kExitFailure = 1;
// A bad command line or config file: nothing was sent to the service.
constexpr int kExitUsage = 2;
// --fail-on-empty: the session ended well but recorded no packet from any
// producer (the file is written all the same).
constexpr int kExitEmpty = 3;
// --is_detached KEY, as Perfetto's: 0 it names a detached session, 2 it
// does not (1 an error).
constexpr int kExitNotDetached = 2;

enum class Command {
  kTrace,       // start a session, wait for its end, write -o
  kQuery,       // --query: print the service's producers, sessions and buffers
  kClone,       // --clone ID: write a snapshot of a running session to -o
  kStop,        // --stop ID: stop a running session
  kAttach,      // --attach KEY [--stop]: own a detached session, wait for
                // (or make) its end
  kIsDetached,  // --is_detached KEY: whether KEY names a detached session
  kHelp,        // -h / --help
};

struct CliOptions {
  Command command = Command::kTrace;
  // -c: a config file, "-" for stdin; "" when the shortcuts build the
  // config.
  std::string config_path;
  // --txt: the config is protobuf text format (else binary).
  bool txt = false;
  // -o: the trace file (kTrace, kClone); "-" (kStdoutPath): stdout.
  std::string out_path;
  // --out-symlink follow: a symbolic link at -o FILE is written through
  // (the file it names is replaced); refused otherwise.
  bool follow_symlink = false;
  // -t, -b, --fill and the positional category lists.
  ConfigShortcuts shortcuts;
  // --consumer-socket; "" for DefaultConsumerSocketPath().
  std::string consumer_socket;
  // --clone, --stop.
  uint64_t session_id = 0;
  // --no-progress: no progress line even on a terminal.
  bool no_progress = false;
  // --fail-on-empty: exit kExitEmpty when the trace holds no producer
  // packet.
  bool fail_on_empty = false;
  // --no-clobber: -o FILE (and the snapshots) replace nothing.
  bool no_clobber = false;
  // --detach KEY (kTrace): start the session, leave it running under KEY
  // and exit; --attach KEY, --is_detached KEY: the key.
  std::string detach_key;
  // --attach KEY --stop: end the session once attached.
  bool stop_attached = false;
  // --background / -d (kTrace): fork, print the child's pid on stdout and
  // exit; the child traces.
  bool background = false;
};

// Reads argv[1..argc). A usage error (unknown option, missing value, a
// combination that makes no sense, a bad session id) is a Status naming the
// argument; the caller prints it with the usage hint and exits kExitUsage.
base::Status ParseCliOptions(int argc,
                             const char* const* argv,
                             CliOptions* options);

// The --help text.
extern const char kUsageText[];

}  // namespace cli
}  // namespace ringtrace

#endif  // SRC_TOOLS_RINGTRACE_CLI_CLI_OPTIONS_H_
