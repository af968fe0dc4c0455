/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// PacketCompressor: Perfetto's COMPRESSION_TYPE_DEFLATE for a trace file.
//
// The exporter hands it the framed Trace.packet fields it would otherwise
// write to the file (Append(), then EndPacket() after each whole packet).
// They are gathered into a batch; once a packet ends with the batch at
// kDefaultBatchSize (512 KiB, as Perfetto's batches) or more, the batch is
// compressed with zlib (deflate with the zlib header, one complete stream
// per batch) and written to the TraceFileWriter as one
//   Trace.packet { TracePacket.compressed_packets = <stream> }
// so a batch's content is itself a serialized Trace: a reader inflates it
// and parses the packets as if they were in the file (trace_processor does
// exactly that). Flush() compresses what is left, at the end.
//
// Packets are never split across batches: a packet larger than the batch
// makes the batch grow to hold it (the exporter's packets are bounded by
// the buffer's packet size), and the memory goes back to the batch size
// after it. Memory otherwise: the batch, zlib's state (about 256 KiB,
// made once and reset per batch) and an output buffer of
// deflateBound(batch).
//
// A zlib failure (deflateInit out of memory, an unexpected deflate result)
// is latched as status(); later packets are dropped and counted
// (stats().packets_dropped) and the exporter's Finish() reports the error.
// Write errors are the TraceFileWriter's own.
//
// Thread model: not thread-safe; the exporter's thread calls every method.

#ifndef SRC_TRACING_SERVICE_TRACE_EXPORT_PACKET_COMPRESSOR_H_
#define SRC_TRACING_SERVICE_TRACE_EXPORT_PACKET_COMPRESSOR_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <memory>
#include <vector>

#include "ringtrace/logging.h"
#include "ringtrace/status.h"
#include "src/tracing/service/trace_export/trace_file_writer.h"

namespace ringtrace {
namespace trace_export {

struct PacketCompressorStats {
  uint64_t packets = 0;           // packets compressed (EndPacket() calls)
  uint64_t input_bytes = 0;       // framed packet bytes compressed
  uint64_t compressed_bytes = 0;  // zlib output, before the framing
  uint64_t output_bytes = 0;      // framed bytes given to the file writer
  uint64_t batches = 0;           // compressed_packets written
  uint64_t cpu_ns = 0;            // thread CPU time spent in zlib
  uint64_t packets_dropped = 0;   // after a zlib error
};

class PacketCompressor {
 public:
  static constexpr size_t kDefaultBatchSize = 512 * 1024;

  struct Options {
    size_t batch_size = kDefaultBatchSize;  // > 0
    // zlib's 1..9. 1 (its fastest): on SDK-shaped TrackEvent packets it
    // runs 4x faster than zlib's default 6 for a 21% larger file
    // (packet_compressor_benchmark.cc, docs/trace_export.md).
    int level = 1;
  };

  // |out| is not owned and must outlive the compressor.
  explicit PacketCompressor(TraceFileWriter* out)
      : PacketCompressor(out, Options()) {}
  PacketCompressor(TraceFileWriter* out, const Options& options);
  ~PacketCompressor();

  PacketCompressor(const PacketCompressor&) = delete;
  PacketCompressor& operator=(const PacketCompressor&) = delete;

  // Bytes of the current packet (its Trace.packet tag and length first).
  inline void Append(const void* data, size_t size) {
    if (RT_LIKELY(size <= batch_.size() - used_)) {
      memcpy(batch_.data() + used_, data, size);
      used_ += size;
      return;
    }
    AppendSlow(static_cast<const uint8_t*>(data), size);
  }

  // The current packet is complete: compresses the batch when it is full.
  inline void EndPacket() {
    stats_.packets++;
    if (used_ >= batch_size_)
      CompressBatch();
  }

  // Compresses what is batched (whole packets only). Returns status().
  base::Status Flush();

  const base::Status& status() const { return status_; }
  const PacketCompressorStats& stats() const { return stats_; }
  size_t batch_size() const { return batch_size_; }

 private:
  struct ZStream;

  void AppendSlow(const uint8_t* data, size_t size);
  void CompressBatch();
  // Runs deflate over batch_[0, used_) into out_; false on a zlib error.
  bool Deflate(size_t* compressed_size);

  TraceFileWriter* const out_;
  const size_t batch_size_;
  const int level_;
  std::unique_ptr<ZStream> zs_;
  std::vector<uint8_t> batch_;  // size() is the room; used_ is filled
  size_t used_ = 0;
  uint64_t packets_done_ = 0;  // stats_.packets when the last batch went
  std::vector<uint8_t> out_buf_;
  base::Status status_;
  PacketCompressorStats stats_;
};

}  // namespace trace_export
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_EXPORT_PACKET_COMPRESSOR_H_
