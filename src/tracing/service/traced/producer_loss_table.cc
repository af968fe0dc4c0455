/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/producer_loss_table.h"

#include "protos/perfetto/trace/trace_packet.rtzero.h"

#include <utility>

#include "src/tracing/core/encoding/proto_builder.h"

namespace ringtrace {
namespace traced {

namespace {

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

// True if every counter of |next| is >= the one in |prev|.
bool IsMonotonic(const ipc::WriterLossEntry& prev,
                 const ipc::WriterLossEntry& next) {
  return next.packets_dropped_before_end >= prev.packets_dropped_before_end &&
         next.packets_dropped_after_end >= prev.packets_dropped_after_end &&
         next.bytes_dropped >= prev.bytes_dropped &&
         next.stall_timeouts >= prev.stall_timeouts;
}

bool IsZero(const ipc::WriterLossEntry& e) {
  return !e.packets_dropped_before_end && !e.packets_dropped_after_end &&
         !e.bytes_dropped && !e.stall_timeouts;
}

bool IsEqual(const ipc::WriterLossEntry& a, const ipc::WriterLossEntry& b) {
  return a.packets_dropped_before_end == b.packets_dropped_before_end &&
         a.packets_dropped_after_end == b.packets_dropped_after_end &&
         a.bytes_dropped == b.bytes_dropped &&
         a.stall_timeouts == b.stall_timeouts;
}

// The TraceStats fields of the ringtrace extension (docs/service.md), by
// their numbers in protos/perfetto/trace/trace_packet.proto.
using TraceStatsFields = perfetto::protos::rtzero::TraceStats;
using ProducerFields =
    perfetto::protos::rtzero::TraceStats_RingtraceProducerLoss;
using WriterFields = perfetto::protos::rtzero::TraceStats_RingtraceWriterLoss;

}  // namespace

ProducerLossTable::ProducerLossTable(uint64_t start_ns) : start_ns_(start_ns) {}
ProducerLossTable::~ProducerLossTable() = default;

ProducerLossTable::Record& ProducerLossTable::LiveRecord(
    trace_buffer::ProducerID id,
    const std::string& name,
    const trace_buffer::ClientIdentity& identity) {
  auto it = live_.find(id);
  if (it == live_.end()) {
    Record r;
    r.producer_id = id;
    r.name = name;
    r.identity = identity;
    it = live_.emplace(id, std::move(r)).first;
  }
  return it->second;
}

bool ProducerLossTable::Clamp(uint64_t now_ns, ipc::WriterLossEntry* e) const {
  const uint64_t elapsed = now_ns > start_ns_ ? now_ns - start_ns_ : 0;
  const uint64_t packets = SaturatingAdd(elapsed, kBoundSlackPackets);
  const uint64_t bytes = SaturatingAdd(elapsed > UINT64_MAX / kBoundBytesPerNs
                                           ? UINT64_MAX
                                           : elapsed * kBoundBytesPerNs,
                                       kBoundSlackBytes);
  bool clamped = false;
  auto clamp = [&clamped](uint64_t* v, uint64_t bound) {
    if (*v > bound) {
      *v = bound;
      clamped = true;
    }
  };
  clamp(&e->packets_dropped_before_end, packets);
  clamp(&e->packets_dropped_after_end, packets);
  clamp(&e->bytes_dropped, bytes);
  clamp(&e->stall_timeouts, packets);
  return clamped;
}

void ProducerLossTable::OnReport(trace_buffer::ProducerID id,
                                 const std::string& name,
                                 const trace_buffer::ClientIdentity& identity,
                                 const ipc::DrainRequestMsg& report,
                                 uint64_t now_ns) {
  if (!report.has_loss_report)
    return;
  if (report.flags & ipc::kLossReportFinal)
    OnFinalReport(id, name, identity);
  // DecodeMessage bounded num_entries by the array's size.
  for (uint32_t i = 0; i < report.num_entries; i++) {
    OnEntry(id, name, identity, report.entries[i], now_ns,
            /*from_loss_area=*/false);
  }
}

void ProducerLossTable::OnFinalReport(
    trace_buffer::ProducerID id,
    const std::string& name,
    const trace_buffer::ClientIdentity& identity) {
  LiveRecord(id, name, identity).final_report = true;
}

void ProducerLossTable::OnEntry(trace_buffer::ProducerID id,
                                const std::string& name,
                                const trace_buffer::ClientIdentity& identity,
                                const ipc::WriterLossEntry& entry,
                                uint64_t now_ns,
                                bool from_loss_area) {
  Record& r = LiveRecord(id, name, identity);
  ipc::WriterLossEntry e = entry;
  if (Clamp(now_ns, &e))
    r.claims_clamped = SaturatingAdd(r.claims_clamped, 1);
  auto it = r.writers.find(e.writer_id);
  if (it == r.writers.end()) {
    if (r.writers.size() >= kMaxWritersPerProducer || writers_ >= kMaxWriters) {
      r.writers_over_limit = SaturatingAdd(r.writers_over_limit, 1);
      return;
    }
    r.writers.emplace(e.writer_id, e);
    writers_++;
    if (from_loss_area && !IsZero(e))
      r.writers_from_loss_area = SaturatingAdd(r.writers_from_loss_area, 1);
    return;
  }
  if (!IsMonotonic(it->second, e)) {
    r.entries_ignored = SaturatingAdd(r.entries_ignored, 1);
    return;
  }
  if (from_loss_area && !IsEqual(it->second, e))
    r.writers_from_loss_area = SaturatingAdd(r.writers_from_loss_area, 1);
  it->second = e;
}

void ProducerLossTable::OnProducerRemoved(
    trace_buffer::ProducerID id,
    const std::string& name,
    const trace_buffer::ClientIdentity& identity,
    uint64_t boottime_ns) {
  Record& live = LiveRecord(id, name, identity);
  Record r = std::move(live);
  live_.erase(id);
  r.connected = false;
  r.removed_boottime_ns = boottime_ns;
  if (!Worth(r)) {
    writers_ -= r.writers.size();
    return;  // an orderly producer that lost nothing: nothing to say
  }
  if (departed_.size() >= kMaxDepartedProducers) {
    writers_ -= departed_.front().writers.size();
    departed_.pop_front();
    records_evicted_ = SaturatingAdd(records_evicted_, 1);
  }
  departed_.push_back(std::move(r));
}

bool ProducerLossTable::Worth(const Record& r) {
  if (!r.connected && !r.final_report)
    return true;
  if (r.entries_ignored != 0 || r.writers_over_limit != 0 ||
      r.claims_clamped != 0) {
    return true;
  }
  for (const auto& kv : r.writers) {
    const ipc::WriterLossEntry& e = kv.second;
    if (e.packets_dropped_before_end || e.packets_dropped_after_end ||
        e.bytes_dropped || e.stall_timeouts) {
      return true;
    }
  }
  return false;
}

void ProducerLossTable::ForEachRecord(
    const std::function<void(const Record&)>& fn) const {
  for (const Record& r : departed_)
    fn(r);
  for (const auto& kv : live_) {
    if (Worth(kv.second))
      fn(kv.second);
  }
}

ProducerLossTable::Totals ProducerLossTable::totals() const {
  Totals t;
  t.records_evicted = records_evicted_;
  ForEachRecord([&t](const Record& r) {
    t.entries_ignored = SaturatingAdd(t.entries_ignored, r.entries_ignored);
    t.claims_clamped = SaturatingAdd(t.claims_clamped, r.claims_clamped);
    for (const auto& kv : r.writers) {
      const ipc::WriterLossEntry& e = kv.second;
      t.packets_dropped = SaturatingAdd(
          t.packets_dropped, SaturatingAdd(e.packets_dropped_before_end,
                                           e.packets_dropped_after_end));
      t.bytes_dropped = SaturatingAdd(t.bytes_dropped, e.bytes_dropped);
      t.stall_timeouts = SaturatingAdd(t.stall_timeouts, e.stall_timeouts);
    }
  });
  return t;
}

uint64_t ProducerLossTable::PacketsDroppedFor(uint32_t target_buffer) const {
  uint64_t packets = 0;
  ForEachRecord([&packets, target_buffer](const Record& r) {
    for (const auto& kv : r.writers) {
      const ipc::WriterLossEntry& e = kv.second;
      if (e.target_buffer != target_buffer)
        continue;
      packets =
          SaturatingAdd(packets, SaturatingAdd(e.packets_dropped_before_end,
                                               e.packets_dropped_after_end));
    }
  });
  return packets;
}

std::string ProducerLossTable::EncodeTraceStatsFields(
    const std::function<uint32_t(trace_buffer::ProducerID, uint32_t, bool)>&
        sequence_id_for) const {
  using encoding::ProtoBuilder;
  // ProducerIDs are reused once the buffer holds nothing of their previous
  // owner: only the latest record of an id may name that id's sequences.
  std::map<trace_buffer::ProducerID, const Record*> latest;
  ForEachRecord([&latest](const Record& r) { latest[r.producer_id] = &r; });
  std::string out;
  ProtoBuilder b(&out);
  ForEachRecord([&](const Record& r) {
    const bool owns_sequences = latest[r.producer_id] == &r;
    std::string producer;
    ProtoBuilder p(&producer);
    p.AppendVarInt(ProducerFields::kProducerIdFieldNumber, r.producer_id);
    p.AppendString(ProducerFields::kProducerNameFieldNumber, r.name);
    p.AppendInt32(ProducerFields::kPidFieldNumber, r.identity.pid);
    p.AppendInt32(ProducerFields::kUidFieldNumber, r.identity.uid);
    p.AppendVarInt(ProducerFields::kFinalReportFieldNumber,
                   r.final_report ? 1 : 0);
    p.AppendVarInt(ProducerFields::kConnectedFieldNumber, r.connected ? 1 : 0);
    for (const auto& kv : r.writers) {
      const ipc::WriterLossEntry& e = kv.second;
      std::string writer;
      ProtoBuilder w(&writer);
      w.AppendVarInt(WriterFields::kWriterIdFieldNumber, e.writer_id);
      w.AppendVarInt(WriterFields::kTrustedPacketSequenceIdFieldNumber,
                     owns_sequences ? sequence_id_for(r.producer_id,
                                                      e.writer_id, r.connected)
                                    : 0);
      w.AppendVarInt(WriterFields::kPacketsDroppedBeforeEndFieldNumber,
                     e.packets_dropped_before_end);
      w.AppendVarInt(WriterFields::kPacketsDroppedAfterEndFieldNumber,
                     e.packets_dropped_after_end);
      w.AppendVarInt(WriterFields::kBytesDroppedFieldNumber, e.bytes_dropped);
      w.AppendVarInt(WriterFields::kStallTimeoutsFieldNumber, e.stall_timeouts);
      w.AppendVarInt(WriterFields::kTargetBufferFieldNumber, e.target_buffer);
      p.AppendMessage(ProducerFields::kWritersFieldNumber, writer);
    }
    p.AppendVarInt(ProducerFields::kEntriesIgnoredFieldNumber,
                   r.entries_ignored);
    p.AppendVarInt(ProducerFields::kWritersOverLimitFieldNumber,
                   r.writers_over_limit);
    p.AppendVarInt(ProducerFields::kClaimsClampedFieldNumber, r.claims_clamped);
    p.AppendVarInt(ProducerFields::kWritersFromLossAreaFieldNumber,
                   r.writers_from_loss_area);
    b.AppendMessage(TraceStatsFields::kRingtraceProducerLossFieldNumber,
                    producer);
  });
  const Totals t = totals();
  b.AppendVarInt(
      TraceStatsFields::kRingtracePacketsDroppedByProducersFieldNumber,
      t.packets_dropped);
  b.AppendVarInt(TraceStatsFields::kRingtraceBytesDroppedByProducersFieldNumber,
                 t.bytes_dropped);
  b.AppendVarInt(TraceStatsFields::kRingtraceStallTimeoutsFieldNumber,
                 t.stall_timeouts);
  b.AppendVarInt(TraceStatsFields::kRingtraceLossEntriesIgnoredFieldNumber,
                 t.entries_ignored);
  b.AppendVarInt(TraceStatsFields::kRingtraceLossRecordsEvictedFieldNumber,
                 t.records_evicted);
  b.AppendVarInt(TraceStatsFields::kRingtraceLossClaimsClampedFieldNumber,
                 t.claims_clamped);
  return out;
}

}  // namespace traced
}  // namespace ringtrace
