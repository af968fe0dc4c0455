/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ProducerAnswers: what each connected producer owes the sessions and
// whether it is overdue. A producer is told to start instances (their ids
// come from here: nonzero, unique per connection for 2^32 - 1 instances),
// to stop them and to flush; it answers stops with DataSourceStopped and
// flushes with FlushAck. An answer that comes after its stop or flush
// ended without it (timed out, the session aborted or the service ending)
// is late: accepted (counted by the caller), not a protocol violation.
//
// Overdue: a producer that let a stop or a flush time out and still owes
// that answer. Later stops and flushes send it their command but do not
// wait for it, and count its missing answer as a timeout at once, so one
// stuck producer delays one stop or flush, not every session's. It is no
// longer overdue once it answered everything that timed out.
//
// Invariants: at most kMaxOwedAcks late stop answers and kMaxOwedAcks
// flush answers are kept per producer (the oldest are forgotten); a
// producer Forget() dropped owes nothing and is not overdue.
//
// Thread model: single-threaded (the service thread).

#ifndef SRC_TRACING_SERVICE_TRACED_PRODUCER_ANSWERS_H_
#define SRC_TRACING_SERVICE_TRACED_PRODUCER_ANSWERS_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <map>
#include <string>

#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace traced {

using SessionId = uint64_t;

class ProducerAnswers {
 public:
  // Answers a producer may still owe after their stop or flush timed out.
  static constexpr size_t kMaxOwedAcks = 1024;

  // A flush answer owed.
  struct OwedFlushAck {
    // Whether the flush still waits for it (false: it timed out; a late
    // ack is accepted and counted).
    bool waited = true;
    SessionId session = 0;  // whose late_acks count it
  };

  // The id of a new instance on producer |id|.
  uint32_t NextInstanceId(trace_buffer::ProducerID id);

  // A stop of instance |instance_id| ended without its answer; |timed_out|:
  // it waited its timeout (then the producer becomes overdue, logged with
  // |name| and |pid|).
  void OweLateStopAck(trace_buffer::ProducerID id,
                      uint32_t instance_id,
                      bool timed_out,
                      const std::string& name,
                      pid_t pid);
  // A DataSourceStopped for an instance no stop waits for: whether it was
  // owed late (then it is forgotten and the overdue state refreshed).
  bool TakeLateStopAck(trace_buffer::ProducerID id, uint32_t instance_id);

  // Flush |flush_id| of |session| was sent to producer |id|.
  void OweFlushAck(trace_buffer::ProducerID id,
                   uint32_t flush_id,
                   SessionId session,
                   bool waited);
  // A FlushAck: false if producer |id| does not owe it; else |*answered|
  // says how it was owed (forgotten now; a late one refreshes the overdue
  // state).
  bool TakeFlushAck(trace_buffer::ProducerID id,
                    uint32_t flush_id,
                    OwedFlushAck* answered);
  // Flush |flush_id| no longer waits for producer |id|: its ack, if owed,
  // is a late one.
  void StopWaitingForFlush(trace_buffer::ProducerID id, uint32_t flush_id);

  bool IsOverdue(trace_buffer::ProducerID id) const;
  // A stop or flush of producer |id| timed out: it is overdue from now on
  // (logged with |name| and |pid| when it becomes so).
  void MarkOverdue(trace_buffer::ProducerID id,
                   const std::string& name,
                   pid_t pid);
  // Whether a producer was made overdue since the last call (the stops and
  // flushes waiting only for such producers can end now).
  bool TakeOverdueMarked();

  // Producer |id| left: it owes nothing any more.
  void Forget(trace_buffer::ProducerID id);

 private:
  struct Owed {
    uint32_t next_instance_id = 1;
    // Instances stopped whose DataSourceStopped is still owed; the value:
    // whether the stop timed out.
    std::map<uint32_t, bool> late_stop_acks;
    std::map<uint32_t, OwedFlushAck> flush_acks;  // by flush id
    bool overdue = false;
  };
  // After an answer: a producer stays overdue while it owes any timed-out
  // answer.
  static void RefreshOverdue(Owed* owed);

  std::map<trace_buffer::ProducerID, Owed> owed_;
  bool overdue_marked_ = false;
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_PRODUCER_ANSWERS_H_
