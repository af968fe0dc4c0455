/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Parsers of the /proc files ringtrace_probes reads (docs/probes.md). The
// text is untrusted: another user's process chooses its name and its
// command line, a process can vanish in the middle of a read (the file then
// ends early), and a future kernel may add, drop or reformat lines. So
// every parser here takes bytes of any content and length, reads them with
// bounds checks only, never trusts a count or a length from the text, and
// reports what it could not use (a line it did not understand is counted in
// malformed_lines, not guessed at). Numbers are decimal digits, checked
// against overflow; a value that does not parse leaves its field unset.
//
// The parsers keep no state and allocate only their results: free
// functions, safe from any thread.

#ifndef SRC_TRACED_PROBES_PROC_PARSERS_H_
#define SRC_TRACED_PROBES_PROC_PARSERS_H_

#include <stddef.h>
#include <stdint.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ringtrace {
namespace probes {

// The longest process or thread name kept (the kernel's comm is at most 15
// bytes; /proc/PID/status escapes some bytes, which can make it longer).
constexpr size_t kMaxNameBytes = 64;
// /proc/PID/cmdline: at most this many arguments are kept.
constexpr size_t kMaxCmdlineArgs = 256;
// /proc/stat: at most this many CPU lines and this many interrupt counters
// (per-interrupt and per-softirq entries that are not zero) are kept.
constexpr size_t kMaxCpus = 4096;
constexpr size_t kMaxInterrupts = 4096;

// Decimal digits only (no sign, no space), at most UINT64_MAX.
bool ParseUint64(std::string_view s, uint64_t* out);
// An optional '-' and decimal digits, within int64_t.
bool ParseInt64(std::string_view s, int64_t* out);
// A pid or tid: decimal digits, 1 ..  INT32_MAX.
bool ParsePid(std::string_view s, int32_t* out);

// /proc/PID/status, "Key:\tvalue" lines.
struct ProcStatus {
  // "Name:", cut to kMaxNameBytes.
  std::optional<std::string> name;
  std::optional<int32_t> tgid;
  std::optional<int32_t> pid;
  std::optional<int32_t> ppid;  // 0 for init and kthreadd
  // The real uid (the first of "Uid:"'s four), as an int32 like
  // ProcessTree.Process.uid.
  std::optional<int32_t> uid;
  // In kB.
  std::optional<uint64_t> vm_size_kb;
  std::optional<uint64_t> vm_rss_kb;
  std::optional<uint64_t> rss_anon_kb;
  std::optional<uint64_t> rss_file_kb;
  std::optional<uint64_t> rss_shmem_kb;
  std::optional<uint64_t> vm_swap_kb;
  std::optional<uint64_t> vm_locked_kb;
  std::optional<uint64_t> vm_hwm_kb;
  // Lines of a key above whose value did not parse, or that repeated a key
  // (the first one counts).
  uint32_t malformed_lines = 0;
};
ProcStatus ParseProcStatus(std::string_view text);

// /proc/PID/stat: "pid (comm) state ppid ... utime stime ... starttime ...".
// The comm may hold any byte, ')' and spaces included: it ends at the last
// ')' of the text.
struct ProcPidStat {
  int32_t pid = 0;
  std::string comm;  // cut to kMaxNameBytes
  char state = 0;
  int32_t ppid = 0;
  // In clock ticks (sysconf(_SC_CLK_TCK)).
  uint64_t utime_ticks = 0;
  uint64_t stime_ticks = 0;
  uint64_t start_time_ticks = 0;  // after boot
};
// False (|*out| unspecified) unless the pid, the comm in parentheses and at
// least the fields up to starttime are there and parse.
bool ParseProcPidStat(std::string_view text, ProcPidStat* out);

// /proc/PID/cmdline: arguments separated (and usually ended) by NUL bytes.
// An empty argument in the middle is kept; the NUL ending the last one adds
// none. At most kMaxCmdlineArgs arguments (|*args_cut| counts those left
// out, if not null). A process that rewrote its arguments may have one
// string with spaces and no NUL: that is one argument.
std::vector<std::string> SplitCmdline(std::string_view bytes,
                                      size_t* args_cut = nullptr);

// /proc/PID/oom_score_adj: one integer in -1000 .. 1000 and a newline.
bool ParseOomScoreAdj(std::string_view text, int64_t* out);

// /proc/PID/task/TID/comm: the name and a newline; cut to kMaxNameBytes.
std::string ParseComm(std::string_view text);

// A line of /proc/meminfo ("Key:   value kB", or without the unit) or
// /proc/vmstat ("key value"). |key| points into the parsed text.
struct KeyValue {
  std::string_view key;
  uint64_t value = 0;
};
struct KeyValues {
  std::vector<KeyValue> values;
  uint32_t malformed_lines = 0;
};
// Values are as the file has them (kB where the line says kB); a unit other
// than kB is malformed.
KeyValues ParseMeminfo(std::string_view text);
KeyValues ParseVmstat(std::string_view text);

// /proc/stat.
struct CpuTimesTicks {
  uint32_t cpu = 0;
  // user nice system idle iowait irq softirq steal, in clock ticks; the
  // first |fields| of them are there (at least 4: older kernels have fewer
  // columns, newer ones more, which are ignored).
  uint64_t ticks[8] = {};
  uint32_t fields = 0;
};
struct Interrupt {
  int32_t index = 0;  // the irq number, or the softirq kind
  uint64_t count = 0;
};
struct SystemStat {
  std::vector<CpuTimesTicks> cpus;  // the "cpuN" lines, not the "cpu" sum
  std::optional<uint64_t> irq_total;
  std::vector<Interrupt> irqs;  // those not zero
  std::optional<uint64_t> softirq_total;
  std::vector<Interrupt> softirqs;           // those not zero
  std::optional<uint64_t> forks;             // "processes"
  std::optional<uint64_t> context_switches;  // "ctxt"
  uint32_t malformed_lines = 0;
  // CPU lines or interrupt entries beyond kMaxCpus / kMaxInterrupts.
  uint32_t entries_cut = 0;
};
SystemStat ParseSystemStat(std::string_view text);

}  // namespace probes
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_PROC_PARSERS_H_
