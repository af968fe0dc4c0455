/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Perfetto's compact_sched encoding of one bundle's sched_switch and
// sched_waking events (FtraceEventBundle.CompactSched; docs/ftrace.md,
// "compact_sched"): instead of an FtraceEvent each, a column per field,
// packed varints:
//
//   switch_timestamp        delta from the previous switch of the bundle
//                           (the first: from 0)
//   switch_prev_state       the raw prev_state of the kernel
//   switch_next_pid, switch_next_prio
//   switch_next_comm_index  index of next_comm in intern_table
//   waking_timestamp        delta from the previous waking of the bundle
//   waking_pid, waking_target_cpu, waking_prio
//   waking_comm_index       index of comm in intern_table
//   waking_common_flags     the record's common_flags
//
// A compact switch leaves out prev_pid, prev_comm and prev_prio: they are
// the previous switch's next_* on the same CPU, which trace_processor
// tracks itself; the waker of a compact waking is the thread running on
// the bundle's CPU. Comms are interned per bundle: intern_table holds each
// distinct comm once, in the order first seen.
//
// Thread model: one thread at a time.

#ifndef SRC_TRACED_PROBES_FTRACE_COMPACT_SCHED_H_
#define SRC_TRACED_PROBES_FTRACE_COMPACT_SCHED_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "protos/perfetto/trace/ftrace/ftrace_event_bundle.rtzero.h"
#include "ringtrace/packed_repeated.h"

namespace ringtrace {
namespace ftrace {

class CompactSchedBuffer {
 public:
  CompactSchedBuffer();
  ~CompactSchedBuffer();
  CompactSchedBuffer(const CompactSchedBuffer&) = delete;
  CompactSchedBuffer& operator=(const CompactSchedBuffer&) = delete;

  // Empties the columns and the intern table for the next bundle (keeping
  // the memory).
  void Reset();

  void AddSwitch(uint64_t timestamp,
                 int64_t prev_state,
                 int32_t next_pid,
                 int32_t next_prio,
                 std::string_view next_comm);
  void AddWaking(uint64_t timestamp,
                 int32_t pid,
                 int32_t target_cpu,
                 int32_t prio,
                 std::string_view comm,
                 uint32_t common_flags);

  size_t switches() const { return switches_; }
  size_t wakings() const { return wakings_; }
  size_t interned() const { return table_.size(); }
  bool empty() const { return switches_ == 0 && wakings_ == 0; }

  // Writes the columns (and the table) into |bundle|'s compact_sched; does
  // nothing when empty().
  void WriteTo(perfetto::protos::rtzero::FtraceEventBundle* bundle) const;

 private:
  uint32_t Intern(std::string_view comm);

  size_t switches_ = 0;
  size_t wakings_ = 0;
  uint64_t last_switch_ts_ = 0;
  uint64_t last_waking_ts_ = 0;
  encoding::PackedVarInt switch_timestamp_;
  encoding::PackedVarInt switch_prev_state_;
  encoding::PackedVarInt switch_next_pid_;
  encoding::PackedVarInt switch_next_prio_;
  encoding::PackedVarInt switch_next_comm_index_;
  encoding::PackedVarInt waking_timestamp_;
  encoding::PackedVarInt waking_pid_;
  encoding::PackedVarInt waking_target_cpu_;
  encoding::PackedVarInt waking_prio_;
  encoding::PackedVarInt waking_comm_index_;
  encoding::PackedVarInt waking_common_flags_;
  // intern_table in order, and comm -> its index. Comms are at most 15
  // bytes on Linux (TASK_COMM_LEN), but a corrupt record can hold any
  // string: lengths are whatever the record's field allows.
  std::vector<std::string> table_;
  std::unordered_map<std::string, uint32_t> index_;
  std::string key_;  // reused for lookups
};

}  // namespace ftrace
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_FTRACE_COMPACT_SCHED_H_
