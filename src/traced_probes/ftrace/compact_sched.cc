/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/ftrace/compact_sched.h"

namespace ringtrace {
namespace ftrace {

namespace rt = perfetto::protos::rtzero;

CompactSchedBuffer::CompactSchedBuffer() = default;
CompactSchedBuffer::~CompactSchedBuffer() = default;

void CompactSchedBuffer::Reset() {
  switches_ = 0;
  wakings_ = 0;
  last_switch_ts_ = 0;
  last_waking_ts_ = 0;
  switch_timestamp_.Reset();
  switch_prev_state_.Reset();
  switch_next_pid_.Reset();
  switch_next_prio_.Reset();
  switch_next_comm_index_.Reset();
  waking_timestamp_.Reset();
  waking_pid_.Reset();
  waking_target_cpu_.Reset();
  waking_prio_.Reset();
  waking_comm_index_.Reset();
  waking_common_flags_.Reset();
  table_.clear();
  index_.clear();
}

uint32_t CompactSchedBuffer::Intern(std::string_view comm) {
  key_.assign(comm.data(), comm.size());
  auto it = index_.find(key_);
  if (it != index_.end())
    return it->second;
  // At most one entry per event of the bundle, which is bounded by the
  // pages it is made of: the index fits in 32 bits.
  const uint32_t index = static_cast<uint32_t>(table_.size());
  table_.push_back(key_);
  index_.emplace(key_, index);
  return index;
}

void CompactSchedBuffer::AddSwitch(uint64_t timestamp,
                                   int64_t prev_state,
                                   int32_t next_pid,
                                   int32_t next_prio,
                                   std::string_view next_comm) {
  // Unsigned: a time that goes back (a corrupt page) wraps, and the
  // reader's unsigned sum wraps back to it.
  switch_timestamp_.Append(timestamp - last_switch_ts_);
  last_switch_ts_ = timestamp;
  switch_prev_state_.Append(prev_state);
  switch_next_pid_.Append(next_pid);
  switch_next_prio_.Append(next_prio);
  switch_next_comm_index_.Append(Intern(next_comm));
  switches_++;
}

void CompactSchedBuffer::AddWaking(uint64_t timestamp,
                                   int32_t pid,
                                   int32_t target_cpu,
                                   int32_t prio,
                                   std::string_view comm,
                                   uint32_t common_flags) {
  waking_timestamp_.Append(timestamp - last_waking_ts_);
  last_waking_ts_ = timestamp;
  waking_pid_.Append(pid);
  waking_target_cpu_.Append(target_cpu);
  waking_prio_.Append(prio);
  waking_comm_index_.Append(Intern(comm));
  waking_common_flags_.Append(common_flags);
  wakings_++;
}

void CompactSchedBuffer::WriteTo(rt::FtraceEventBundle* bundle) const {
  if (empty())
    return;
  rt::FtraceEventBundle_CompactSched out = bundle->set_compact_sched();
  for (const std::string& comm : table_)
    out.add_intern_table(comm);
  if (switches_) {
    out.set_switch_timestamp(switch_timestamp_);
    out.set_switch_prev_state(switch_prev_state_);
    out.set_switch_next_pid(switch_next_pid_);
    out.set_switch_next_prio(switch_next_prio_);
    out.set_switch_next_comm_index(switch_next_comm_index_);
  }
  if (wakings_) {
    out.set_waking_timestamp(waking_timestamp_);
    out.set_waking_pid(waking_pid_);
    out.set_waking_target_cpu(waking_target_cpu_);
    out.set_waking_prio(waking_prio_);
    out.set_waking_comm_index(waking_comm_index_);
    out.set_waking_common_flags(waking_common_flags_);
  }
}

}  // namespace ftrace
}  // namespace ringtrace
