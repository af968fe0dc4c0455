/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Fuzzes every /proc parser of ringtrace_probes with the same arbitrary
// bytes (another user's process controls its name and command line, and a
// read may end anywhere). Besides "no crash, no out-of-bounds read"
// (sanitizers), it checks the bounds the parsers promise: names cut to
// kMaxNameBytes, at most kMaxCmdlineArgs arguments holding no more bytes
// than the input, at most kMaxCpus CPUs and kMaxInterrupts interrupts, keys
// that point into the input, a pid stat only with a valid pid.

#include <stddef.h>
#include <stdint.h>

#include <string_view>

#include "ringtrace/logging.h"
#include "src/traced_probes/proc_parsers.h"

namespace ringtrace {
namespace probes {
namespace {

void CheckKeys(std::string_view text, const KeyValues& kv) {
  for (const KeyValue& v : kv.values) {
    RT_CHECK(!v.key.empty());
    RT_CHECK(v.key.data() >= text.data() &&
             v.key.data() + v.key.size() <= text.data() + text.size());
  }
}

void FuzzOne(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  const ProcStatus status = ParseProcStatus(text);
  if (status.name)
    RT_CHECK(status.name->size() <= kMaxNameBytes);
  if (status.pid)
    RT_CHECK(*status.pid > 0);

  ProcPidStat stat;
  if (ParseProcPidStat(text, &stat)) {
    RT_CHECK(stat.pid > 0);
    RT_CHECK(stat.ppid >= 0);
    RT_CHECK(stat.comm.size() <= kMaxNameBytes);
  }

  size_t cut = 0;
  const std::vector<std::string> args = SplitCmdline(text, &cut);
  RT_CHECK(args.size() <= kMaxCmdlineArgs);
  size_t bytes = 0;
  for (const std::string& arg : args)
    bytes += arg.size() + 1;
  RT_CHECK(bytes <= size + 1);
  RT_CHECK(cut == 0 || args.size() == kMaxCmdlineArgs);

  int64_t adj = 0;
  if (ParseOomScoreAdj(text, &adj))
    RT_CHECK(adj >= -1000 && adj <= 1000);
  RT_CHECK(ParseComm(text).size() <= kMaxNameBytes);

  CheckKeys(text, ParseMeminfo(text));
  CheckKeys(text, ParseVmstat(text));

  const SystemStat sys = ParseSystemStat(text);
  RT_CHECK(sys.cpus.size() <= kMaxCpus);
  RT_CHECK(sys.irqs.size() <= kMaxInterrupts);
  RT_CHECK(sys.softirqs.size() <= kMaxInterrupts);
  for (const CpuTimesTicks& cpu : sys.cpus)
    RT_CHECK(cpu.fields >= 4 && cpu.fields <= 8);
  for (const Interrupt& irq : sys.irqs)
    RT_CHECK(irq.index >= 0 && irq.count != 0);
}

}  // namespace
}  // namespace probes
}  // namespace ringtrace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ringtrace::probes::FuzzOne(data, size);
  return 0;
}
