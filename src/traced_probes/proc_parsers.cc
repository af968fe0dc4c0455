/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/proc_parsers.h"

#include <limits>

#include "src/base/checked_math.h"

namespace ringtrace {
namespace probes {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t';
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back()))
    s.remove_suffix(1);
  return s;
}

std::string Cut(std::string_view s) {
  return std::string(s.substr(0, kMaxNameBytes));
}

// Calls |fn| for every line of |text| that ends with '\n' (without it). A
// last line without its newline was cut off (the read ended early): it is
// not used, and counted in |*malformed|.
template <typename Fn>
void ForEachLine(std::string_view text, uint32_t* malformed, Fn fn) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      ++*malformed;
      return;
    }
    fn(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
}

// Splits |s| at runs of spaces and tabs into at most |max| words; returns
// the count found (which may exceed |max|: the rest are not stored).
size_t SplitWords(std::string_view s, std::string_view* words, size_t max) {
  size_t n = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    while (pos < s.size() && IsSpace(s[pos]))
      ++pos;
    if (pos == s.size())
      break;
    size_t end = pos;
    while (end < s.size() && !IsSpace(s[end]))
      ++end;
    if (n < max)
      words[n] = s.substr(pos, end - pos);
    ++n;
    pos = end;
  }
  return n;
}

// "  123 kB" -> 123 (the unit required when |kb|).
bool ParseKbValue(std::string_view s, bool kb, uint64_t* out) {
  std::string_view words[3];
  const size_t n = SplitWords(s, words, 3);
  if (kb)
    return n == 2 && words[1] == "kB" && ParseUint64(words[0], out);
  return n == 1 && ParseUint64(words[0], out);
}

// Sets |*field| from |value| unless it was set already (a repeated key) or
// |value| does not parse; both count in |*malformed|.
template <typename T, typename Parse>
void SetOnce(std::optional<T>* field,
             std::string_view value,
             uint32_t* malformed,
             Parse parse) {
  T v{};
  if (field->has_value() || !parse(value, &v)) {
    ++*malformed;
    return;
  }
  *field = v;
}

bool ParseKb(std::string_view s, uint64_t* out) {
  return ParseKbValue(s, /*kb=*/true, out);
}

bool ParseTrimmedPid(std::string_view s, int32_t* out) {
  return ParsePid(Trim(s), out);
}

// "0" is a valid ppid (init's, kthreadd's).
bool ParsePpid(std::string_view s, int32_t* out) {
  s = Trim(s);
  if (s == "0") {
    *out = 0;
    return true;
  }
  return ParsePid(s, out);
}

// "Uid:\treal\teffective\tsaved\tfs": the real uid.
bool ParseUid(std::string_view s, int32_t* out) {
  std::string_view words[4];
  uint64_t uid = 0;
  if (SplitWords(s, words, 4) != 4 || !ParseUint64(words[0], &uid) ||
      uid > std::numeric_limits<uint32_t>::max()) {
    return false;
  }
  *out = static_cast<int32_t>(static_cast<uint32_t>(uid));
  return true;
}

// "intr 1234 0 5 0 ..." after the key: the total, then one count per
// index; the counts that are not zero go to |*entries|.
void ParseInterrupts(std::string_view s,
                     std::optional<uint64_t>* total,
                     std::vector<Interrupt>* entries,
                     SystemStat* stat) {
  if (total->has_value()) {
    ++stat->malformed_lines;
    return;
  }
  size_t pos = 0;
  int64_t index = -1;  // -1: the total
  while (pos < s.size()) {
    while (pos < s.size() && IsSpace(s[pos]))
      ++pos;
    if (pos == s.size())
      break;
    size_t end = pos;
    while (end < s.size() && !IsSpace(s[end]))
      ++end;
    uint64_t v = 0;
    if (!ParseUint64(s.substr(pos, end - pos), &v)) {
      ++stat->malformed_lines;
      return;  // keep what was read before the defect
    }
    if (index < 0) {
      *total = v;
    } else if (v != 0) {
      if (entries->size() >= kMaxInterrupts ||
          index > std::numeric_limits<int32_t>::max()) {
        ++stat->entries_cut;
      } else {
        entries->push_back({static_cast<int32_t>(index), v});
      }
    }
    ++index;
    pos = end;
  }
  if (!total->has_value())
    ++stat->malformed_lines;
}

}  // namespace

bool ParseUint64(std::string_view s, uint64_t* out) {
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
  *out = v;
  return true;
}

bool ParseInt64(std::string_view s, int64_t* out) {
  const bool negative = !s.empty() && s.front() == '-';
  if (negative)
    s.remove_prefix(1);
  uint64_t magnitude = 0;
  if (!ParseUint64(s, &magnitude))
    return false;
  constexpr uint64_t kMax =
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (!negative) {
    if (magnitude > kMax)
      return false;
    *out = static_cast<int64_t>(magnitude);
    return true;
  }
  if (magnitude > kMax + 1)
    return false;
  // -(kMax + 1) is INT64_MIN: negate in unsigned arithmetic.
  *out = magnitude == kMax + 1 ? std::numeric_limits<int64_t>::min()
                               : -static_cast<int64_t>(magnitude);
  return true;
}

bool ParsePid(std::string_view s, int32_t* out) {
  uint64_t v = 0;
  if (!ParseUint64(s, &v) || v == 0 ||
      v > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    return false;
  }
  *out = static_cast<int32_t>(v);
  return true;
}

ProcStatus ParseProcStatus(std::string_view text) {
  ProcStatus st;
  uint32_t* bad = &st.malformed_lines;
  ForEachLine(text, bad, [&](std::string_view line) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      return;  // not a "Key: value" line: nothing we read
    const std::string_view key = line.substr(0, colon);
    const std::string_view value = line.substr(colon + 1);
    if (key == "Name") {
      // "Name:\t" then the name, which may itself start with a space.
      std::string_view name = value;
      if (!name.empty() && name.front() == '\t')
        name.remove_prefix(1);
      if (st.name.has_value()) {
        ++*bad;
        return;
      }
      st.name = Cut(name);
    } else if (key == "Tgid") {
      SetOnce(&st.tgid, value, bad, ParseTrimmedPid);
    } else if (key == "Pid") {
      SetOnce(&st.pid, value, bad, ParseTrimmedPid);
    } else if (key == "PPid") {
      SetOnce(&st.ppid, value, bad, ParsePpid);
    } else if (key == "Uid") {
      SetOnce(&st.uid, value, bad, ParseUid);
    } else if (key == "VmSize") {
      SetOnce(&st.vm_size_kb, value, bad, ParseKb);
    } else if (key == "VmRSS") {
      SetOnce(&st.vm_rss_kb, value, bad, ParseKb);
    } else if (key == "RssAnon") {
      SetOnce(&st.rss_anon_kb, value, bad, ParseKb);
    } else if (key == "RssFile") {
      SetOnce(&st.rss_file_kb, value, bad, ParseKb);
    } else if (key == "RssShmem") {
      SetOnce(&st.rss_shmem_kb, value, bad, ParseKb);
    } else if (key == "VmSwap") {
      SetOnce(&st.vm_swap_kb, value, bad, ParseKb);
    } else if (key == "VmLck") {
      SetOnce(&st.vm_locked_kb, value, bad, ParseKb);
    } else if (key == "VmHWM") {
      SetOnce(&st.vm_hwm_kb, value, bad, ParseKb);
    }
  });
  return st;
}

bool ParseProcPidStat(std::string_view text, ProcPidStat* out) {
  // Index (after the comm) of the fields read: state is 0 (field 3 of
  // proc(5)), ppid 1, utime 11, stime 12, starttime 19.
  constexpr size_t kState = 0, kPpid = 1, kUtime = 11, kStime = 12,
                   kStartTime = 19;
  const size_t open = text.find(" (");
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos ||
      close < open + 2 || !ParsePid(text.substr(0, open), &out->pid)) {
    return false;
  }
  out->comm = Cut(text.substr(open + 2, close - open - 2));
  std::string_view rest = text.substr(close + 1);
  if (!rest.empty() && rest.back() == '\n')
    rest.remove_suffix(1);
  std::string_view words[kStartTime + 1];
  if (SplitWords(rest, words, kStartTime + 1) < kStartTime + 1)
    return false;
  if (words[kState].size() != 1)
    return false;
  out->state = words[kState][0];
  return ParsePpid(words[kPpid], &out->ppid) &&
         ParseUint64(words[kUtime], &out->utime_ticks) &&
         ParseUint64(words[kStime], &out->stime_ticks) &&
         ParseUint64(words[kStartTime], &out->start_time_ticks);
}

std::vector<std::string> SplitCmdline(std::string_view bytes,
                                      size_t* args_cut) {
  std::vector<std::string> args;
  size_t cut = 0;
  size_t pos = 0;
  while (pos < bytes.size()) {
    size_t end = bytes.find('\0', pos);
    if (end == std::string_view::npos)
      end = bytes.size();
    if (args.size() < kMaxCmdlineArgs)
      args.emplace_back(bytes.substr(pos, end - pos));
    else
      ++cut;
    pos = end + 1;
  }
  if (args_cut)
    *args_cut = cut;
  return args;
}

bool ParseOomScoreAdj(std::string_view text, int64_t* out) {
  if (text.empty() || text.back() != '\n')
    return false;  // cut off
  text.remove_suffix(1);
  int64_t v = 0;
  if (!ParseInt64(text, &v) || v < -1000 || v > 1000)
    return false;
  *out = v;
  return true;
}

std::string ParseComm(std::string_view text) {
  if (!text.empty() && text.back() == '\n')
    text.remove_suffix(1);
  return Cut(text);
}

KeyValues ParseMeminfo(std::string_view text) {
  KeyValues out;
  ForEachLine(text, &out.malformed_lines, [&](std::string_view line) {
    const size_t colon = line.find(':');
    uint64_t v = 0;
    if (colon == 0 || colon == std::string_view::npos) {
      ++out.malformed_lines;
      return;
    }
    const std::string_view value = line.substr(colon + 1);
    // "kB" or no unit at all (the HugePages_ counts).
    if (!ParseKbValue(value, /*kb=*/true, &v) &&
        !ParseKbValue(value, /*kb=*/false, &v)) {
      ++out.malformed_lines;
      return;
    }
    out.values.push_back({line.substr(0, colon), v});
  });
  return out;
}

KeyValues ParseVmstat(std::string_view text) {
  KeyValues out;
  ForEachLine(text, &out.malformed_lines, [&](std::string_view line) {
    std::string_view words[2];
    uint64_t v = 0;
    if (SplitWords(line, words, 2) != 2 || !ParseUint64(words[1], &v)) {
      ++out.malformed_lines;
      return;
    }
    out.values.push_back({words[0], v});
  });
  return out;
}

SystemStat ParseSystemStat(std::string_view text) {
  SystemStat stat;
  ForEachLine(text, &stat.malformed_lines, [&](std::string_view line) {
    const size_t space = line.find(' ');
    const std::string_view key = line.substr(0, space);
    const std::string_view rest = space == std::string_view::npos
                                      ? std::string_view()
                                      : line.substr(space + 1);
    if (key.size() > 3 && key.substr(0, 3) == "cpu") {
      uint64_t cpu = 0;
      std::string_view words[8];
      const size_t n = SplitWords(rest, words, 8);
      CpuTimesTicks times;
      if (!ParseUint64(key.substr(3), &cpu) ||
          cpu > std::numeric_limits<uint32_t>::max() || n < 4) {
        ++stat.malformed_lines;
        return;
      }
      times.cpu = static_cast<uint32_t>(cpu);
      times.fields = static_cast<uint32_t>(n < 8 ? n : 8);
      for (uint32_t i = 0; i < times.fields; i++) {
        if (!ParseUint64(words[i], &times.ticks[i])) {
          ++stat.malformed_lines;
          return;
        }
      }
      if (stat.cpus.size() >= kMaxCpus) {
        ++stat.entries_cut;
        return;
      }
      stat.cpus.push_back(times);
    } else if (key == "intr") {
      ParseInterrupts(rest, &stat.irq_total, &stat.irqs, &stat);
    } else if (key == "softirq") {
      ParseInterrupts(rest, &stat.softirq_total, &stat.softirqs, &stat);
    } else if (key == "processes") {
      SetOnce(&stat.forks, Trim(rest), &stat.malformed_lines, ParseUint64);
    } else if (key == "ctxt") {
      SetOnce(&stat.context_switches, Trim(rest), &stat.malformed_lines,
              ParseUint64);
    }
  });
  return stat;
}

}  // namespace probes
}  // namespace ringtrace
