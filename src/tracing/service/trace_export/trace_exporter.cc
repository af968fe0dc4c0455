/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/trace_export/trace_exporter.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

#include "protos/perfetto/trace/trace.rtzero.h"
#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/logging.h"
#include "src/base/hash.h"
#include "src/base/scoped_fd.h"
#include "src/base/time.h"
#include "src/tracing/core/encoding/proto_builder.h"

namespace ringtrace {
namespace trace_export {

namespace {

using encoding::ConstBytes;
using encoding::EncodeVarInt;
using encoding::kMaxVarIntSize;
using encoding::kWireLengthDelimited;
using encoding::kWireVarInt;
using encoding::MakeTag;
using encoding::ProtoBuilder;
using trace_buffer::PacketSequenceProperties;
using trace_buffer::TraceBufferStats;
using trace_buffer::TraceBufferV2;

namespace rt = perfetto::protos::rtzero;

// The exporter writes standard (length-delimited) protobuf, not the ring's
// group encoding, so it uses the generated field numbers with its own
// builders rather than the typed writers.
using Packet = rt::TracePacket;

// Loss reported on the sequence of a dropped invalid packet.
constexpr uint32_t kInvalidPacketLoss =
    trace_buffer::kDataLossPresent | trace_buffer::kDataLossChunkCorrupted;

}  // namespace

// static
TraceExporter::TopLevelScan TraceExporter::ScanTopLevel(
    const ungrouper::TopLevelFields& fields) {
  using ungrouper::TopLevelFields;
  // Each a mask test, a handful of instructions for the usual packet that
  // has none of them.
  static constexpr TopLevelFields kTrusted =
      TopLevelFields::Of({Packet::kTrustedUidFieldNumber,
                          Packet::kTrustedPacketSequenceIdFieldNumber,
                          Packet::kTrustedPidFieldNumber});
  // Only the service compresses: a producer's compressed_packets would
  // smuggle packets past the trusted-field stamping.
  static constexpr TopLevelFields kServicePayload = TopLevelFields::Of(
      {Packet::kTraceConfigFieldNumber, Packet::kTraceStatsFieldNumber,
       rt::TracePacket::kCompressedPacketsFieldNumber});
  TopLevelScan scan;
  scan.trusted_fields = fields.HasAny(kTrusted);
  scan.previous_packet_dropped =
      fields.Has(Packet::kPreviousPacketDroppedFieldNumber);
  scan.first_packet_on_sequence =
      fields.Has(Packet::kFirstPacketOnSequenceFieldNumber);
  scan.service_payload = fields.HasAny(kServicePayload);
  return scan;
}
namespace {

static_assert(Packet::kTrustedPidFieldNumber < 128 &&
                  Packet::kFirstPacketOnSequenceFieldNumber < 128 &&
                  rt::TracePacket::kCompressedPacketsFieldNumber < 128,
              "TopLevelFields records field numbers below 128 only");

// Appends a varint field to |p|; returns the end.
inline uint8_t* PutVarIntField(uint8_t* p, uint32_t field, uint64_t value) {
  return EncodeVarInt(value, EncodeVarInt(MakeTag(field, kWireVarInt), p));
}

// int32 fields are sign-extended (protobuf's encoding of negative int32).
inline uint64_t Int32ToVarInt(int32_t v) {
  return static_cast<uint64_t>(static_cast<int64_t>(v));
}

// Upper bound of the trusted suffix: 3 (1+10), 79 (2+10), 10 (1+5),
// 42 (2+5), 87 (2+1).
constexpr size_t kMaxSuffixSize = 48;

// Trace.packet's tag: one byte.
constexpr uint64_t kTracePacketTag =
    MakeTag(rt::Trace::kPacketFieldNumber, kWireLengthDelimited);
static_assert(kTracePacketTag < 128, "Trace.packet's tag takes one byte");

// The direct path (TraceExporter::ExportDirect): packets of at most this
// many bytes, framed in the file batch. Its converted body (at most the
// packet's size: a group of such a packet holds under 128 bytes, so its
// one-byte length replaces the end tag) and the suffix take under 128
// bytes: a one-byte length.
constexpr size_t kDirectMaxPacket = 64;
static_assert(kDirectMaxPacket + kMaxSuffixSize < 128,
              "the direct path's packets take a one-byte length");
constexpr size_t kDirectRoom = 2 + kDirectMaxPacket +
                               ungrouper::Ungrouper::kIntoExtraRoom +
                               kMaxSuffixSize;

std::string EncodeBufferStats(const TraceBufferV2& buffer,
                              uint64_t producer_packets_dropped) {
  using F = rt::TraceStats_BufferStats;
  const TraceBufferStats& s = buffer.stats();
  std::string out;
  ProtoBuilder b(&out);
  b.AppendVarInt(F::kBufferSizeFieldNumber, buffer.size());
  b.AppendVarInt(F::kBytesWrittenFieldNumber, s.bytes_written);
  b.AppendVarInt(F::kBytesOverwrittenFieldNumber, s.bytes_overwritten);
  // Perfetto's bytes_read: the chunks fully read, headers included.
  b.AppendVarInt(F::kBytesReadFieldNumber, s.chunk_bytes_read);
  b.AppendVarInt(F::kPaddingBytesWrittenFieldNumber, s.padding_bytes_written);
  b.AppendVarInt(F::kPaddingBytesClearedFieldNumber, s.padding_bytes_cleared);
  b.AppendVarInt(F::kChunksWrittenFieldNumber, s.chunks_written);
  b.AppendVarInt(F::kChunksRewrittenFieldNumber, s.chunks_rewritten);
  b.AppendVarInt(F::kChunksOverwrittenFieldNumber, s.chunks_overwritten);
  b.AppendVarInt(F::kChunksDiscardedFieldNumber, s.chunks_discarded);
  b.AppendVarInt(F::kChunksReadFieldNumber, s.chunks_read);
  b.AppendVarInt(F::kChunksCommittedOutOfOrderFieldNumber,
                 s.chunks_committed_out_of_order);
  b.AppendVarInt(F::kWriteWrapCountFieldNumber, s.write_wrap_count);
  b.AppendVarInt(F::kPatchesSucceededFieldNumber, s.patches_succeeded);
  b.AppendVarInt(F::kPatchesFailedFieldNumber, s.patches_failed);
  b.AppendVarInt(F::kReadaheadsSucceededFieldNumber, s.readaheads_succeeded);
  b.AppendVarInt(F::kReadaheadsFailedFieldNumber, s.readaheads_failed);
  b.AppendVarInt(F::kAbiViolationsFieldNumber, s.abi_violations);
  b.AppendVarInt(
      F::kTraceWriterPacketLossFieldNumber,
      TraceExporter::TraceWriterPacketLoss(s, producer_packets_dropped));
  return out;
}

}  // namespace

const char* DataLossReasonName(size_t bit) {
  static const char* const kNames[kNumDataLossReasons] = {
      "PRESENT",         "READ_GAP",
      "CHUNK_CORRUPTED", "ORPHAN_CONTINUATION",
      "REASSEMBLY_GAP",  "REASSEMBLY_BROKEN_CHAIN",
      "OVERWRITE",       "WRITER_ABORT",
      "SMB_FULL",
  };
  return bit < kNumDataLossReasons ? kNames[bit] : "UNKNOWN";
}

TraceExporter::TraceExporter(TraceFileWriter* writer, const Options& options)
    : writer_(writer),
      direct_path_(options.direct_path),
      batched_runs_(options.batched_runs),
      service_uid_(options.service_uid >= 0 ? options.service_uid
                                            : static_cast<int32_t>(getuid())),
      service_pid_(options.service_pid >= 0 ? options.service_pid
                                            : static_cast<int32_t>(getpid())) {
  RT_CHECK(writer_);
  if (options.compression == Compression::kDeflate)
    compressor_.reset(new PacketCompressor(writer_, options.compressor));
}

const ExportStats& TraceExporter::stats() const {
  if (compressor_) {
    const PacketCompressorStats& c = compressor_->stats();
    stats_.uncompressed_bytes = c.input_bytes;
    stats_.compressed_bytes = c.output_bytes;
    stats_.compressed_batches = c.batches;
    stats_.compression_cpu_ns = c.cpu_ns;
    stats_.compression_dropped_packets = c.packets_dropped;
  }
  return stats_;
}

TraceExporter::~TraceExporter() = default;

uint32_t TraceExporter::SequenceIdFor(trace_buffer::ProducerID producer_id,
                                      trace_buffer::WriterID writer_id) const {
  const uint32_t key =
      trace_buffer::SequenceKey(producer_id, writer_id).value();
  auto it = sequences_.find(key);
  return it == sequences_.end() ? 0 : it->second.id;
}

namespace {

// trusted_uid, trusted_pid and trusted_packet_sequence_id, as every exported
// packet ends.
uint8_t* PutTrustedIdentity(uint8_t* p,
                            int32_t uid,
                            int32_t pid,
                            uint32_t sequence_id) {
  p = PutVarIntField(p, Packet::kTrustedUidFieldNumber, Int32ToVarInt(uid));
  p = PutVarIntField(p, Packet::kTrustedPidFieldNumber, Int32ToVarInt(pid));
  return PutVarIntField(p, Packet::kTrustedPacketSequenceIdFieldNumber,
                        sequence_id);
}
}  // namespace

TraceExporter::Sequence* TraceExporter::GetSequence(
    const PacketSequenceProperties& props) {
  const uint32_t key =
      trace_buffer::SequenceKey(props.producer_id_trusted, props.writer_id)
          .value();
  if (last_sequence_ && key == last_sequence_key_)
    return last_sequence_;
  Sequence& seq = sequences_[key];
  if (seq.id == 0) {
    // 2^16 * 2^16 keys fit in the 32-bit id space; 0 is never handed out.
    seq.id = next_sequence_id_++;
    stats_.sequences++;
  }
  last_sequence_key_ = key;
  last_sequence_ = &seq;
  return &seq;
}

void TraceExporter::ExportBuffer(TraceBufferV2* buffer) {
  const bool done = ExportBufferSlice(buffer, UINT64_MAX);
  RT_DCHECK(done);
  (void)done;
}

bool TraceExporter::ExportBufferSlice(TraceBufferV2* buffer,
                                      uint64_t max_packet_bytes) {
  trace_buffer::TracePacket packet;
  PacketSequenceProperties props;
  uint32_t loss = 0;
  bool first = false;
  const uint64_t start = stats_.packet_bytes_exported;
  buffer->BeginRead();
  while (stats_.packet_bytes_exported - start < max_packet_bytes) {
    if (!buffer->ReadNextTracePacket(&packet, &props, &loss, &first))
      return true;
    stats_.packets_read++;
    ExportPacket(packet, props, loss, first);
    if (batched_runs_)
      ExportRestOfRun(buffer, props, start, max_packet_bytes);
  }
  return false;
}

void TraceExporter::ExportRestOfRun(TraceBufferV2* buffer,
                                    const PacketSequenceProperties& props,
                                    uint64_t start,
                                    uint64_t max_packet_bytes) {
  // Small enough that a slice's budget is not passed by much (a batch of
  // small packets is a few hundred bytes), large enough that the call per
  // batch costs little per packet.
  constexpr size_t kBatch = 16;
  trace_buffer::TracePacket::Slice run[kBatch];
  Sequence* const seq = GetSequence(props);
  // Bounded: every batch consumes packets of the buffer.
  while (stats_.packet_bytes_exported - start < max_packet_bytes) {
    const size_t n = buffer->ReadMorePacketsOfRun(run, kBatch);
    if (n == 0)
      return;
    stats_.packets_read += n;
    stats_.packets_read_in_runs += n;
    for (size_t i = 0; i < n; ++i) {
      // The buffer reports no loss on these; an invalid packet before one
      // leaves its loss pending on the sequence.
      ExportOneSlice(run[i].data, run[i].size, seq, props, seq->pending_loss,
                     /*first_in_buffer=*/false);
    }
  }
}

void TraceExporter::ExportPacket(const trace_buffer::TracePacket& packet,
                                 const PacketSequenceProperties& props,
                                 uint32_t previous_packet_dropped,
                                 bool first_in_buffer) {
  Sequence* seq = GetSequence(props);
  const uint32_t loss = previous_packet_dropped | seq->pending_loss;
  const std::vector<trace_buffer::TracePacket::Slice>& in = packet.slices();
  if (RT_LIKELY(in.size() == 1)) {
    ExportOneSlice(in[0].data, in[0].size, seq, props, loss, first_in_buffer);
    return;
  }
  slices_.clear();
  for (const trace_buffer::TracePacket::Slice& s : in)
    slices_.push_back(ConstBytes{s.data, s.size});
  ExportSlices(slices_.data(), slices_.size(), seq, props, loss,
               first_in_buffer);
}

void TraceExporter::ExportOneSlice(const uint8_t* data,
                                   size_t size,
                                   Sequence* seq,
                                   const PacketSequenceProperties& props,
                                   uint32_t loss,
                                   bool first_in_buffer) {
  if (RT_LIKELY(!compressor_ && direct_path_ && size <= kDirectMaxPacket) &&
      ExportDirect(data, size, seq, props, loss, first_in_buffer)) {
    return;
  }
  const ConstBytes single{data, size};
  ExportSlices(&single, 1, seq, props, loss, first_in_buffer);
}

void TraceExporter::ExportSlices(const ConstBytes* slices,
                                 size_t num_slices,
                                 Sequence* seq,
                                 const PacketSequenceProperties& props,
                                 uint32_t loss,
                                 bool first_in_buffer) {
  ungrouper::Ungrouper::SlicesResult converted;
  // The Ungrouper validates the whole packet at the wire level.
  if (!ungrouper_.UngroupSlices(slices, num_slices, &converted).ok()) {
    DropInvalid(seq, loss);
    return;
  }
  const TopLevelScan scan = ScanTopLevel(ungrouper_.top_level_fields());
  if (scan.service_payload) {
    DropInvalid(seq, loss);
    return;
  }
  const ConstBytes* body = slices;
  size_t num_body = num_slices;
  if (!converted.pass_through) {
    body = &converted.converted;
    num_body = 1;
  }
  uint64_t body_size = 0;
  for (size_t i = 0; i < num_body; ++i)
    body_size += body[i].size;

  uint8_t suffix[kMaxSuffixSize];
  const size_t suffix_size = static_cast<size_t>(
      PutSuffix(suffix, seq, props, loss, scan, first_in_buffer) - suffix);
  // Trace.packet framing: tag, length, producer bytes, suffix.
  uint8_t header[1 + kMaxVarIntSize];
  uint8_t* h = EncodeVarInt(kTracePacketTag, header);
  h = EncodeVarInt(body_size + suffix_size, h);
  Emit(header, static_cast<size_t>(h - header));
  for (size_t i = 0; i < num_body; ++i)
    Emit(body[i].data, body[i].size);
  Emit(suffix, suffix_size);
  EndPacket();
  CountExported(seq, body_size, loss, scan);
}

bool TraceExporter::ExportDirect(const uint8_t* data,
                                 size_t size,
                                 Sequence* seq,
                                 const PacketSequenceProperties& props,
                                 uint32_t loss,
                                 bool first_in_buffer) {
  // [tag][length][body: at most size + kIntoExtraRoom][suffix]: the length
  // takes one byte (static_assert at kDirectMaxPacket).
  uint8_t* const frame = writer_->Reserve(kDirectRoom);
  size_t body_size = 0;
  if (!frame || !ungrouper_.UngroupInto(data, size, frame + 2, &body_size))
    return false;  // The general path takes it (and reports what is wrong).
  const TopLevelScan scan = ScanTopLevel(ungrouper_.top_level_fields());
  if (scan.service_payload) {
    DropInvalid(seq, loss);  // Nothing was committed.
    return true;
  }
  const uint8_t* const end =
      PutSuffix(frame + 2 + body_size, seq, props, loss, scan, first_in_buffer);
  const size_t payload = static_cast<size_t>(end - (frame + 2));
  RT_CHECK(payload < 128 && 2 + payload <= kDirectRoom);
  frame[0] = static_cast<uint8_t>(kTracePacketTag);
  frame[1] = static_cast<uint8_t>(payload);
  writer_->Commit(2 + payload);
  CountExported(seq, body_size, loss, scan);
  stats_.packets_exported_direct++;
  return true;
}

uint8_t* TraceExporter::PutSuffix(uint8_t* p,
                                  Sequence* seq,
                                  const PacketSequenceProperties& props,
                                  uint32_t loss,
                                  const TopLevelScan& scan,
                                  bool first_in_buffer) {
  // The trusted suffix, from the service's records only.
  // first_packet_on_sequence means "nothing was lost before this packet":
  // only on the writer's first packet as the buffer knows it, when this
  // file has nothing of the sequence yet and no loss is reported on it.
  const bool first = first_in_buffer && !seq->exported_any && loss == 0;
  uint8_t* const start = p;
  const int32_t uid = props.client_identity_trusted.uid;
  const int32_t pid = props.client_identity_trusted.pid;
  if (RT_UNLIKELY(seq->identity_size == 0 || seq->identity_uid != uid ||
                  seq->identity_pid != pid)) {
    seq->identity_uid = uid;
    seq->identity_pid = pid;
    seq->identity_size = static_cast<uint8_t>(
        PutTrustedIdentity(seq->identity, uid, pid, seq->id) - seq->identity);
  }
  // A fixed-size copy (two vector moves; the suffix has room for it).
  static_assert(sizeof(seq->identity) <= kMaxSuffixSize, "suffix too small");
  memcpy(p, seq->identity, sizeof(seq->identity));
  p += seq->identity_size;
  if (loss != 0 || scan.previous_packet_dropped)
    p = PutVarIntField(p, Packet::kPreviousPacketDroppedFieldNumber, loss);
  if (first || scan.first_packet_on_sequence)
    p = PutVarIntField(p, Packet::kFirstPacketOnSequenceFieldNumber,
                       first ? 1 : 0);
  RT_DCHECK(static_cast<size_t>(p - start) <= kMaxSuffixSize);
  return p;
}

void TraceExporter::DropInvalid(Sequence* seq, uint32_t loss) {
  // Dropped, never written; the gap is reported on the sequence's next
  // exported packet (see "Malformed packets" in the header).
  stats_.invalid_packets++;
  seq->pending_loss = loss | kInvalidPacketLoss;
}

void TraceExporter::CountExported(Sequence* seq,
                                  uint64_t body_size,
                                  uint32_t loss,
                                  const TopLevelScan& scan) {
  seq->exported_any = true;
  seq->pending_loss = 0;
  stats_.packets_exported++;
  stats_.packet_bytes_exported += body_size;
  if (scan.trusted_fields || scan.previous_packet_dropped ||
      scan.first_packet_on_sequence) {
    stats_.forged_trusted_fields++;
  }
  if (loss != 0) {
    stats_.packets_with_loss++;
    for (size_t b = 0; b < kNumDataLossReasons; ++b) {
      if (loss & (1u << b))
        stats_.loss_reason_packets[b]++;
    }
  }
}

void TraceExporter::WriteServicePacket(const std::string& body) {
  std::string packet = body;
  uint8_t suffix[kMaxTrustedIdentitySize];
  const uint8_t* end = PutTrustedIdentity(suffix, service_uid_, service_pid_,
                                          kServiceSequenceId);
  packet.append(reinterpret_cast<const char*>(suffix),
                static_cast<size_t>(end - suffix));
  std::string framed;
  ProtoBuilder(&framed).AppendMessage(rt::Trace::kPacketFieldNumber, packet);
  Emit(framed.data(), framed.size());
  EndPacket();
  stats_.service_packets++;
}

void TraceExporter::WriteTraceConfig(const void* data, size_t size) {
  std::string body;
  ProtoBuilder(&body).AppendBytes(Packet::kTraceConfigFieldNumber, data, size);
  WriteServicePacket(body);
}

// static
uint64_t TraceExporter::TraceWriterPacketLoss(
    const TraceBufferStats& stats,
    uint64_t producer_packets_dropped) {
  return std::max(stats.trace_writer_packet_loss, producer_packets_dropped);
}

// static
std::string TraceExporter::EncodeTraceStats(
    const std::vector<const TraceBufferV2*>& buffers,
    const ServiceStats& service_stats,
    uint64_t invalid_packets) {
  using F = rt::TraceStats;
  std::string stats;
  ProtoBuilder b(&stats);
  for (size_t i = 0; i < buffers.size(); ++i) {
    const uint64_t dropped = i < service_stats.producer_packets_dropped.size()
                                 ? service_stats.producer_packets_dropped[i]
                                 : 0;
    b.AppendMessage(F::kBufferStatsFieldNumber,
                    EncodeBufferStats(*buffers[i], dropped));
  }
  b.AppendVarInt(F::kProducersConnectedFieldNumber,
                 service_stats.producers_connected);
  b.AppendVarInt(F::kProducersSeenFieldNumber, service_stats.producers_seen);
  b.AppendVarInt(F::kDataSourcesRegisteredFieldNumber,
                 service_stats.data_sources_registered);
  b.AppendVarInt(F::kDataSourcesSeenFieldNumber,
                 service_stats.data_sources_seen);
  b.AppendVarInt(F::kTracingSessionsFieldNumber,
                 service_stats.tracing_sessions);
  b.AppendVarInt(F::kTotalBuffersFieldNumber, service_stats.total_buffers);
  // Only the chunks no buffer saw: a buffer's own are in its BufferStats.
  b.AppendVarInt(F::kChunksDiscardedFieldNumber,
                 service_stats.chunks_discarded);
  // The ring protocol has no out-of-band patches: none can be discarded
  // before a buffer.
  b.AppendVarInt(F::kPatchesDiscardedFieldNumber, 0);
  b.AppendVarInt(F::kInvalidPacketsFieldNumber, invalid_packets);
  b.AppendVarInt(F::kFlushesRequestedFieldNumber,
                 service_stats.flushes_requested);
  b.AppendVarInt(F::kFlushesSucceededFieldNumber,
                 service_stats.flushes_succeeded);
  b.AppendVarInt(F::kFlushesFailedFieldNumber, service_stats.flushes_failed);
  switch (service_stats.final_flush) {
    case FinalFlush::kUnspecified:
      break;
    case FinalFlush::kSucceeded:
      b.AppendVarInt(
          F::kFinalFlushOutcomeFieldNumber,
          static_cast<uint64_t>(
              rt::TraceStats_FinalFlushOutcome::FINAL_FLUSH_SUCCEEDED));
      break;
    case FinalFlush::kFailed:
      b.AppendVarInt(F::kFinalFlushOutcomeFieldNumber,
                     static_cast<uint64_t>(
                         rt::TraceStats_FinalFlushOutcome::FINAL_FLUSH_FAILED));
      break;
  }
  stats += service_stats.extra_fields;
  return stats;
}

void TraceExporter::WriteTraceStats(
    const std::vector<const TraceBufferV2*>& buffers,
    const ServiceStats& service_stats) {
  const std::string stats =
      EncodeTraceStats(buffers, service_stats, stats_.invalid_packets);
  std::string body;
  ProtoBuilder(&body).AppendMessage(Packet::kTraceStatsFieldNumber, stats);
  WriteServicePacket(body);
}

TraceExporter::ClockReadings TraceExporter::ReadClocks() {
  ClockReadings clocks;
  clocks.boottime = base::ClockNs(CLOCK_BOOTTIME);
  clocks.monotonic = base::ClockNs(CLOCK_MONOTONIC);
  clocks.realtime = base::ClockNs(CLOCK_REALTIME);
  return clocks;
}

void TraceExporter::WriteClockSnapshot(const ClockReadings& clocks) {
  using rt::BuiltinClock;
  using rt::ClockSnapshot;
  struct {
    BuiltinClock id;
    uint64_t ts;
  } const kClocks[] = {
      {BuiltinClock::BUILTIN_CLOCK_BOOTTIME, clocks.boottime},
      {BuiltinClock::BUILTIN_CLOCK_MONOTONIC, clocks.monotonic},
      {BuiltinClock::BUILTIN_CLOCK_REALTIME, clocks.realtime}};
  std::string snapshot;
  ProtoBuilder b(&snapshot);
  for (const auto& c : kClocks) {
    std::string clock;
    ProtoBuilder cb(&clock);
    cb.AppendVarInt(ClockSnapshot::Clock::kClockIdFieldNumber,
                    static_cast<uint64_t>(c.id));
    cb.AppendVarInt(ClockSnapshot::Clock::kTimestampFieldNumber, c.ts);
    b.AppendMessage(ClockSnapshot::kClocksFieldNumber, clock);
  }
  b.AppendVarInt(ClockSnapshot::kPrimaryTraceClockFieldNumber,
                 static_cast<uint64_t>(BuiltinClock::BUILTIN_CLOCK_BOOTTIME));
  std::string body;
  ProtoBuilder pb(&body);
  pb.AppendVarInt(Packet::kTimestampFieldNumber, clocks.boottime);
  pb.AppendMessage(Packet::kClockSnapshotFieldNumber, snapshot);
  WriteServicePacket(body);
}

// static
TraceExporter::SystemInfo TraceExporter::ReadSystemInfo() {
  SystemInfo info;
  struct utsname uts = {};
  if (uname(&uts) == 0) {
    info.sysname = uts.sysname;
    info.version = uts.version;
    info.release = uts.release;
    info.machine = uts.machine;
  }
  const long page_size = sysconf(_SC_PAGESIZE);
  if (page_size > 0)
    info.page_size = static_cast<uint32_t>(page_size);
  const long num_cpus = sysconf(_SC_NPROCESSORS_CONF);
  if (num_cpus > 0)
    info.num_cpus = static_cast<uint32_t>(num_cpus);
  const time_t now = time(nullptr);
  struct tm local = {};
  if (localtime_r(&now, &local)) {
    info.timezone_off_mins = static_cast<int32_t>(local.tm_gmtoff / 60);
    info.has_timezone = true;
  }
  return info;
}

void TraceExporter::WriteSystemInfo(const SystemInfo& info) {
  using rt::SystemInfo;
  using rt::Utsname;
  std::string uts;
  ProtoBuilder ub(&uts);
  if (!info.sysname.empty())
    ub.AppendString(Utsname::kSysnameFieldNumber, info.sysname);
  if (!info.version.empty())
    ub.AppendString(Utsname::kVersionFieldNumber, info.version);
  if (!info.release.empty())
    ub.AppendString(Utsname::kReleaseFieldNumber, info.release);
  if (!info.machine.empty())
    ub.AppendString(Utsname::kMachineFieldNumber, info.machine);
  std::string system_info;
  ProtoBuilder sb(&system_info);
  sb.AppendMessage(SystemInfo::kUtsnameFieldNumber, uts);
  if (info.page_size != 0)
    sb.AppendVarInt(SystemInfo::kPageSizeFieldNumber, info.page_size);
  if (info.has_timezone) {
    sb.AppendInt32(SystemInfo::kTimezoneOffMinsFieldNumber,
                   info.timezone_off_mins);
  }
  if (info.num_cpus != 0)
    sb.AppendVarInt(SystemInfo::kNumCpusFieldNumber, info.num_cpus);
  std::string body;
  ProtoBuilder(&body).AppendMessage(rt::TracePacket::kSystemInfoFieldNumber,
                                    system_info);
  WriteServicePacket(body);
}

namespace {
// Fills |size| bytes at |out| with random bytes; false if no source works.
bool ReadRandom(uint8_t* out, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t r = getrandom(out + done, size - done, 0);
    if (r > 0) {
      done += static_cast<size_t>(r);
      continue;
    }
    if (r < 0 && errno == EINTR)
      continue;
    break;
  }
  if (done == size)
    return true;
  const base::ScopedFd fd(open("/dev/urandom", O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return false;
  done = 0;
  while (done < size) {
    const ssize_t r = read(fd.get(), out + done, size - done);
    if (r > 0) {
      done += static_cast<size_t>(r);
      continue;
    }
    if (r < 0 && errno == EINTR)
      continue;
    break;
  }
  return done == size;
}

}  // namespace

// static
TraceExporter::TraceUuid TraceExporter::NewTraceUuid() {
  uint64_t halves[2] = {};
  if (!ReadRandom(reinterpret_cast<uint8_t*>(halves), sizeof(halves))) {
    RT_LOG("no random source for the trace uuid; deriving it from the clocks");
    const ClockReadings c = ReadClocks();
    halves[0] =
        base::Mix64(c.realtime ^ (static_cast<uint64_t>(getpid()) << 32));
    halves[1] = base::Mix64(c.boottime ^ base::Mix64(c.monotonic));
  }
  // RFC 4122: version 4 in the high nibble of the 7th byte, variant 10 in
  // the two high bits of the 9th: the uuid is never all zeros.
  halves[0] = (halves[0] & ~0xf000ull) | 0x4000ull;
  halves[1] = (halves[1] & ~(0xc0ull << 56)) | (0x80ull << 56);
  TraceUuid uuid;
  uuid.msb = static_cast<int64_t>(halves[0]);
  uuid.lsb = static_cast<int64_t>(halves[1]);
  return uuid;
}

void TraceExporter::WriteTraceUuid(const TraceUuid& uuid) {
  std::string msg;
  ProtoBuilder b(&msg);
  b.AppendVarInt(rt::TraceUuid::kMsbFieldNumber,
                 static_cast<uint64_t>(uuid.msb));
  b.AppendVarInt(rt::TraceUuid::kLsbFieldNumber,
                 static_cast<uint64_t>(uuid.lsb));
  std::string body;
  ProtoBuilder(&body).AppendMessage(rt::TracePacket::kTraceUuidFieldNumber,
                                    msg);
  WriteServicePacket(body);
}

void TraceExporter::WriteServiceEvent(ServiceEvent event,
                                      uint64_t boottime_ns) {
  using rt::TracingServiceEvent;
  uint32_t field = 0;
  switch (event) {
    case ServiceEvent::kTracingStarted:
      field = TracingServiceEvent::kTracingStartedFieldNumber;
      break;
    case ServiceEvent::kAllDataSourcesStarted:
      field = TracingServiceEvent::kAllDataSourcesStartedFieldNumber;
      break;
    case ServiceEvent::kAllDataSourcesFlushed:
      field = TracingServiceEvent::kAllDataSourcesFlushedFieldNumber;
      break;
    case ServiceEvent::kReadTracingBuffersCompleted:
      field = TracingServiceEvent::kReadTracingBuffersCompletedFieldNumber;
      break;
    case ServiceEvent::kTracingDisabled:
      field = TracingServiceEvent::kTracingDisabledFieldNumber;
      break;
  }
  std::string msg;
  ProtoBuilder(&msg).AppendVarInt(field, 1);
  std::string body;
  ProtoBuilder b(&body);
  b.AppendVarInt(rt::TracePacket::kTimestampFieldNumber, boottime_ns);
  b.AppendMessage(rt::TracePacket::kServiceEventFieldNumber, msg);
  WriteServicePacket(body);
}

void TraceExporter::WriteProducerEnd(const ProducerEnd& end) {
  if (!producer_ends_track_written_) {
    std::string track;
    ProtoBuilder t(&track);
    t.AppendVarInt(rt::TrackDescriptor::kUuidFieldNumber,
                   kProducerEndsTrackUuid);
    t.AppendString(rt::TrackDescriptor::kNameFieldNumber,
                   "ringtrace: producers that died");
    std::string body;
    ProtoBuilder(&body).AppendMessage(
        rt::TracePacket::kTrackDescriptorFieldNumber, track);
    WriteServicePacket(body);
    producer_ends_track_written_ = true;
  }
  const auto annotation = [](const char* name, int64_t value) {
    std::string a;
    ProtoBuilder b(&a);
    b.AppendString(rt::DebugAnnotation::kNameFieldNumber, name);
    b.AppendVarInt(rt::DebugAnnotation::kIntValueFieldNumber,
                   static_cast<uint64_t>(value));
    return a;
  };
  std::string event;
  ProtoBuilder e(&event);
  e.AppendVarInt(rt::TrackEvent::kTypeFieldNumber,
                 static_cast<uint64_t>(rt::TrackEvent_Type::TYPE_INSTANT));
  e.AppendString(rt::TrackEvent::kNameFieldNumber,
                 "producer \"" + end.name + "\" (pid " +
                     std::to_string(end.pid) +
                     ") died: its connection closed without a final report; "
                     "slices it left open did not end");
  e.AppendVarInt(rt::TrackEvent::kTrackUuidFieldNumber, kProducerEndsTrackUuid);
  e.AppendMessage(rt::TrackEvent::kDebugAnnotationsFieldNumber,
                  annotation("pid", end.pid));
  e.AppendMessage(rt::TrackEvent::kDebugAnnotationsFieldNumber,
                  annotation("uid", end.uid));
  e.AppendMessage(rt::TrackEvent::kDebugAnnotationsFieldNumber,
                  annotation("producer_id", end.producer_id));
  std::string body;
  ProtoBuilder b(&body);
  b.AppendVarInt(rt::TracePacket::kTimestampFieldNumber, end.boottime_ns);
  b.AppendMessage(rt::TracePacket::kTrackEventFieldNumber, event);
  WriteServicePacket(body);
}

base::Status TraceExporter::Finish() {
  if (compressor_) {
    const base::Status compressed = compressor_->Flush();
    const base::Status written = writer_->Flush();
    return compressed.ok() ? written : compressed;
  }
  return writer_->Flush();
}

}  // namespace trace_export
}  // namespace ringtrace
