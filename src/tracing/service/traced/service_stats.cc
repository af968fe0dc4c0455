/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/service_stats.h"

#include "protos/perfetto/trace/trace_packet.rtzero.h"

#include "src/tracing/core/encoding/proto_builder.h"

namespace ringtrace {
namespace traced {

void AddBufferStats(const trace_buffer::TraceBufferStats& s,
                    trace_buffer::TraceBufferStats* t) {
#define RT_ADD(f) t->f += s.f
  RT_ADD(bytes_written);
  RT_ADD(bytes_overwritten);
  RT_ADD(bytes_read);
  RT_ADD(padding_bytes_written);
  RT_ADD(padding_bytes_cleared);
  RT_ADD(chunks_written);
  RT_ADD(chunks_rewritten);
  RT_ADD(chunks_overwritten);
  RT_ADD(chunks_discarded);
  RT_ADD(chunks_read);
  RT_ADD(chunk_bytes_read);
  RT_ADD(chunks_committed_out_of_order);
  RT_ADD(write_wrap_count);
  RT_ADD(patches_succeeded);
  RT_ADD(patches_failed);
  RT_ADD(abi_violations);
  RT_ADD(trace_writer_packet_loss);
  RT_ADD(packets_overwritten);
  RT_ADD(packets_discarded);
  RT_ADD(sequence_losses_forgotten);
  RT_ADD(late_chunks_dropped);
  RT_ADD(readaheads_succeeded);
  RT_ADD(readaheads_failed);
#undef RT_ADD
}

std::string EncodeServiceCounters(const ServiceCounters& c,
                                  const ProducerStats& p) {
  std::string out;
  encoding::ProtoBuilder b(&out);
  using Fields = perfetto::protos::rtzero::TraceStats;
  b.AppendVarInt(Fields::kRingtraceConnectionsRefusedFieldNumber,
                 c.connections_refused);
  b.AppendVarInt(Fields::kRingtraceConnectionsRefusedPerUidFieldNumber,
                 c.connections_refused_per_uid);
  b.AppendVarInt(Fields::kRingtraceHelloTimeoutsFieldNumber, c.hello_timeouts);
  b.AppendVarInt(Fields::kRingtraceProtocolViolationsFieldNumber,
                 c.protocol_violations);
  b.AppendVarInt(Fields::kRingtraceProducersDisconnectedRingErrorFieldNumber,
                 c.producers_disconnected_ring_error);
  b.AppendVarInt(Fields::kRingtraceHellosRejectedFieldNumber,
                 p.hellos_rejected_version + p.hellos_rejected_too_many +
                     p.hellos_rejected_user_limit +
                     p.hellos_rejected_service_error);
  b.AppendVarInt(Fields::kRingtraceProducerIdsReusedFieldNumber,
                 p.producer_ids_reused);
  b.AppendVarInt(Fields::kRingtraceRingsStoppedProtocolErrorFieldNumber,
                 p.rings_stopped_protocol_error);
  b.AppendVarInt(Fields::kRingtraceLossEntriesUnattributedFieldNumber,
                 p.loss_entries_unattributed);
  return out;
}

std::string EncodeBufferLoss(
    const std::vector<const trace_buffer::TraceBufferV2*>& buffers,
    uint64_t packets_discarded) {
  uint64_t overwritten = 0;
  for (const trace_buffer::TraceBufferV2* buffer : buffers)
    overwritten += buffer->stats().packets_overwritten;
  std::string out;
  encoding::ProtoBuilder b(&out);
  using Fields = perfetto::protos::rtzero::TraceStats;
  b.AppendVarInt(Fields::kRingtracePacketsOverwrittenFieldNumber, overwritten);
  b.AppendVarInt(Fields::kRingtracePacketsDiscardedFieldNumber,
                 packets_discarded);
  return out;
}

std::string EncodeSessionCounters(const SessionCounters& s) {
  std::string out;
  encoding::ProtoBuilder b(&out);
  using Fields = perfetto::protos::rtzero::TraceStats;
  b.AppendVarInt(Fields::kRingtraceDataSourceStopTimeoutsFieldNumber,
                 s.data_source_stop_timeouts);
  b.AppendVarInt(Fields::kRingtraceFlushTimeoutsFieldNumber, s.flush_timeouts);
  b.AppendVarInt(Fields::kRingtraceLateAcksFieldNumber, s.late_acks);
  return out;
}

}  // namespace traced
}  // namespace ringtrace
