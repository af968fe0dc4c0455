/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/producer_answers.h"

#include "ringtrace/logging.h"

namespace ringtrace {
namespace traced {

using trace_buffer::ProducerID;

uint32_t ProducerAnswers::NextInstanceId(ProducerID id) {
  Owed& owed = owed_[id];
  const uint32_t instance_id = owed.next_instance_id++;
  if (owed.next_instance_id == 0)
    owed.next_instance_id = 1;
  return instance_id;
}

void ProducerAnswers::OweLateStopAck(ProducerID id,
                                     uint32_t instance_id,
                                     bool timed_out,
                                     const std::string& name,
                                     pid_t pid) {
  std::map<uint32_t, bool>& late = owed_[id].late_stop_acks;
  if (late.size() >= kMaxOwedAcks)
    late.erase(late.begin());
  late[instance_id] = timed_out;
  if (timed_out)
    MarkOverdue(id, name, pid);
}

bool ProducerAnswers::TakeLateStopAck(ProducerID id, uint32_t instance_id) {
  auto it = owed_.find(id);
  if (it == owed_.end() || it->second.late_stop_acks.erase(instance_id) == 0)
    return false;
  RefreshOverdue(&it->second);
  return true;
}

void ProducerAnswers::OweFlushAck(ProducerID id,
                                  uint32_t flush_id,
                                  SessionId session,
                                  bool waited) {
  std::map<uint32_t, OwedFlushAck>& acks = owed_[id].flush_acks;
  if (acks.size() >= kMaxOwedAcks)
    acks.erase(acks.begin());
  acks[flush_id] = {waited, session};
}

bool ProducerAnswers::TakeFlushAck(ProducerID id,
                                   uint32_t flush_id,
                                   OwedFlushAck* answered) {
  auto it = owed_.find(id);
  if (it == owed_.end())
    return false;
  auto ack = it->second.flush_acks.find(flush_id);
  if (ack == it->second.flush_acks.end())
    return false;
  *answered = ack->second;
  it->second.flush_acks.erase(ack);
  if (!answered->waited)
    RefreshOverdue(&it->second);
  return true;
}

void ProducerAnswers::StopWaitingForFlush(ProducerID id, uint32_t flush_id) {
  auto it = owed_.find(id);
  if (it == owed_.end())
    return;
  auto ack = it->second.flush_acks.find(flush_id);
  if (ack != it->second.flush_acks.end())
    ack->second.waited = false;  // a late ack is accepted
}

bool ProducerAnswers::IsOverdue(ProducerID id) const {
  auto it = owed_.find(id);
  return it != owed_.end() && it->second.overdue;
}

void ProducerAnswers::MarkOverdue(ProducerID id,
                                  const std::string& name,
                                  pid_t pid) {
  Owed& owed = owed_[id];
  if (owed.overdue)
    return;
  owed.overdue = true;
  overdue_marked_ = true;
  RT_LOG(
      "producer \"%s\" (pid %d) did not answer in time: later stops and "
      "flushes do not wait for it until it answers",
      name.c_str(), static_cast<int>(pid));
}

bool ProducerAnswers::TakeOverdueMarked() {
  const bool marked = overdue_marked_;
  overdue_marked_ = false;
  return marked;
}

void ProducerAnswers::Forget(ProducerID id) {
  owed_.erase(id);
}

// static
void ProducerAnswers::RefreshOverdue(Owed* owed) {
  bool owes = false;
  for (const auto& kv : owed->late_stop_acks)
    owes |= kv.second;
  for (const auto& kv : owed->flush_acks)
    owes |= !kv.second.waited;
  owed->overdue = owes;
}

}  // namespace traced
}  // namespace ringtrace
