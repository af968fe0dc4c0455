/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Which key of /proc/meminfo and /proc/vmstat each MeminfoCounters and
// VmstatCounters value (protos/perfetto/common/sys_stats_counters.proto)
// stands for. The vmstat names are the enum's names without "VMSTAT_", in
// lower case (the kernel's own names); the meminfo names are the kernel's
// ("Active(anon)", "SReclaimable", "Committed_AS"), written out one by one
// (docs/probes.md lists the ones this machine's kernel does not have).
//
// Thread model: constant tables, safe from any thread.

#ifndef SRC_TRACED_PROBES_SYS_STATS_COUNTERS_H_
#define SRC_TRACED_PROBES_SYS_STATS_COUNTERS_H_

#include <stddef.h>
#include <stdint.h>

#include <string_view>

#include "protos/perfetto/common/sys_stats_counters.rtzero.h"

namespace ringtrace {
namespace probes {

using MeminfoCounter = perfetto::protos::rtzero::MeminfoCounters;
using VmstatCounter = perfetto::protos::rtzero::VmstatCounters;

template <typename Enum>
struct CounterName {
  const char* key;
  Enum counter;
};

// Every value of each enum but *_UNSPECIFIED, once, in enum order.
const CounterName<MeminfoCounter>* MeminfoCounterNames(size_t* count);
const CounterName<VmstatCounter>* VmstatCounterNames(size_t* count);

// The counter a /proc key stands for; false for a key no value names.
bool MeminfoCounterForKey(std::string_view key, MeminfoCounter* out);
bool VmstatCounterForKey(std::string_view key, VmstatCounter* out);

// One more than the largest value of each enum (for per-value bitmaps).
constexpr uint32_t kMeminfoCounterLimit = 39;
constexpr uint32_t kVmstatCounterLimit = 189;

}  // namespace probes
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_SYS_STATS_COUNTERS_H_
