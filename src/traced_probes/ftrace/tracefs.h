/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// tracefs, the kernel's tracing file system (docs/ftrace.md, "tracefs"):
// finding (or mounting) it, a private ring buffer instance per user, the
// per-CPU counters, and the raw pages.
//
// Everything ringtrace writes in tracefs is inside instances it created,
// named instances/<prefix><pid>_<n> (prefix e.g. "ringtrace_probes_"): the
// top-level buffer, which other tools (perfetto, trace-cmd, ftrace users)
// share, is never touched, and CleanStaleInstances() removes only
// instances with our prefix whose pid is not alive (a producer that
// crashed).
//
// Thread model: a TracefsInstance is used by one thread at a time; the free
// functions are thread-safe.

#ifndef SRC_TRACED_PROBES_FTRACE_TRACEFS_H_
#define SRC_TRACED_PROBES_FTRACE_TRACEFS_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ringtrace/status.h"
#include "src/base/scoped_fd.h"
#include "src/traced_probes/ftrace/event_format.h"

namespace ringtrace {
namespace ftrace {

// The most events ListGroupEvents() lists for one group.
constexpr size_t kMaxGroupEvents = 4096;

// Where tracefs is looked for, in this order.
constexpr const char* kTracefsMountPoint = "/sys/kernel/tracing";
constexpr const char* kDebugfsTracingPath = "/sys/kernel/debug/tracing";

// True when |dir| is a tracefs root we can use: it has a readable
// events/header_page and an instances/ directory.
bool IsTracefsRoot(const std::string& dir);

// The first of |candidates| that IsTracefsRoot(). On failure the message
// names every path looked at and the fix: the mount command when none is
// mounted, "run as root" when one is but cannot be read.
base::Status FindTracefsIn(const std::vector<std::string>& candidates,
                           std::string* root);
// FindTracefsIn({kTracefsMountPoint, kDebugfsTracingPath}).
base::Status FindTracefs(std::string* root);

// mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr): root only
// (CAP_SYS_ADMIN); a clear error otherwise.
base::Status MountTracefs();

// FindTracefs(); if nothing is mounted and we are root, MountTracefs() and
// look again.
base::Status FindOrMountTracefs(std::string* root);

// per_cpu/cpuN/stats. Times are in seconds, as the file prints them.
struct CpuStats {
  uint64_t entries = 0;         // events in the buffer, not yet read
  uint64_t overrun = 0;         // overwritten by newer ones (lost)
  uint64_t commit_overrun = 0;  // lost while a commit was nested (lost)
  uint64_t bytes = 0;           // bytes of the events in the buffer
  double oldest_event_ts = 0;
  double now_ts = 0;
  uint64_t dropped_events = 0;  // refused when the buffer was full (lost)
  uint64_t read_events = 0;     // consumed by readers
};

// Parses the "key: value" lines of a stats file ("entries:", "overrun:",
// "commit overrun:", "bytes:", "oldest event ts:", "now ts:", "dropped
// events:", "read events:"). Unknown keys are skipped; "entries" and
// "overrun" are required; a malformed number is an error.
base::Status ParseCpuStats(std::string_view text, CpuStats* out);

// The name of an instance: <prefix><pid>_<n>.
std::string InstanceName(const std::string& prefix, pid_t pid, uint32_t n);
// True if |name| is <prefix><pid>_<n> exactly (both decimal), with |*pid|
// set.
bool ParseInstanceName(std::string_view name,
                       std::string_view prefix,
                       pid_t* pid);
// A prefix is 1..32 of [A-Za-z0-9_-].
bool IsValidInstancePrefix(std::string_view prefix);

// Splits "group/name" (each 1..255 of [A-Za-z0-9_]); false otherwise, so
// that no name can leave events/.
bool SplitEventName(std::string_view group_and_name,
                    std::string_view* group,
                    std::string_view* name);

// A private ring buffer (tracefs instances/<name>), removed on
// destruction.
class TracefsInstance {
 public:
  // Creates instances/<prefix><getpid()>_<n> under |tracefs_root| (the
  // first free n), with tracing_on set to 0: configure it, then
  // SetTracingOn(true).
  static base::Status Create(const std::string& tracefs_root,
                             const std::string& prefix,
                             std::unique_ptr<TracefsInstance>* out);

  // Sets tracing_on to 0 and removes the instance (rmdir). Every fd opened
  // on its files (OpenTracePipeRaw()) must be closed first, or the kernel
  // refuses (EBUSY); the failure is logged and CleanStaleInstances()
  // removes it once this process is gone.
  ~TracefsInstance();

  TracefsInstance(const TracefsInstance&) = delete;
  TracefsInstance& operator=(const TracefsInstance&) = delete;

  const std::string& name() const { return name_; }
  // <tracefs_root>/instances/<name>
  const std::string& path() const { return path_; }

  // buffer_size_kb: per CPU; the kernel rounds up to whole pages (and to
  // at least two).
  base::Status SetBufferSizeKb(uint32_t kb);
  base::Status GetBufferSizeKb(uint32_t* kb) const;

  // events/<group>/<name>/enable. An event of the ftrace group (print, ...)
  // has no enable file: it is always recorded, so enabling it succeeds
  // when its format exists. An unknown event is an error naming it.
  base::Status EnableEvent(std::string_view group_and_name);
  base::Status DisableEvent(std::string_view group_and_name);

  base::Status SetTracingOn(bool on);

  // trace_clock, the clock of the events' timestamps. A new instance has
  // "local" (per-CPU, not comparable with any clock_gettime() clock);
  // Perfetto's traced_probes selects "boot" (CLOCK_BOOTTIME). A name the
  // kernel does not list is an error naming the ones it does.
  base::Status SetTraceClock(std::string_view clock);
  // The selected one: the entry of trace_clock in brackets.
  base::Status GetTraceClock(std::string* clock) const;

  // events/<group>/<name>/format and events/header_page, as text.
  base::Status ReadEventFormat(std::string_view group_and_name,
                               std::string* text) const;
  base::Status ReadHeaderPage(std::string* text) const;

  // The number of per_cpu/cpuN directories (N = 0 .. count - 1).
  base::Status CountCpus(uint32_t* count) const;
  base::Status ReadCpuStats(uint32_t cpu, CpuStats* out) const;

  // The size of what one read of trace_pipe_raw returns: the ring buffer's
  // sub-buffer (buffer_subbuf_size_kb where the kernel has it), otherwise
  // the page size.
  base::Status GetPageSize(size_t* size) const;

  // per_cpu/cpuN/trace_pipe_raw, O_RDONLY | O_NONBLOCK | O_CLOEXEC.
  base::Status OpenTracePipeRaw(uint32_t cpu, base::ScopedFd* fd) const;

  // The events of |group| (the directories of events/<group>/ with a
  // format file), sorted, as "group/name"; at most kMaxGroupEvents (more
  // is an error). A group not of [A-Za-z0-9_], or one this kernel does not
  // have, is an error naming it.
  base::Status ListGroupEvents(std::string_view group,
                               std::vector<std::string>* events) const;

  // options/<option> (1 or 0). HasOption() says whether the kernel has it
  // (copy_trace_marker, for one, is new in Linux 6.17). An option name is
  // 1..64 of [a-z0-9_-].
  bool HasOption(std::string_view option) const;
  base::Status SetOption(std::string_view option, bool on);

  // Writes |text| to this instance's trace_marker (an ftrace/print event
  // on the writing CPU).
  base::Status WriteTraceMarker(std::string_view text) const;

 private:
  TracefsInstance(std::string name, std::string path);

  base::Status WriteFile(const std::string& rel, std::string_view text) const;
  base::Status ReadFile(const std::string& rel, std::string* text) const;

  const std::string name_;
  const std::string path_;
};

// Reads and parses the format of each "group/name" of |events| from
// |instance| into |table|; the first failure names its event.
base::Status LoadEventFormats(const TracefsInstance& instance,
                              const std::vector<std::string>& events,
                              EventFormatTable* table);
// Reads and parses |instance|'s events/header_page.
base::Status LoadHeaderPage(const TracefsInstance& instance, HeaderPage* out);

// Reads whole pages from a trace_pipe_raw fd into |buf| (|max_pages| *
// |page_size| bytes) until the buffer is empty (EAGAIN) or |max_pages|
// were read; *pages says how many. A read that returns part of a page is
// an error.
base::Status ReadRawPages(int fd,
                          size_t page_size,
                          size_t max_pages,
                          uint8_t* buf,
                          size_t* pages);

// Removes the instances named <prefix><pid>_<n> whose pid is not a live
// process (kill(pid, 0) fails with ESRCH); leaves every other directory
// alone. *removed (may be null) counts them. Errors name the instance.
base::Status CleanStaleInstances(const std::string& tracefs_root,
                                 const std::string& prefix,
                                 uint32_t* removed);

}  // namespace ftrace
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_FTRACE_TRACEFS_H_
