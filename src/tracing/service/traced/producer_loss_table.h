/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ProducerLossTable: the loss counters producers reported (DrainRequest loss
// reports, ipc/wire_protocol.h, and the ring's writer loss area read when a
// producer is removed), kept per producer and writer for the TraceStats of
// ONE trace (the ringtrace_* fields, docs/service.md "Loss reports"). The
// service keeps one table per session (the default session of
// `ringtraced --out` among them) and routes each entry by its target buffer to
// the table of the session owning that buffer, if the producer serves it
// (SessionTable::RouteLossReport): a report never reaches the trace of a
// session its producer does not serve, nor of a session that started after the
// loss.
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
//   - bounded by what a writer could have lost: each counter of an entry is
//     clamped to Bound(now - start), start being the table's creation (the
//     session's start): one packet per nanosecond per writer and 64 bytes
//     per nanosecond, plus a slack (kBoundSlack*), far above any real
//     writer (a dropped packet costs a writer tens of ns, docs/
//     performance.md). A clamped entry is counted in claims_clamped;
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
  // The bound on one writer's counters (see above).
  static constexpr uint64_t kBoundSlackPackets = 1u << 20;
  static constexpr uint64_t kBoundSlackBytes = 64u << 20;
  static constexpr uint64_t kBoundBytesPerNs = 64;

  struct Record {
    trace_buffer::ProducerID producer_id = 0;
    std::string name;
    trace_buffer::ClientIdentity identity;
    bool connected = true;
    bool final_report = false;
    // When it was removed (CLOCK_BOOTTIME ns; 0 while connected): where a
    // producer without a final report is marked in the trace
    // (TraceExporter::WriteProducerEnd).
    uint64_t removed_boottime_ns = 0;
    std::map<uint32_t, ipc::WriterLossEntry> writers;  // by WriterID
    uint64_t entries_ignored = 0;                      // not monotonic
    uint64_t writers_over_limit = 0;  // entries beyond the writer limit
    uint64_t claims_clamped = 0;      // entries clamped to the bound
    // Writers whose counters the writer loss area raised at the producer's
    // removal: losses no socket report had carried.
    uint64_t writers_from_loss_area = 0;
  };

  struct Totals {
    uint64_t packets_dropped = 0;  // before + after end, every writer
    uint64_t bytes_dropped = 0;
    uint64_t stall_timeouts = 0;
    uint64_t entries_ignored = 0;
    uint64_t records_evicted = 0;
    uint64_t claims_clamped = 0;
  };

  // |start_ns|: the origin of the bound (CLOCK_MONOTONIC ns, as the |now_ns|
  // of the calls below): when the session the table belongs to started.
  explicit ProducerLossTable(uint64_t start_ns = 0);
  ~ProducerLossTable();
  ProducerLossTable(ProducerLossTable&&) = default;
  ProducerLossTable& operator=(ProducerLossTable&&) = default;

  // Every entry of a DrainRequest's loss report from the connected producer
  // |id| (tests, and a table that takes every entry).
  void OnReport(trace_buffer::ProducerID id,
                const std::string& name,
                const trace_buffer::ClientIdentity& identity,
                const ipc::DrainRequestMsg& report,
                uint64_t now_ns);
  // One entry routed to this table. |from_loss_area|: read from the ring's
  // writer loss area at the producer's removal, not sent.
  void OnEntry(trace_buffer::ProducerID id,
               const std::string& name,
               const trace_buffer::ClientIdentity& identity,
               const ipc::WriterLossEntry& entry,
               uint64_t now_ns,
               bool from_loss_area);
  // The producer |id| sent a report flagged kLossReportFinal.
  void OnFinalReport(trace_buffer::ProducerID id,
                     const std::string& name,
                     const trace_buffer::ClientIdentity& identity);
  // The producer |id| is gone (after its final drain). Keeps its record
  // (creating one if it never reported, so that a producer without a final
  // report shows up) among the departed ones.
  void OnProducerRemoved(trace_buffer::ProducerID id,
                         const std::string& name,
                         const trace_buffer::ClientIdentity& identity,
                         uint64_t boottime_ns = 0);

  // The records worth writing: every departed producer without a final
  // report, and every producer with a loss (or an ignored entry). Departed
  // first (oldest first), then the connected ones by ProducerID.
  void ForEachRecord(const std::function<void(const Record&)>& fn) const;
  Totals totals() const;
  // The packets (before + after end) the writers of every record dropped
  // writing into |target_buffer| (their entries' target_buffer): that
  // buffer's part of totals().packets_dropped. Saturates.
  uint64_t PacketsDroppedFor(uint32_t target_buffer) const;

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
  // |entry| clamped to the bound at |now_ns|; true if it changed.
  bool Clamp(uint64_t now_ns, ipc::WriterLossEntry* entry) const;
  Record& LiveRecord(trace_buffer::ProducerID id,
                     const std::string& name,
                     const trace_buffer::ClientIdentity& identity);

  uint64_t start_ns_ = 0;
  std::map<trace_buffer::ProducerID, Record> live_;
  std::deque<Record> departed_;
  uint64_t records_evicted_ = 0;
  size_t writers_ = 0;  // writer entries over every record
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_PRODUCER_LOSS_TABLE_H_
