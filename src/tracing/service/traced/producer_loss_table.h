/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ProducerLossTable: the loss counters producers reported (DrainRequest loss
// reports, ipc/wire_protocol.h), kept per producer and writer for the
// trace's TraceStats (the ringtrace_* fields, docs/service.md "Loss
// reports").
//
// Reports come from producers, so they are untrusted:
//   - bounded memory: at most kMaxWritersPerProducer writers per producer
//     and kMaxWriters in the whole table (entries for more are counted in
//     writers_over_limit and dropped), at most kMaxDepartedProducers records
//     of producers that are gone (the oldest is evicted first, counted in
//     records_evicted), one record per connected producer (the service
//     bounds those);
//   - monotonic or ignored: a writer's counters only grow. An entry in
//     which any counter is smaller than the one already held is ignored
//     (counted in entries_ignored), so a reordered or hostile report cannot
//     lower a loss that was reported;
//   - no overflow: totals saturate at 2^64 - 1.
// A producer that disconnects in order sends a final report; a record
// without one (final_report = false) belongs to a producer that died (e.g.
// SIGKILL) or was still connected when the trace was written: its last
// losses may be missing.
//
// Thread model: single-threaded (the ServiceCore's thread).

#ifndef SRC_TRACING_SERVICE_TRACED_PRODUCER_LOSS_TABLE_H_
#define SRC_TRACING_SERVICE_TRACED_PRODUCER_LOSS_TABLE_H_

#include <stddef.h>
#include <stdint.h>

#include <deque>
#include <functional>
#include <map>
#include <string>

#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2_types.h"

namespace ringtrace {
namespace traced {

class ProducerLossTable {
 public:
  static constexpr size_t kMaxWritersPerProducer = 1024;
  static constexpr size_t kMaxWriters = 65536;
  static constexpr size_t kMaxDepartedProducers = 1024;

  struct Record {
    trace_buffer::ProducerID producer_id = 0;
    std::string name;
    trace_buffer::ClientIdentity identity;
    bool connected = true;
    bool final_report = false;
    std::map<uint32_t, ipc::WriterLossEntry> writers;  // by WriterID
    uint64_t entries_ignored = 0;                      // not monotonic
    uint64_t writers_over_limit = 0;  // entries beyond the writer limit
  };

  struct Totals {
    uint64_t packets_dropped = 0;  // before + after end, every writer
    uint64_t bytes_dropped = 0;
    uint64_t stall_timeouts = 0;
    uint64_t entries_ignored = 0;
    uint64_t records_evicted = 0;
  };

  ProducerLossTable();
  ~ProducerLossTable();

  // A DrainRequest with a loss report from the connected producer |id|.
  void OnReport(trace_buffer::ProducerID id,
                const std::string& name,
                const trace_buffer::ClientIdentity& identity,
                const ipc::DrainRequestMsg& report);
  // The producer |id| is gone (after its final drain). Keeps its record
  // (creating one if it never reported, so that a producer without a final
  // report shows up) among the departed ones.
  void OnProducerRemoved(trace_buffer::ProducerID id,
                         const std::string& name,
                         const trace_buffer::ClientIdentity& identity);

  // The records worth writing: every departed producer without a final
  // report, and every producer with a loss (or an ignored entry). Departed
  // first (oldest first), then the connected ones by ProducerID.
  void ForEachRecord(const std::function<void(const Record&)>& fn) const;
  Totals totals() const;

  // The TraceStats fields (docs/service.md, "Loss reports"), encoded, for
  // appending to a TraceStats message. |sequence_id_for| maps {producer,
  // writer, whether the record's producer is still connected} to the
  // trace's trusted_packet_sequence_id (0: none). It is asked only for the
  // latest record of a ProducerID: an earlier owner of a reused id gets 0.
  std::string EncodeTraceStatsFields(
      const std::function<uint32_t(trace_buffer::ProducerID, uint32_t, bool)>&
          sequence_id_for) const;

 private:
  static bool Worth(const Record& r);
  Record& LiveRecord(trace_buffer::ProducerID id,
                     const std::string& name,
                     const trace_buffer::ClientIdentity& identity);

  std::map<trace_buffer::ProducerID, Record> live_;
  std::deque<Record> departed_;
  uint64_t records_evicted_ = 0;
  size_t writers_ = 0;  // writer entries over every record
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_PRODUCER_LOSS_TABLE_H_
