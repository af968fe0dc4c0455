/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Minimal placeholder implementation: the interface is final, the behaviour
// lands in the following commits.

#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

#include "src/tracing/service/trace_buffer_v2/chunk_seq_reader.h"

namespace ringtrace {
namespace trace_buffer {

std::string TracePacket::GetRawBytesForTesting() const {
  std::string out;
  out.reserve(size_);
  for (const Slice& s : slices_)
    out.append(reinterpret_cast<const char*>(s.data), s.size);
  return out;
}

std::unique_ptr<TraceBufferV2> TraceBufferV2::Create(size_t size_bytes,
                                                     OverwritePolicy policy) {
  if (size_bytes == 0)
    return nullptr;
  return std::unique_ptr<TraceBufferV2>(new TraceBufferV2(size_bytes, policy));
}

TraceBufferV2::TraceBufferV2(size_t size, OverwritePolicy policy)
    : size_(size), policy_(policy) {}

TraceBufferV2::~TraceBufferV2() = default;

bool TraceBufferV2::CopyChunkUntrusted(ProducerID,
                                       const ClientIdentity&,
                                       WriterID,
                                       ChunkID,
                                       uint16_t,
                                       uint8_t,
                                       bool,
                                       const uint8_t*,
                                       size_t) {
  return false;
}

bool TraceBufferV2::CopyChunkFragments(ProducerID,
                                       const ClientIdentity&,
                                       WriterID,
                                       ChunkID,
                                       const FragmentRef*,
                                       size_t,
                                       uint32_t) {
  return false;
}

bool TraceBufferV2::BeginChunkFragments(ProducerID,
                                        const ClientIdentity&,
                                        WriterID,
                                        ChunkID,
                                        const uint32_t*,
                                        size_t,
                                        uint32_t,
                                        uint8_t**) {
  return false;
}

void TraceBufferV2::CommitPendingChunk() {}
void TraceBufferV2::AbortPendingChunk() {}

bool TraceBufferV2::TryPatchChunkContents(ProducerID,
                                          WriterID,
                                          ChunkID,
                                          const Patch*,
                                          size_t,
                                          bool) {
  return false;
}

void TraceBufferV2::BeginRead() {}

bool TraceBufferV2::ReadNextTracePacket(TracePacket*,
                                        PacketSequenceProperties*,
                                        uint32_t*) {
  return false;
}

std::unique_ptr<TraceBufferV2> TraceBufferV2::CloneReadOnly() const {
  return nullptr;
}

size_t TraceBufferV2::GetMemoryUsageBytes() const {
  return used_size_;
}

}  // namespace trace_buffer
}  // namespace ringtrace
