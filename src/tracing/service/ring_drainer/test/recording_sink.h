/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Test support: records every chunk the drainer (or a reader) hands over,
// through both the ChunkSink and the ChunkConsumer interfaces.

#ifndef SRC_TRACING_SERVICE_RING_DRAINER_TEST_RECORDING_SINK_H_
#define SRC_TRACING_SERVICE_RING_DRAINER_TEST_RECORDING_SINK_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "src/tracing/service/ring_drainer/chunk_sink.h"
#include "src/tracing/service/ring_drainer/ring_reader.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

struct RecordedChunk {
  ProducerID producer_id = 0;
  ClientIdentity identity;
  WriterID writer_id = 0;
  ChunkID chunk_id = 0;
  shm_ring::ChunkFlags flags;
  std::vector<std::string> fragments;
};

// Room for a pending chunk's fragments, back to back, cut into one string
// per fragment when the chunk is committed.
class PendingPayload {
 public:
  uint8_t* Reset(const uint32_t* sizes, size_t num_fragments);
  std::vector<std::string> Split() const;

 private:
  std::string bytes_;
  std::vector<uint32_t> sizes_;
};

// A ChunkSink that keeps every committed chunk.
class RecordingSink : public ChunkSink {
 public:
  ~RecordingSink() override;

  uint8_t* BeginChunkFragments(ProducerID producer_id,
                               const ClientIdentity& identity,
                               WriterID writer_id,
                               ChunkID chunk_id,
                               const uint32_t* sizes,
                               size_t num_fragments,
                               shm_ring::ChunkFlags flags) override;
  void CommitPendingChunk() override;
  void AbortPendingChunk() override;

  bool reject_all = false;
  std::vector<RecordedChunk> chunks;
  uint32_t begins = 0;
  uint32_t aborts = 0;
  uint32_t rejects = 0;

 private:
  bool pending_ = false;
  RecordedChunk pending_chunk_;
  // The pending payload, fragments back to back, and their sizes.
  PendingPayload pending_payload_;
};

struct ConsumedChunk {
  ChunkDescriptor desc;
  std::vector<std::string> fragments;
};

struct DroppedChunk {
  uint32_t position;
  shm_ring::WriterID writer_id;
  DropReason reason;
};

// A ChunkConsumer for driving a RingReader directly.
class RecordingConsumer : public ChunkConsumer {
 public:
  ~RecordingConsumer() override;

  uint8_t* BeginChunk(const ChunkDescriptor& desc,
                      const uint32_t* sizes) override;
  void CommitChunk() override;
  void AbortChunk() override;
  void OnChunkDropped(uint32_t position,
                      shm_ring::WriterID writer_id,
                      DropReason reason) override;

  bool reject_all = false;
  std::vector<ConsumedChunk> chunks;  // Committed with payload.
  std::vector<DroppedChunk> dropped;
  uint32_t begins = 0;
  uint32_t commits = 0;  // Including rejected ones.
  uint32_t aborts = 0;
  // Chunks whose BeginChunk this consumer refused (reject_all): its own
  // record, the count a consumer keeps of what it refuses.
  uint32_t rejects = 0;

 private:
  bool pending_ = false;
  bool pending_accepted_ = false;
  ConsumedChunk pending_chunk_;
  PendingPayload pending_payload_;
};

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_RING_DRAINER_TEST_RECORDING_SINK_H_
