/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/cli_options.h"

#include <string.h>

#include <vector>

#include "src/base/checked_math.h"
#include "src/tracing/ipc/consumer_protocol.h"

namespace ringtrace {
namespace cli {

const char kUsageText[] =
    R"(Usage: ringtrace [options] -o FILE [CATEGORIES...]
       ringtrace [--txt] -c CONFIG -o FILE
       ringtrace --query
       ringtrace --clone SESSION_ID -o FILE
       ringtrace --stop SESSION_ID
       ringtrace --detach KEY [options] -o FILE [CATEGORIES...]
       ringtrace --attach KEY [--stop]
       ringtrace --is_detached KEY

Records a trace with the ringtraced service and writes it to FILE, a
Perfetto trace file (open it in ui.perfetto.dev or trace_processor); FILE
"-" is stdout.

Config (either a file or the shortcuts):
  -c, --config FILE     TraceConfig file, "-" for stdin (binary unless --txt)
  --txt                 the config is protobuf text format (.pbtx)
  -t, --time DURATION   trace for DURATION: N with ms, s, m or h (1.5s
                        too); a bare number is seconds; 0: until Ctrl-C
                        (default 10s)
  -b, --buffer SIZE     buffer size: N with kb, mb or gb (default 32mb)
  --fill ring|discard   when the buffer is full, overwrite the oldest data
                        (ring, default) or drop the newest (discard)
  CATEGORIES            TrackEvent categories, comma-separated or as several
                        arguments; "*" and "prefix*" patterns (default "*")

Output and sessions:
  -o, --out FILE        the trace file, mode 0600; written as an unnamed
                        file in FILE's directory and put in place only when
                        the trace is complete. A symbolic link at FILE is
                        refused; FILE must be (or become) a regular file.
                        "-": stdout (not a terminal), which gets the whole
                        trace once it is complete; messages go to stderr
  --out-symlink follow|refuse  follow: write through a symbolic link at -o
                        FILE (the file it names is created or replaced, the
                        link stays); refuse (default): fail
  --query               print the service's producers, and the sessions
                        and buffers of your user (root: every user's)
  --clone SESSION_ID    write a snapshot of a running session to -o FILE
  --stop SESSION_ID     stop a running session (its file is written by the
                        ringtrace that started it)
  --consumer-socket PATH  the service's consumer socket (default:
                        $RINGTRACE_CONSUMER_SOCK, else the per-user default)
  --no-progress         no progress line (it is only shown on a terminal)
  --no-clobber          refuse to replace an existing FILE (or snapshot);
                        a file that appears while tracing is kept and the
                        trace is not written
  --fail-on-empty       exit 3 when the session recorded no packet from any
                        producer (it is always reported; the file is
                        written)
  -d, --background      fork: print the pid of the process that traces on
                        stdout and exit; SIGTERM to that pid stops it and
                        writes FILE (stdin and stdout become /dev/null)

Detached sessions (Perfetto's detach mode; KEY: 1..64 of [A-Za-z0-9._-],
your user's own):
  --detach KEY          start the session, leave it running under KEY and
                        exit; FILE is put in place now and the service
                        writes the trace into it, whole once the session
                        ended (its duration, or --attach KEY --stop)
  --attach KEY          own the session detached under KEY and wait for its
                        end, then report it as a trace command does
  --attach KEY --stop   the same, ending the session now
  --is_detached KEY     exit 0 if KEY names a detached session of yours, 2
                        if not, 1 on an error
  -h, --help            this text

Ctrl-C (or SIGTERM, SIGHUP) stops tracing early and still writes a complete
FILE; a second Ctrl-C aborts without writing it. SIGUSR1 writes a snapshot
of the session to FILE.snapshot-N (N = 1, 2, ...) while tracing goes on
(not with -o -: use --clone).

Exit status: 0 success; 1 the service failed, refused or was unreachable,
the trace could not be written, or the run was aborted; 2 a bad command
line or config file; 3 (only with --fail-on-empty) the session recorded no
packet from any producer.
)";

namespace {

// Long and short spellings of every option that takes a value.
struct ValueOption {
  const char* short_name;  // nullptr when none
  const char* long_name;
};

constexpr ValueOption kConfig = {"-c", "--config"};
constexpr ValueOption kOut = {"-o", "--out"};
constexpr ValueOption kTime = {"-t", "--time"};
constexpr ValueOption kBuffer = {"-b", "--buffer"};
constexpr ValueOption kFill = {nullptr, "--fill"};
constexpr ValueOption kSocket = {nullptr, "--consumer-socket"};
constexpr ValueOption kClone = {nullptr, "--clone"};
constexpr ValueOption kStop = {nullptr, "--stop"};
constexpr ValueOption kOutSymlink = {nullptr, "--out-symlink"};
constexpr ValueOption kDetach = {nullptr, "--detach"};
constexpr ValueOption kAttach = {nullptr, "--attach"};
constexpr ValueOption kIsDetached = {nullptr, "--is_detached"};
constexpr const ValueOption* kValueOptions[] = {
    &kConfig, &kOut,  &kTime,       &kBuffer, &kFill,   &kSocket,
    &kClone,  &kStop, &kOutSymlink, &kDetach, &kAttach, &kIsDetached};

bool ParseSessionId(const std::string& s, uint64_t* id) {
  if (s.empty())
    return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    if (!base::CheckedMul<uint64_t>(v, 10, &v) ||
        !base::CheckedAdd<uint64_t>(v, static_cast<uint64_t>(c - '0'), &v)) {
      return false;
    }
  }
  if (v == 0)
    return false;
  *id = v;
  return true;
}

// What the loop saw, before the combinations are checked.
struct Seen {
  bool config = false, out = false, time = false, buffer = false, fill = false,
       socket = false, clone = false, stop = false, query = false, txt = false,
       no_progress = false, out_symlink = false, fail_on_empty = false,
       no_clobber = false, detach = false, attach = false, is_detached = false,
       background = false;
  // --stop without a session id (only with --attach).
  bool stop_flag = false;
};

bool* SeenFlag(Seen* seen, const ValueOption* option) {
  if (option == &kConfig)
    return &seen->config;
  if (option == &kOut)
    return &seen->out;
  if (option == &kTime)
    return &seen->time;
  if (option == &kBuffer)
    return &seen->buffer;
  if (option == &kFill)
    return &seen->fill;
  if (option == &kSocket)
    return &seen->socket;
  if (option == &kClone)
    return &seen->clone;
  if (option == &kOutSymlink)
    return &seen->out_symlink;
  if (option == &kDetach)
    return &seen->detach;
  if (option == &kAttach)
    return &seen->attach;
  if (option == &kIsDetached)
    return &seen->is_detached;
  return &seen->stop;
}

// Stores |value| for |option|.
base::Status Store(const ValueOption* option,
                   const std::string& value,
                   CliOptions* options) {
  if (option == &kConfig) {
    if (value.empty())
      return base::ErrStatus("-c needs a file name (\"-\" for stdin)");
    options->config_path = value;
  } else if (option == &kOut) {
    if (value.empty())
      return base::ErrStatus("-o needs a file name");
    options->out_path = value;
  } else if (option == &kTime) {
    options->shortcuts.duration = value;
  } else if (option == &kBuffer) {
    options->shortcuts.buffer_size = value;
  } else if (option == &kFill) {
    options->shortcuts.fill = value;
  } else if (option == &kOutSymlink) {
    if (value != "follow" && value != "refuse") {
      return base::ErrStatus(
          "bad value '%s' for --out-symlink: follow or refuse", value.c_str());
    }
    options->follow_symlink = value == "follow";
  } else if (option == &kSocket) {
    if (value.empty())
      return base::ErrStatus("--consumer-socket needs a path");
    options->consumer_socket = value;
  } else if (option == &kDetach || option == &kAttach ||
             option == &kIsDetached) {
    base::Status status = ipc::CheckDetachKey(option->long_name, value);
    if (!status.ok())
      return status;
    options->detach_key = value;
  } else if (!ParseSessionId(value, &options->session_id)) {
    return base::ErrStatus("bad session id '%s' for %s: a positive number",
                           value.c_str(), option->long_name);
  }
  return base::OkStatus();
}

// The command the options name (at most one of them).
base::Status PickCommand(const Seen& seen,
                         CliOptions* options,
                         const char** command_name) {
  const int commands = (seen.query ? 1 : 0) + (seen.clone ? 1 : 0) +
                       (seen.stop ? 1 : 0) + (seen.attach ? 1 : 0) +
                       (seen.is_detached ? 1 : 0);
  if (commands > 1) {
    return base::ErrStatus(
        "--query, --clone, --stop, --attach and --is_detached exclude each "
        "other");
  }
  if (seen.stop_flag && !seen.attach)
    return base::ErrStatus(
        "--stop without a SESSION_ID goes with --attach KEY");
  *command_name = "--stop";
  options->command = Command::kTrace;
  if (seen.query) {
    options->command = Command::kQuery;
    *command_name = "--query";
  } else if (seen.clone) {
    options->command = Command::kClone;
    *command_name = "--clone";
  } else if (seen.stop) {
    options->command = Command::kStop;
  } else if (seen.attach) {
    options->command = Command::kAttach;
    *command_name = "--attach";
  } else if (seen.is_detached) {
    options->command = Command::kIsDetached;
    *command_name = "--is_detached";
  }
  return base::OkStatus();
}

// The checks of what may go with what, once every argument was read.
base::Status CheckCombinations(const Seen& seen, CliOptions* options) {
  const char* command_name = nullptr;
  base::Status status = PickCommand(seen, options, &command_name);
  if (!status.ok())
    return status;
  const bool shortcuts = seen.time || seen.buffer || seen.fill ||
                         !options->shortcuts.category_args.empty();
  const bool any_config = seen.config || seen.txt || shortcuts;
  const bool trace = options->command == Command::kTrace;
  if (!trace && any_config) {
    return base::ErrStatus(
        "%s takes no config (-c, --txt, -t, -b, --fill, "
        "categories)",
        command_name);
  }
  if (!trace && (seen.detach || seen.background)) {
    return base::ErrStatus("%s takes no %s", command_name,
                           seen.detach ? "--detach" : "--background");
  }
  if (seen.detach && seen.background)
    return base::ErrStatus("--detach and --background exclude each other");
  if (options->out_path == "-" && (seen.detach || seen.background)) {
    return base::ErrStatus(
        "%s does not go with -o - (the trace would outlive this stdout)",
        seen.detach ? "--detach" : "--background");
  }
  const bool wants_out = options->command == Command::kTrace ||
                         options->command == Command::kClone;
  if (wants_out && !seen.out)
    return base::ErrStatus("-o FILE is required");
  if (!wants_out && seen.out)
    return base::ErrStatus("%s takes no -o", command_name);
  if (!wants_out && seen.out_symlink)
    return base::ErrStatus("%s takes no --out-symlink", command_name);
  if (!wants_out && seen.no_clobber)
    return base::ErrStatus("%s takes no --no-clobber", command_name);
  if (options->out_path == "-" && seen.no_clobber) {
    return base::ErrStatus(
        "--no-clobber does not go with -o - (stdout replaces no file)");
  }
  if (options->out_path == "-" && seen.out_symlink) {
    return base::ErrStatus(
        "--out-symlink does not go with -o - (stdout is not a path)");
  }
  if (seen.config && shortcuts) {
    return base::ErrStatus(
        "-c excludes the shortcuts (-t, -b, --fill, categories): put them in "
        "the config");
  }
  if (seen.txt && !seen.config)
    return base::ErrStatus("--txt needs -c CONFIG");
  return base::OkStatus();
}

}  // namespace

base::Status ParseCliOptions(int argc,
                             const char* const* argv,
                             CliOptions* options) {
  *options = CliOptions();
  Seen seen;
  bool options_ended = false;
  for (int i = 1; i < argc; i++) {
    const std::string arg = argv[i];
    if (options_ended || arg.empty() || arg[0] != '-') {
      options->shortcuts.category_args.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_ended = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      *options = CliOptions();
      options->command = Command::kHelp;
      return base::OkStatus();
    }
    bool* flag = nullptr;
    if (arg == "--txt")
      flag = &seen.txt;
    else if (arg == "--query")
      flag = &seen.query;
    else if (arg == "--no-progress")
      flag = &seen.no_progress;
    else if (arg == "--fail-on-empty" || arg == "--fail_on_empty")
      flag = &seen.fail_on_empty;
    else if (arg == "--no-clobber" || arg == "--no_clobber")
      flag = &seen.no_clobber;
    else if (arg == "-d" || arg == "--background")
      flag = &seen.background;
    // Perfetto's `--attach=KEY --stop`: --stop with no session id after it
    // (last, or before another long option).
    else if (arg == "--stop" &&
             (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0))
      flag = &seen.stop_flag;
    if (flag) {
      if (*flag)
        return base::ErrStatus("%s given twice", arg.c_str());
      *flag = true;
      continue;
    }
    // An option with a value: "-o FILE", "--out FILE" or "--out=FILE".
    const ValueOption* option = nullptr;
    std::string value;
    bool has_inline_value = false;
    for (const ValueOption* candidate : kValueOptions) {
      if (candidate->short_name && arg == candidate->short_name) {
        option = candidate;
        break;
      }
      const size_t len = strlen(candidate->long_name);
      if (arg.compare(0, len, candidate->long_name) == 0 &&
          (arg.size() == len || arg[len] == '=')) {
        option = candidate;
        has_inline_value = arg.size() > len;
        if (has_inline_value)
          value = arg.substr(len + 1);
        break;
      }
    }
    if (!option)
      return base::ErrStatus("unknown option %s", arg.c_str());
    if (!has_inline_value) {
      if (i + 1 >= argc)
        return base::ErrStatus("missing value for %s", arg.c_str());
      value = argv[++i];
    }
    bool* seen_flag = SeenFlag(&seen, option);
    if (*seen_flag)
      return base::ErrStatus("%s given twice", option->long_name);
    *seen_flag = true;
    base::Status status = Store(option, value, options);
    if (!status.ok())
      return status;
  }
  options->txt = seen.txt;
  options->no_progress = seen.no_progress;
  options->fail_on_empty = seen.fail_on_empty;
  options->no_clobber = seen.no_clobber;
  options->stop_attached = seen.stop_flag;
  options->background = seen.background;
  return CheckCombinations(seen, options);
}

}  // namespace cli
}  // namespace ringtrace
