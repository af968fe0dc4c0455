/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/shm_ring_abi.h"

namespace ringtrace {
namespace shm_ring {

const char* GeometryErrorToString(GeometryError e) {
  switch (e) {
    case GeometryError::kOk:
      return "ok";
    case GeometryError::kChunkSizeNotPowerOfTwo:
      return "chunk_size is not a power of two";
    case GeometryError::kChunkSizeOutOfRange:
      return "chunk_size is outside [256, 32768]";
    case GeometryError::kNumChunksNotPowerOfTwo:
      return "num_chunks is not a power of two";
    case GeometryError::kNumChunksOutOfRange:
      return "num_chunks is outside [2, 2^31)";
  }
  return "unknown geometry error";
}

}  // namespace shm_ring
}  // namespace ringtrace
