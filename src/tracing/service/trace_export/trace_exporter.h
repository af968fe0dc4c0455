/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TraceExporter: the last leg of the data flow, TraceBufferV2 -> Perfetto
// trace file.
//
// The file is a serialized perfetto.protos.Trace: a plain concatenation of
// `Trace.packet` fields (field 1, length-delimited), one per TracePacket, so
// it can be appended to forever and cut at any packet boundary. What goes in:
//
//   WriteTraceConfig()   a TracePacket{trace_config = 33} (when the service
//                        has a config; usually first).
//   ExportBuffer()       every packet the buffer can give now: BeginRead(),
//                        then ReadNextTracePacket() until it returns false
//                        (after each, ReadMorePacketsOfRun() for the rest of
//                        its chunk's run, Options::batched_runs).
//                        Each packet (a list of slices) goes through the
//                        Ungrouper (group-encoded submessages become
//                        length-delimited) and is written with the service's
//                        trusted fields appended (below). Call it once at the
//                        end or periodically; sequence ids persist.
//   WriteTraceStats()    a TracePacket{trace_stats = 35}: one BufferStats per
//                        buffer from TraceBufferV2::stats() and the
//                        producers' loss reports, the service's counters
//                        (ServiceStats) and the exporter's invalid_packets,
//                        in Perfetto's fields as Perfetto's traced fills
//                        them (docs/trace_export.md, "Perfetto's stats from
//                        ringtrace's counters").
//   WriteClockSnapshot() a TracePacket{clock_snapshot = 6} with BOOTTIME,
//                        MONOTONIC and REALTIME read now, or as read earlier
//                        (ReadClocks()): the service writes one taken when
//                        tracing started and one at the end, so readers can
//                        map clocks over the whole trace.
//   WriteSystemInfo()    a TracePacket{system_info = 45}: uname(2), the page
//                        size, the CPU count and the UTC offset of the
//                        service's machine (ReadSystemInfo()).
//   WriteTraceUuid()     a TracePacket{trace_uuid = 89}: the random id of
//                        this trace file (NewTraceUuid()).
//   WriteServiceEvent()  a TracePacket{service_event = 69} with one of the
//                        TracingServiceEvent bools and the BOOTTIME time it
//                        happened as the packet timestamp.
//   Finish()             flushes the file writer and returns its status.
//
// Compression. With Options::compression kDeflate every packet above (the
// service's and the producers') goes through a PacketCompressor instead of
// straight to the file writer: the file is then a Trace of TracePackets
// carrying compressed_packets, zlib streams of about 512 KiB of packets
// each, Perfetto's COMPRESSION_TYPE_DEFLATE (docs/trace_export.md,
// "Compression"). Nothing else changes: the packets inside are byte for
// byte those of the uncompressed file. Finish() compresses the last batch.
//
// Trusted fields. The producer is never trusted for the fields only the
// service may set. After the producer's bytes of every packet the exporter
// appends, from the service's own records (PacketSequenceProperties):
//   trusted_uid (3)                 ClientIdentity.uid
//   trusted_pid (79)                ClientIdentity.pid
//   trusted_packet_sequence_id (10) the sequence id (below)
//   previous_packet_dropped (42)    the DataLossReason bitmask, when non-zero
//   first_packet_on_sequence (87)   true only on the writer's first packet
//                                   with nothing lost before it: the
//                                   buffer says it is the first (its
//                                   ReadNextTracePacket), it is the first
//                                   exported for the sequence, and it
//                                   carries no loss
// Protobuf parsers keep the LAST value of a non-repeated field (oneof members
// included), so the appended values win over anything a producer forged.
// Fields 42 and 87 are only appended when set; so that a forged value cannot
// survive where the service has nothing to say, every packet's top-level
// field numbers are checked (the Ungrouper records them while it validates
// the packet: no second parse) and when the producer wrote field 42 or 87,
// the service's value is appended explicitly (0 / false). A producer
// packet that carries trace_config (33), trace_stats (35) or
// compressed_packets (50) would impersonate the service: it is dropped and
// counted as invalid.
//
// Paths. A one-slice packet of at most 64 bytes is converted straight into
// the file batch behind its frame (ExportDirect); any other, and any the
// direct path declines, is converted into the Ungrouper's buffer and
// appended (the general path). Both write the same bytes
// (docs/trace_export.md, "The cost per packet").
//
// Sequence ids. trusted_packet_sequence_id is assigned by the exporter. The
// service's own packets (config, stats, clock snapshots, system info, uuid,
// service events) are sequence 1
// (kServiceSequenceId), as in Perfetto; the first {ProducerID, WriterID} the
// exporter meets gets 2, the next new one 3, and so on, in the order their
// first packet is read. The id is stable for the exporter's lifetime (every
// ExportBuffer() call, every buffer) and never reused, so a writer's packets
// form exactly one sequence in the file.
//
// Malformed packets. A packet the Ungrouper rejects (truncated field, bad
// wire type, unbalanced groups...) is dropped, never written, and counted in
// stats().invalid_packets (TraceStats.invalid_packets). The next packet
// exported on the same sequence carries previous_packet_dropped with
// DATA_LOSS_PRESENT | DATA_LOSS_CHUNK_CORRUPTED plus whatever loss the
// dropped packet itself reported, so the gap stays visible.
//
// Thread model: not thread-safe. One thread (the one that owns the
// TraceBufferV2s, which are not thread-safe either) calls every method.

#ifndef SRC_TRACING_SERVICE_TRACE_EXPORT_TRACE_EXPORTER_H_
#define SRC_TRACING_SERVICE_TRACE_EXPORT_TRACE_EXPORTER_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ringtrace/status.h"
#include "src/tracing/core/encoding/ungrouper.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/trace_export/packet_compressor.h"
#include "src/tracing/service/trace_export/trace_file_writer.h"

namespace ringtrace {
namespace trace_export {

// trusted_packet_sequence_id of the service's own packets.
constexpr uint32_t kServiceSequenceId = 1;

// Number of DataLossReason bits (PRESENT .. SMB_FULL).
constexpr size_t kNumDataLossReasons = 9;

struct ExportStats {
  // Taken from the buffer: by ReadNextTracePacket() or, the rest of a run
  // of plain packets, by ReadMorePacketsOfRun() (those also in
  // |packets_read_in_runs|).
  uint64_t packets_read = 0;
  uint64_t packets_read_in_runs = 0;
  uint64_t packets_exported = 0;  // producer packets written to the file
  // Of those, framed straight in the file batch (the direct path).
  uint64_t packets_exported_direct = 0;
  // Producer bytes written (after ungrouping; framing and stamped fields not
  // included).
  uint64_t packet_bytes_exported = 0;
  // Dropped: malformed (Ungrouper error) or impersonating the service.
  uint64_t invalid_packets = 0;
  // Packets whose producer bytes set a service-only field (overridden).
  uint64_t forged_trusted_fields = 0;
  uint64_t packets_with_loss = 0;  // exported with previous_packet_dropped
  // loss_reason_packets[b]: exported packets whose previous_packet_dropped
  // has bit b (DataLossReason 1 << b).
  uint64_t loss_reason_packets[kNumDataLossReasons] = {};
  // config, stats, clock snapshots, system info, uuid, service events
  uint64_t service_packets = 0;
  uint32_t sequences = 0;  // sequence ids assigned
  // With compression (Options::compression): the packet bytes before it
  // (what the uncompressed file would hold), the framed compressed batches
  // written instead, their count and the thread CPU time zlib took.
  // All 0 without compression.
  uint64_t uncompressed_bytes = 0;
  uint64_t compressed_bytes = 0;
  uint64_t compressed_batches = 0;
  uint64_t compression_cpu_ns = 0;
  // Packets lost to a compression error (the error is Finish()'s).
  uint64_t compression_dropped_packets = 0;
};

// Name of DataLossReason bit |bit| ("PRESENT", "READ_GAP", ...).
const char* DataLossReasonName(size_t bit);

class TraceExporter {
 public:
  enum class Compression {
    kNone,
    kDeflate,  // TracePacket.compressed_packets (PacketCompressor)
  };

  struct Options {
    // Identity stamped on the service's own packets. Negative: this
    // process's getuid() / getpid().
    int32_t service_uid = -1;
    int32_t service_pid = -1;
    Compression compression = Compression::kNone;
    // Used with kDeflate.
    PacketCompressor::Options compressor;
    // Small one-slice packets are converted straight into the file batch
    // (ExportDirect). False: every packet takes the general path (tests
    // compare the two byte for byte).
    bool direct_path = true;
    // After each packet the rest of its run of plain packets is taken from
    // the buffer in batches (TraceBufferV2::ReadMorePacketsOfRun()), with
    // the sequence looked up once. False: one ReadNextTracePacket() per
    // packet (tests compare the two byte for byte).
    bool batched_runs = true;
  };

  // TraceStats.final_flush_outcome.
  enum class FinalFlush {
    kUnspecified,  // no final flush (a clone, a snapshot): not written
    kSucceeded,
    kFailed,
  };

  // Extra service-level counters for WriteTraceStats().
  struct ServiceStats {
    uint32_t producers_connected = 0;
    uint64_t producers_seen = 0;
    // TraceStats.chunks_discarded: chunks the service dropped before any
    // buffer saw them (the drainer's unroutable and malformed chunks), as
    // Perfetto's field means. Not the chunks a buffer rejected: the buffer
    // counts those itself (BufferStats.chunks_discarded when a DISCARD
    // buffer is full, abi_violations when malformed), so each chunk counts
    // once.
    uint64_t chunks_discarded = 0;
    // Encoded TraceStats fields appended as they are (the service's
    // ringtrace-specific fields, e.g. the producers' loss reports).
    std::string extra_fields;
    // Per buffer, in the order of the buffers given (a missing entry is 0):
    // the packets the producers reported their writers dropped while
    // writing into that buffer (their loss reports' target buffer). Goes
    // into that buffer's BufferStats.trace_writer_packet_loss
    // (TraceWriterPacketLoss()).
    std::vector<uint64_t> producer_packets_dropped;
    // The service's state, as Perfetto's TraceStats fields of those names.
    uint32_t data_sources_registered = 0;
    uint64_t data_sources_seen = 0;
    uint32_t tracing_sessions = 0;
    uint32_t total_buffers = 0;
    // The trace's flushes, the final one (the stop) included.
    uint64_t flushes_requested = 0;
    uint64_t flushes_succeeded = 0;
    uint64_t flushes_failed = 0;
    FinalFlush final_flush = FinalFlush::kUnspecified;
  };

  // BufferStats.trace_writer_packet_loss of a buffer: the packets its
  // writers reported dropped, or the losses the buffer saw itself
  // (TraceBufferStats::trace_writer_packet_loss: flagged chunks and drop
  // markers, at least one packet each) where those are more (reports that
  // never came: a producer killed, one without loss reports). Both count
  // the same losses, so they are never added.
  static uint64_t TraceWriterPacketLoss(
      const trace_buffer::TraceBufferStats& stats,
      uint64_t producer_packets_dropped);

  // |writer| is not owned and must outlive the exporter.
  explicit TraceExporter(TraceFileWriter* writer)
      : TraceExporter(writer, Options()) {}
  TraceExporter(TraceFileWriter* writer, const Options& options);
  ~TraceExporter();

  TraceExporter(const TraceExporter&) = delete;
  TraceExporter& operator=(const TraceExporter&) = delete;

  // |data| is a serialized perfetto.protos.TraceConfig (trusted: it is the
  // service's own).
  void WriteTraceConfig(const void* data, size_t size);

  // Exports every packet |buffer| holds now (see the file comment).
  void ExportBuffer(trace_buffer::TraceBufferV2* buffer);
  // The same in slices: exports packets until |max_packet_bytes| of them
  // were written (the packet that crosses the budget is written whole, and
  // with batched runs the rest of its batch, at most 15 more packets of its
  // chunk) or the buffer has no more. Returns true when it had no more. A
  // caller may write into the buffer between calls: the next call's pass starts
  // again at the oldest data, and what was read is not read again.
  bool ExportBufferSlice(trace_buffer::TraceBufferV2* buffer,
                         uint64_t max_packet_bytes);

  void WriteTraceStats(
      const std::vector<const trace_buffer::TraceBufferV2*>& buffers,
      const ServiceStats& service_stats);

  // The serialized TraceStats WriteTraceStats() writes (without the packet
  // around it), with |invalid_packets| as the exporter's count. The buffers
  // are read: call it on the thread that owns them.
  static std::string EncodeTraceStats(
      const std::vector<const trace_buffer::TraceBufferV2*>& buffers,
      const ServiceStats& service_stats,
      uint64_t invalid_packets);

  // The clocks of a ClockSnapshot, in ns.
  struct ClockReadings {
    uint64_t boottime = 0;
    uint64_t monotonic = 0;
    uint64_t realtime = 0;
  };
  static ClockReadings ReadClocks();

  void WriteClockSnapshot() { WriteClockSnapshot(ReadClocks()); }
  void WriteClockSnapshot(const ClockReadings& clocks);

  // What WriteSystemInfo() writes. Empty strings / zeros are left out.
  struct SystemInfo {
    std::string sysname;  // uname(2)
    std::string version;
    std::string release;
    std::string machine;
    uint32_t page_size = 0;         // sysconf(_SC_PAGESIZE)
    uint32_t num_cpus = 0;          // sysconf(_SC_NPROCESSORS_CONF)
    int32_t timezone_off_mins = 0;  // local time - UTC, localtime_r(now)
    bool has_timezone = false;
  };
  static SystemInfo ReadSystemInfo();
  void WriteSystemInfo(const SystemInfo& info);

  // A random 128-bit trace id (an RFC 4122 version 4 UUID, so never zero):
  // getrandom(2), or /dev/urandom where that fails; the clocks and the pid
  // as a last resort (logged).
  struct TraceUuid {
    int64_t msb = 0;
    int64_t lsb = 0;
  };
  static TraceUuid NewTraceUuid();
  void WriteTraceUuid(const TraceUuid& uuid);

  // The TracingServiceEvent members the service writes.
  enum class ServiceEvent {
    kTracingStarted,
    kAllDataSourcesStarted,
    kAllDataSourcesFlushed,
    kReadTracingBuffersCompleted,
    kTracingDisabled,
  };
  // |boottime_ns|: when it happened (CLOCK_BOOTTIME), the packet timestamp.
  void WriteServiceEvent(ServiceEvent event, uint64_t boottime_ns);

  // A producer that served the trace and lost its connection without its
  // final report (killed or crashed), as the service saw it.
  struct ProducerEnd {
    int32_t pid = 0;
    int32_t uid = 0;
    uint32_t producer_id = 0;
    std::string name;          // as the producer called itself (untrusted)
    uint64_t boottime_ns = 0;  // when the service saw the connection close
  };
  // Marks |end| on the service's sequence as an instant TrackEvent, named
  // for the producer and its pid, with pid, uid and producer_id as debug
  // annotations, on the global track kProducerEndsTrackUuid ("ringtrace:
  // producers that died"; its TrackDescriptor precedes the first mark in a
  // file). Absolute timestamps, no interning: nothing depends on the
  // sequence's incremental state. trace_processor shows the mark as an
  // instant on that track, beside the producer's unfinished slices
  // (dur = -1, "Did not end" in the UI). docs/trace_export.md.
  void WriteProducerEnd(const ProducerEnd& end);
  static constexpr uint64_t kProducerEndsTrackUuid = 0x72696e6774726365;

  // Compresses the last batch (with compression), flushes the file writer;
  // returns the first compression or write error, if any.
  base::Status Finish();

  // The sequence id of {producer_id, writer_id}; 0 if it has none yet.
  uint32_t SequenceIdFor(trace_buffer::ProducerID producer_id,
                         trace_buffer::WriterID writer_id) const;

  // With compression, stats() includes the compressor's figures as of the
  // last batch written (all of them after Finish()).
  const ExportStats& stats() const;

 private:
  // Where the packets go: the compressor when there is one, else the file.
  inline void Emit(const void* data, size_t size) {
    if (compressor_)
      compressor_->Append(data, size);
    else
      writer_->Append(data, size);
  }
  inline void EndPacket() {
    if (compressor_)
      compressor_->EndPacket();
  }

  bool producer_ends_track_written_ = false;
  // Three varint fields: two tags of at most 2 bytes, one of 1, three values.
  static constexpr size_t kMaxTrustedIdentitySize = 2 + 10 + 2 + 10 + 1 + 5;
  struct Sequence {
    uint32_t id = 0;
    bool exported_any = false;
    // Loss to report on the next exported packet (carried over dropped
    // invalid packets).
    uint32_t pending_loss = 0;
    // The encoded trusted_uid, trusted_pid and trusted_packet_sequence_id
    // every packet of the sequence ends with, for |identity_uid| and
    // |identity_pid| (re-encoded if the buffer reports others).
    int32_t identity_uid = 0;
    int32_t identity_pid = 0;
    uint8_t identity_size = 0;  // 0: not encoded yet
    uint8_t identity[kMaxTrustedIdentitySize] = {};
  };

  // Service-only fields found among a packet's top-level fields.
  struct TopLevelScan {
    bool trusted_fields = false;  // 3, 10 or 79 (the appended values win)
    bool previous_packet_dropped = false;   // 42
    bool first_packet_on_sequence = false;  // 87
    bool service_payload = false;           // 33, 35 or 50
  };
  // Reads them off the top-level field numbers the Ungrouper recorded
  // while it validated the packet (no second parse).
  static TopLevelScan ScanTopLevel(const ungrouper::TopLevelFields& fields);

  Sequence* GetSequence(const trace_buffer::PacketSequenceProperties& props);
  // One packet: converted, stamped, framed and written, or dropped and
  // counted (invalid).
  void ExportPacket(const trace_buffer::TracePacket& packet,
                    const trace_buffer::PacketSequenceProperties& props,
                    uint32_t previous_packet_dropped,
                    bool first_in_buffer);
  // The packets after it in its run (see Options::batched_runs): same
  // sequence, no loss from the buffer, none the first. In batches, until
  // the run ends or packet_bytes_exported has passed |start| by
  // |max_packet_bytes| (ExportBufferSlice()'s budget).
  void ExportRestOfRun(trace_buffer::TraceBufferV2* buffer,
                       const trace_buffer::PacketSequenceProperties& props,
                       uint64_t start,
                       uint64_t max_packet_bytes);
  // A packet of one slice: the direct path if it applies, else the general
  // one. |loss| includes the sequence's pending loss.
  void ExportOneSlice(const uint8_t* data,
                      size_t size,
                      Sequence* seq,
                      const trace_buffer::PacketSequenceProperties& props,
                      uint32_t loss,
                      bool first_in_buffer);
  // The general path: |num_slices| slices of one packet.
  void ExportSlices(const ungrouper::ConstBytes* slices,
                    size_t num_slices,
                    Sequence* seq,
                    const trace_buffer::PacketSequenceProperties& props,
                    uint32_t loss,
                    bool first_in_buffer);
  // The direct path for a small one-slice packet: converted straight into
  // the file batch behind a two-byte frame, no intermediate copy. False:
  // nothing was written or counted; the general path takes the packet.
  bool ExportDirect(const uint8_t* data,
                    size_t size,
                    Sequence* seq,
                    const trace_buffer::PacketSequenceProperties& props,
                    uint32_t loss,
                    bool first_in_buffer);
  // Writes the trusted suffix at |p| (room: the .cc's kMaxSuffixSize);
  // returns its end.
  uint8_t* PutSuffix(uint8_t* p,
                     Sequence* seq,
                     const trace_buffer::PacketSequenceProperties& props,
                     uint32_t loss,
                     const TopLevelScan& scan,
                     bool first_in_buffer);
  void DropInvalid(Sequence* seq, uint32_t loss);
  void CountExported(Sequence* seq,
                     uint64_t body_size,
                     uint32_t loss,
                     const TopLevelScan& scan);
  // Frames and writes a service packet |body| (without trusted fields).
  void WriteServicePacket(const std::string& body);

  TraceFileWriter* const writer_;
  std::unique_ptr<PacketCompressor> compressor_;  // null: no compression
  const bool direct_path_;
  const bool batched_runs_;
  int32_t service_uid_;
  int32_t service_pid_;
  ungrouper::Ungrouper ungrouper_;
  std::vector<ungrouper::ConstBytes> slices_;  // reused per packet
  // Never erased from, so a Sequence* stays valid (a node-based map).
  std::unordered_map<uint32_t, Sequence> sequences_;
  // The last packet's sequence: packets come in runs of one sequence.
  uint32_t last_sequence_key_ = 0;
  Sequence* last_sequence_ = nullptr;
  uint32_t next_sequence_id_ = kServiceSequenceId + 1;
  mutable ExportStats stats_;  // stats() copies the compressor's in
};

}  // namespace trace_export
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_EXPORT_TRACE_EXPORTER_H_
