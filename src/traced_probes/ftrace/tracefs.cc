/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/ftrace/tracefs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <utility>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace ftrace {
namespace {

constexpr const char* kMountCommand =
    "mount -t tracefs nodev /sys/kernel/tracing";
// Bound on a control file read (format files are a few KiB).
constexpr size_t kMaxControlFileSize = 1 << 20;

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back()))
    s.remove_suffix(1);
  return s;
}

bool ParseU64(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 20)
    return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10)
      return false;
    v = v * 10 + digit;
  }
  *out = v;
  return true;
}

// "12345.678901": digits, optionally a '.' and digits.
bool ParseSeconds(std::string_view s, double* out) {
  if (s.empty() || s.size() > 40)
    return false;
  bool dot = false;
  for (char c : s) {
    if (c == '.' && !dot) {
      dot = true;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  const std::string copy(s);
  char* end = nullptr;
  const double v = strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !isfinite(v))
    return false;
  *out = v;
  return true;
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || s.size() > 255)
    return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_'))
      return false;
  }
  return true;
}

enum class Probe { kOk, kNotMounted, kNoAccess, kNoInstances };

Probe ProbeRoot(const std::string& dir, int* err) {
  const std::string header = dir + "/events/header_page";
  const int fd = open(header.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = errno;
    return errno == EACCES || errno == EPERM ? Probe::kNoAccess
                                             : Probe::kNotMounted;
  }
  close(fd);
  struct stat st;
  if (stat((dir + "/instances").c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *err = errno;
    return Probe::kNoInstances;
  }
  return Probe::kOk;
}

}  // namespace

bool IsTracefsRoot(const std::string& dir) {
  int err = 0;
  return ProbeRoot(dir, &err) == Probe::kOk;
}

base::Status FindTracefsIn(const std::vector<std::string>& candidates,
                           std::string* root) {
  std::string looked;
  bool any_denied = false;
  for (const std::string& dir : candidates) {
    int err = 0;
    const Probe probe = ProbeRoot(dir, &err);
    if (probe == Probe::kOk) {
      *root = dir;
      return base::OkStatus();
    }
    if (!looked.empty())
      looked += "; ";
    looked += dir;
    switch (probe) {
      case Probe::kNotMounted:
        looked += ": not mounted";
        break;
      case Probe::kNoAccess:
        looked += ": permission denied";
        any_denied = true;
        break;
      case Probe::kNoInstances:
        looked +=
            ": no instances/ directory (kernel without tracefs "
            "instances)";
        break;
      case Probe::kOk:
        break;
    }
  }
  const unsigned uid = static_cast<unsigned>(geteuid());
  if (any_denied)
    return base::ErrStatus(
        "tracefs is not accessible (%s): run as root (uid is %u)",
        looked.c_str(), uid);
  if (uid != 0)
    return base::ErrStatus(
        "tracefs not found (%s): run as root, and mount it with `%s`",
        looked.c_str(), kMountCommand);
  return base::ErrStatus("tracefs not found (%s): mount it with `%s`",
                         looked.c_str(), kMountCommand);
}

base::Status FindTracefs(std::string* root) {
  return FindTracefsIn({kTracefsMountPoint, kDebugfsTracingPath}, root);
}

base::Status MountTracefs() {
  if (IsTracefsRoot(kTracefsMountPoint))
    return base::OkStatus();  // mounted already
  if (geteuid() != 0)
    return base::ErrStatus(
        "cannot mount tracefs at %s as uid %u: run as root, or have root run "
        "`%s`",
        kTracefsMountPoint, static_cast<unsigned>(geteuid()), kMountCommand);
  if (mount("nodev", kTracefsMountPoint, "tracefs", 0, nullptr) != 0)
    return base::ErrStatus(
        "mount tracefs at %s failed: %s (the command is `%s`)",
        kTracefsMountPoint, strerror(errno), kMountCommand);
  if (!IsTracefsRoot(kTracefsMountPoint))
    return base::ErrStatus(
        "tracefs mounted at %s but it has no events/header_page or "
        "instances/",
        kTracefsMountPoint);
  return base::OkStatus();
}

base::Status FindOrMountTracefs(std::string* root) {
  base::Status found = FindTracefs(root);
  if (found.ok() || geteuid() != 0)
    return found;
  base::Status mounted = MountTracefs();
  if (!mounted.ok())
    return base::ErrStatus("%s; %s", found.message().c_str(),
                           mounted.message().c_str());
  return FindTracefs(root);
}

base::Status ParseCpuStats(std::string_view text, CpuStats* out) {
  CpuStats stats;
  bool have_entries = false;
  bool have_overrun = false;
  size_t line_no = 0;
  while (!text.empty()) {
    line_no++;
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text =
        nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      continue;
    const std::string_view key = Trim(line.substr(0, colon));
    const std::string_view value = Trim(line.substr(colon + 1));
    uint64_t* counter = nullptr;
    double* seconds = nullptr;
    if (key == "entries") {
      counter = &stats.entries;
      have_entries = true;
    } else if (key == "overrun") {
      counter = &stats.overrun;
      have_overrun = true;
    } else if (key == "commit overrun") {
      counter = &stats.commit_overrun;
    } else if (key == "bytes") {
      counter = &stats.bytes;
    } else if (key == "dropped events") {
      counter = &stats.dropped_events;
    } else if (key == "read events") {
      counter = &stats.read_events;
    } else if (key == "oldest event ts") {
      seconds = &stats.oldest_event_ts;
    } else if (key == "now ts") {
      seconds = &stats.now_ts;
    } else {
      continue;  // a counter this parser does not know
    }
    const bool ok =
        counter ? ParseU64(value, counter) : ParseSeconds(value, seconds);
    if (!ok)
      return base::ErrStatus("cpu stats: line %zu: bad value for \"%.*s\"",
                             line_no, static_cast<int>(key.size()), key.data());
  }
  if (!have_entries || !have_overrun)
    return base::ErrStatus("cpu stats: no \"%s:\" line",
                           have_entries ? "overrun" : "entries");
  *out = stats;
  return base::OkStatus();
}

std::string InstanceName(const std::string& prefix, pid_t pid, uint32_t n) {
  return prefix + std::to_string(pid) + "_" + std::to_string(n);
}

bool ParseInstanceName(std::string_view name,
                       std::string_view prefix,
                       pid_t* pid) {
  if (prefix.empty() || name.size() <= prefix.size() ||
      name.substr(0, prefix.size()) != prefix)
    return false;
  const std::string_view rest = name.substr(prefix.size());
  const size_t sep = rest.find('_');
  if (sep == std::string_view::npos)
    return false;
  uint64_t p = 0;
  uint64_t n = 0;
  if (!ParseU64(rest.substr(0, sep), &p) || !ParseU64(rest.substr(sep + 1), &n))
    return false;
  // pid 0 or negative would make kill() address process groups.
  if (p == 0 || p > static_cast<uint64_t>(std::numeric_limits<pid_t>::max()) ||
      n > std::numeric_limits<uint32_t>::max())
    return false;
  *pid = static_cast<pid_t>(p);
  return true;
}

bool IsValidInstancePrefix(std::string_view prefix) {
  if (prefix.empty() || prefix.size() > 32)
    return false;
  for (char c : prefix) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return false;
  }
  return true;
}

bool SplitEventName(std::string_view group_and_name,
                    std::string_view* group,
                    std::string_view* name) {
  const size_t slash = group_and_name.find('/');
  if (slash == std::string_view::npos)
    return false;
  const std::string_view g = group_and_name.substr(0, slash);
  const std::string_view n = group_and_name.substr(slash + 1);
  if (!IsIdentifier(g) || !IsIdentifier(n))
    return false;
  *group = g;
  *name = n;
  return true;
}

// ---------------------------------------------------------------------------
// TracefsInstance
// ---------------------------------------------------------------------------

TracefsInstance::TracefsInstance(std::string name, std::string path)
    : name_(std::move(name)), path_(std::move(path)) {}

base::Status TracefsInstance::Create(const std::string& tracefs_root,
                                     const std::string& prefix,
                                     std::unique_ptr<TracefsInstance>* out) {
  if (!IsValidInstancePrefix(prefix))
    return base::ErrStatus(
        "tracefs instance prefix \"%s\" must be 1..32 of [A-Za-z0-9_-]",
        prefix.c_str());
  if (!IsTracefsRoot(tracefs_root))
    return base::ErrStatus(
        "%s is not a tracefs root (no events/header_page or instances/)",
        tracefs_root.c_str());
  // Process-wide, so that two instances of one process never collide;
  // relaxed: only uniqueness matters, no other memory is published by it.
  static std::atomic<uint32_t> next_n{0};
  const pid_t pid = getpid();
  constexpr int kMaxAttempts = 1000;
  for (int attempt = 0; attempt < kMaxAttempts; attempt++) {
    const uint32_t n = next_n.fetch_add(1, std::memory_order_relaxed);
    std::string name = InstanceName(prefix, pid, n);
    std::string path = tracefs_root + "/instances/";
    path += name;
    if (mkdir(path.c_str(), 0700) != 0) {
      if (errno == EEXIST)
        continue;  // a stale one of an earlier process with our pid
      const int err = errno;
      return base::ErrStatus(
          "cannot create tracefs instance %s: %s%s", path.c_str(),
          strerror(err), err == EACCES || err == EPERM ? ": run as root" : "");
    }
    std::unique_ptr<TracefsInstance> instance(
        new TracefsInstance(std::move(name), std::move(path)));
    // A new instance records at once; nothing is enabled yet, but a
    // trace_marker write would land. Off until configured.
    base::Status off = instance->SetTracingOn(false);
    if (!off.ok())
      return off;  // the destructor removes the directory
    *out = std::move(instance);
    return base::OkStatus();
  }
  return base::ErrStatus(
      "cannot create a tracefs instance %s%d_<n>: %d names taken (run "
      "CleanStaleInstances)",
      prefix.c_str(), static_cast<int>(pid), kMaxAttempts);
}

TracefsInstance::~TracefsInstance() {
  base::Status off = SetTracingOn(false);
  if (!off.ok())
    RT_ELOG("%s", off.message().c_str());
  if (rmdir(path_.c_str()) != 0)
    RT_ELOG("cannot remove tracefs instance %s: %s (a file of it still open?)",
            path_.c_str(), strerror(errno));
}

base::Status TracefsInstance::WriteFile(const std::string& rel,
                                        std::string_view text) const {
  const std::string file = path_ + "/" + rel;
  base::ScopedFd fd(open(file.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid())
    return base::ErrStatus("tracefs: open %s: %s", file.c_str(),
                           strerror(errno));
  // One write(): tracefs control files and trace_marker take a value (an
  // event) per call.
  ssize_t n;
  do {
    n = write(fd.get(), text.data(), text.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0)
    return base::ErrStatus("tracefs: write \"%.*s\" to %s: %s",
                           static_cast<int>(std::min<size_t>(text.size(), 64)),
                           text.data(), file.c_str(), strerror(errno));
  if (static_cast<size_t>(n) != text.size())
    return base::ErrStatus("tracefs: short write to %s (%zd of %zu bytes)",
                           file.c_str(), n, text.size());
  return base::OkStatus();
}

base::Status TracefsInstance::ReadFile(const std::string& rel,
                                       std::string* text) const {
  const std::string file = path_ + "/" + rel;
  base::ScopedFd fd(open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return base::ErrStatus("tracefs: open %s: %s", file.c_str(),
                           strerror(errno));
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return base::ErrStatus("tracefs: read %s: %s", file.c_str(),
                             strerror(errno));
    }
    if (n == 0)
      break;
    if (out.size() + static_cast<size_t>(n) > kMaxControlFileSize)
      return base::ErrStatus("tracefs: %s is larger than %zu bytes",
                             file.c_str(), kMaxControlFileSize);
    out.append(buf, static_cast<size_t>(n));
  }
  *text = std::move(out);
  return base::OkStatus();
}

base::Status TracefsInstance::SetBufferSizeKb(uint32_t kb) {
  if (kb == 0)
    return base::ErrStatus("tracefs instance %s: buffer size 0 KiB",
                           name_.c_str());
  return WriteFile("buffer_size_kb", std::to_string(kb));
}

base::Status TracefsInstance::GetBufferSizeKb(uint32_t* kb) const {
  std::string text;
  base::Status s = ReadFile("buffer_size_kb", &text);
  if (!s.ok())
    return s;
  // "1408\n", or "7 (expanded: 1408)\n" before the first resize.
  std::string_view v = Trim(std::string_view(text).substr(
      0, std::string_view(text).find_first_of(" \n")));
  uint64_t value = 0;
  if (!ParseU64(v, &value) || value > std::numeric_limits<uint32_t>::max())
    return base::ErrStatus("tracefs instance %s: buffer_size_kb is \"%s\"",
                           name_.c_str(), text.c_str());
  *kb = static_cast<uint32_t>(value);
  return base::OkStatus();
}

base::Status TracefsInstance::EnableEvent(std::string_view group_and_name) {
  std::string_view group;
  std::string_view name;
  if (!SplitEventName(group_and_name, &group, &name))
    return base::ErrStatus(
        "ftrace event \"%.*s\" is not group/name (each of [A-Za-z0-9_])",
        static_cast<int>(group_and_name.size()), group_and_name.data());
  const std::string dir =
      "events/" + std::string(group) + "/" + std::string(name);
  struct stat st;
  if (stat((path_ + "/" + dir).c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return base::ErrStatus("unknown ftrace event %.*s: this kernel has no %s",
                           static_cast<int>(group_and_name.size()),
                           group_and_name.data(), dir.c_str());
  if (stat((path_ + "/" + dir + "/enable").c_str(), &st) != 0 &&
      errno == ENOENT) {
    // ftrace/print and the other events of the ftrace group: always on.
    if (stat((path_ + "/" + dir + "/format").c_str(), &st) == 0)
      return base::OkStatus();
  }
  return WriteFile(dir + "/enable", "1");
}

base::Status TracefsInstance::DisableEvent(std::string_view group_and_name) {
  std::string_view group;
  std::string_view name;
  if (!SplitEventName(group_and_name, &group, &name))
    return base::ErrStatus("ftrace event \"%.*s\" is not group/name",
                           static_cast<int>(group_and_name.size()),
                           group_and_name.data());
  const std::string dir =
      "events/" + std::string(group) + "/" + std::string(name);
  struct stat st;
  if (stat((path_ + "/" + dir + "/enable").c_str(), &st) != 0 &&
      errno == ENOENT &&
      stat((path_ + "/" + dir + "/format").c_str(), &st) == 0)
    return base::OkStatus();  // always on: nothing to disable
  return WriteFile(dir + "/enable", "0");
}

base::Status TracefsInstance::SetTracingOn(bool on) {
  return WriteFile("tracing_on", on ? "1" : "0");
}

base::Status TracefsInstance::SetTraceClock(std::string_view clock) {
  std::string available;
  base::Status s = ReadFile("trace_clock", &available);
  if (!s.ok())
    return s;
  // "[local] global counter uptime perf mono mono_raw boot ..."
  bool listed = false;
  std::string_view rest = Trim(available);
  while (!rest.empty()) {
    const size_t space = rest.find_first_of(" \n");
    std::string_view entry = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view()
                                           : Trim(rest.substr(space + 1));
    if (entry.size() >= 2 && entry.front() == '[' && entry.back() == ']')
      entry = entry.substr(1, entry.size() - 2);
    if (!entry.empty() && entry == clock)
      listed = true;
  }
  if (!listed)
    return base::ErrStatus("tracefs instance %s: no trace clock \"%.*s\" (%s)",
                           name_.c_str(), static_cast<int>(clock.size()),
                           clock.data(), std::string(Trim(available)).c_str());
  return WriteFile("trace_clock", clock);
}

base::Status TracefsInstance::GetTraceClock(std::string* clock) const {
  std::string available;
  base::Status s = ReadFile("trace_clock", &available);
  if (!s.ok())
    return s;
  const size_t open = available.find('[');
  const size_t close =
      available.find(']', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos ||
      close == open + 1)
    return base::ErrStatus("tracefs instance %s: trace_clock is \"%s\"",
                           name_.c_str(), available.c_str());
  *clock = available.substr(open + 1, close - open - 1);
  return base::OkStatus();
}

base::Status TracefsInstance::ReadEventFormat(std::string_view group_and_name,
                                              std::string* text) const {
  std::string_view group;
  std::string_view name;
  if (!SplitEventName(group_and_name, &group, &name))
    return base::ErrStatus("ftrace event \"%.*s\" is not group/name",
                           static_cast<int>(group_and_name.size()),
                           group_and_name.data());
  return ReadFile(
      "events/" + std::string(group) + "/" + std::string(name) + "/format",
      text);
}

base::Status TracefsInstance::ReadHeaderPage(std::string* text) const {
  return ReadFile("events/header_page", text);
}

base::Status TracefsInstance::CountCpus(uint32_t* count) const {
  const std::string dir = path_ + "/per_cpu";
  DIR* d = opendir(dir.c_str());
  if (!d)
    return base::ErrStatus("tracefs: opendir %s: %s", dir.c_str(),
                           strerror(errno));
  uint64_t highest_plus_one = 0;
  while (struct dirent* e = readdir(d)) {
    const std::string_view entry(e->d_name);
    uint64_t cpu = 0;
    if (entry.size() > 3 && entry.substr(0, 3) == "cpu" &&
        ParseU64(entry.substr(3), &cpu) && cpu < 65536)
      highest_plus_one = std::max(highest_plus_one, cpu + 1);
  }
  closedir(d);
  if (highest_plus_one == 0)
    return base::ErrStatus("tracefs: no cpuN in %s", dir.c_str());
  *count = static_cast<uint32_t>(highest_plus_one);
  return base::OkStatus();
}

base::Status TracefsInstance::ReadCpuStats(uint32_t cpu, CpuStats* out) const {
  std::string text;
  base::Status s =
      ReadFile("per_cpu/cpu" + std::to_string(cpu) + "/stats", &text);
  if (!s.ok())
    return s;
  s = ParseCpuStats(text, out);
  if (!s.ok())
    return base::ErrStatus("tracefs instance %s cpu %u: %s", name_.c_str(), cpu,
                           s.message().c_str());
  return base::OkStatus();
}

base::Status TracefsInstance::GetPageSize(size_t* size) const {
  const long page = sysconf(_SC_PAGESIZE);
  std::string text;
  if (access((path_ + "/buffer_subbuf_size_kb").c_str(), F_OK) == 0) {
    base::Status s = ReadFile("buffer_subbuf_size_kb", &text);
    if (!s.ok())
      return s;
    uint64_t kb = 0;
    // The kernel allows sub-buffers of a page to 1 MiB (order 8 of 4 KiB).
    if (!ParseU64(Trim(std::string_view(text).substr(
                      0, std::string_view(text).find('\n'))),
                  &kb) ||
        kb == 0 || kb > 1024)
      return base::ErrStatus(
          "tracefs instance %s: buffer_subbuf_size_kb is \"%s\"", name_.c_str(),
          text.c_str());
    *size = static_cast<size_t>(kb * 1024);
    return base::OkStatus();
  }
  if (page <= 0)
    return base::ErrStatus("sysconf(_SC_PAGESIZE) failed");
  *size = static_cast<size_t>(page);
  return base::OkStatus();
}

base::Status TracefsInstance::OpenTracePipeRaw(uint32_t cpu,
                                               base::ScopedFd* fd) const {
  const std::string file =
      path_ + "/per_cpu/cpu" + std::to_string(cpu) + "/trace_pipe_raw";
  base::ScopedFd opened(open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!opened.valid())
    return base::ErrStatus("tracefs: open %s: %s", file.c_str(),
                           strerror(errno));
  *fd = std::move(opened);
  return base::OkStatus();
}

base::Status TracefsInstance::ListGroupEvents(
    std::string_view group,
    std::vector<std::string>* events) const {
  if (!IsIdentifier(group))
    return base::ErrStatus("ftrace event group \"%.*s\" is not of [A-Za-z0-9_]",
                           static_cast<int>(std::min<size_t>(group.size(), 64)),
                           group.data());
  const std::string dir = path_ + "/events/" + std::string(group);
  DIR* d = opendir(dir.c_str());
  if (!d)
    return base::ErrStatus("unknown ftrace event group %.*s: %s: %s",
                           static_cast<int>(group.size()), group.data(),
                           dir.c_str(), strerror(errno));
  std::vector<std::string> out;
  bool too_many = false;
  while (struct dirent* e = readdir(d)) {
    const std::string_view name(e->d_name);
    if (!IsIdentifier(name))
      continue;  // ".", "..", and nothing an event can be named
    struct stat st;
    const std::string format = dir + "/" + std::string(name) + "/format";
    if (stat(format.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      continue;  // "enable", "filter": files of the group, not events
    if (out.size() >= kMaxGroupEvents) {
      too_many = true;
      break;
    }
    out.push_back(std::string(group) + "/" + std::string(name));
  }
  closedir(d);
  if (too_many)
    return base::ErrStatus("ftrace event group %.*s: more than %zu events",
                           static_cast<int>(group.size()), group.data(),
                           kMaxGroupEvents);
  std::sort(out.begin(), out.end());
  *events = std::move(out);
  return base::OkStatus();
}

namespace {
bool IsOptionName(std::string_view option) {
  if (option.empty() || option.size() > 64)
    return false;
  for (char c : option) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-'))
      return false;
  }
  return true;
}
}  // namespace

bool TracefsInstance::HasOption(std::string_view option) const {
  if (!IsOptionName(option))
    return false;
  struct stat st;
  const std::string file = path_ + "/options/" + std::string(option);
  return stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

base::Status TracefsInstance::SetOption(std::string_view option, bool on) {
  if (!IsOptionName(option))
    return base::ErrStatus(
        "tracefs option \"%.*s\" is not of [a-z0-9_-]",
        static_cast<int>(std::min<size_t>(option.size(), 64)), option.data());
  if (!HasOption(option))
    return base::ErrStatus(
        "tracefs instance %s: this kernel has no option %.*s", name_.c_str(),
        static_cast<int>(option.size()), option.data());
  return WriteFile("options/" + std::string(option), on ? "1" : "0");
}

base::Status TracefsInstance::WriteTraceMarker(std::string_view text) const {
  return WriteFile("trace_marker", text);
}

base::Status LoadEventFormats(const TracefsInstance& instance,
                              const std::vector<std::string>& events,
                              EventFormatTable* table) {
  for (const std::string& event : events) {
    std::string_view group;
    std::string_view name;
    if (!SplitEventName(event, &group, &name))
      return base::ErrStatus("ftrace event \"%s\" is not group/name",
                             event.c_str());
    std::string text;
    base::Status s = instance.ReadEventFormat(event, &text);
    if (!s.ok())
      return s;
    EventFormat format;
    s = ParseEventFormat(text, group, &format);
    if (s.ok())
      s = table->Add(std::move(format));
    if (!s.ok())
      return base::ErrStatus("%s: %s", event.c_str(), s.message().c_str());
  }
  return base::OkStatus();
}

base::Status LoadHeaderPage(const TracefsInstance& instance, HeaderPage* out) {
  std::string text;
  base::Status s = instance.ReadHeaderPage(&text);
  if (!s.ok())
    return s;
  return ParseHeaderPage(text, out);
}

base::Status ReadRawPages(int fd,
                          size_t page_size,
                          size_t max_pages,
                          uint8_t* buf,
                          size_t* pages) {
  size_t done = 0;
  while (done < max_pages) {
    const ssize_t n = read(fd, buf + done * page_size, page_size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN)
        break;  // empty (O_NONBLOCK)
      *pages = done;
      return base::ErrStatus("trace_pipe_raw: read: %s", strerror(errno));
    }
    if (n == 0)
      break;
    if (static_cast<size_t>(n) != page_size) {
      *pages = done;
      return base::ErrStatus(
          "trace_pipe_raw: read %zd bytes, not a %zu-byte "
          "page",
          n, page_size);
    }
    done++;
  }
  *pages = done;
  return base::OkStatus();
}

base::Status CleanStaleInstances(const std::string& tracefs_root,
                                 const std::string& prefix,
                                 uint32_t* removed) {
  if (removed)
    *removed = 0;
  if (!IsValidInstancePrefix(prefix))
    return base::ErrStatus(
        "tracefs instance prefix \"%s\" must be 1..32 of [A-Za-z0-9_-]",
        prefix.c_str());
  const std::string dir = tracefs_root + "/instances";
  DIR* d = opendir(dir.c_str());
  if (!d)
    return base::ErrStatus("tracefs: opendir %s: %s", dir.c_str(),
                           strerror(errno));
  std::vector<std::string> stale;
  while (struct dirent* e = readdir(d)) {
    pid_t pid = 0;
    if (!ParseInstanceName(e->d_name, prefix, &pid))
      continue;
    if (pid == getpid())
      continue;  // ours
    if (kill(pid, 0) == 0 || errno != ESRCH)
      continue;  // alive (or not ours to signal: alive too)
    stale.push_back(e->d_name);
  }
  closedir(d);
  std::string errors;
  uint32_t count = 0;
  for (const std::string& name : stale) {
    std::string path = dir + "/";
    path += name;
    if (rmdir(path.c_str()) == 0) {
      count++;
      continue;
    }
    if (!errors.empty())
      errors += "; ";
    errors += path + ": " + strerror(errno);
  }
  if (removed)
    *removed = count;
  if (!errors.empty())
    return base::ErrStatus("cannot remove stale tracefs instances: %s",
                           errors.c_str());
  return base::OkStatus();
}

}  // namespace ftrace
}  // namespace ringtrace
