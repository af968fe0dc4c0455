/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// SharedRingRegion: the memory a shared ring lives in.
//
// CreateMemfd() makes an anonymous memfd of the ring's MappingSize(), maps it
// MAP_SHARED and keeps the fd, which the other side maps in its own process
// (the transport of the fd is not this class's business). The memory of a
// fresh memfd is zero-filled, which is a valid, empty ring at positions 0
// (ABI). The file is sealed against shrinking and growing (F_SEAL_SHRINK |
// F_SEAL_GROW | F_SEAL_SEAL) before anyone else can see it: whoever else
// holds the fd can write the ring's bytes, but cannot truncate the file
// under our mapping (which would turn our reads into SIGBUS).
//
// MapFd() maps such a file received from elsewhere (the producer side). It
// refuses a file that is smaller than the mapping or not sealed against
// shrinking, for the same reason.
//
// Wrap() views memory the caller owns (tests, benchmarks); the caller keeps
// it alive and zero-fills it if it wants an empty ring.
//
// Not thread-safe itself; the view it hands out is used concurrently through
// the ring protocol.

#ifndef SRC_TRACING_CORE_SHM_RING_SHM_REGION_H_
#define SRC_TRACING_CORE_SHM_RING_SHM_REGION_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>

#include "ringtrace/shm_ring_abi.h"
#include "ringtrace/status.h"
#include "src/base/scoped_fd.h"

namespace ringtrace {
namespace shm_ring {

class SharedRingRegion {
 public:
  // Creates an anonymous shared mapping for |geometry|. On failure returns
  // null and sets |*status| (if not null).
  static std::unique_ptr<SharedRingRegion> CreateMemfd(
      const RingGeometry& geometry,
      base::Status* status);
  // The same with |trailer_bytes| more after the ring (a multiple of 64;
  // the service's writer loss area, writer_loss_area.h), mapped and sealed
  // with it.
  static std::unique_ptr<SharedRingRegion> CreateMemfd(
      const RingGeometry& geometry,
      size_t trailer_bytes,
      base::Status* status);

  // Maps the ring memfd |fd| (ownership taken; closed on failure too) for
  // |geometry|. Fails unless |geometry| is valid, the file is at least
  // geometry.MappingSize() bytes and it carries F_SEAL_SHRINK.
  static std::unique_ptr<SharedRingRegion> MapFd(int fd,
                                                 const RingGeometry& geometry,
                                                 base::Status* status);
  // The same, also mapping the |trailer_bytes| after the ring; fails unless
  // the file holds them.
  static std::unique_ptr<SharedRingRegion> MapFd(int fd,
                                                 const RingGeometry& geometry,
                                                 size_t trailer_bytes,
                                                 base::Status* status);

  // Views |size| bytes at |memory| (not owned). |memory| must be 64-byte
  // aligned and |size| >= geometry.MappingSize().
  static std::unique_ptr<SharedRingRegion> Wrap(void* memory,
                                                size_t size,
                                                const RingGeometry& geometry,
                                                base::Status* status);

  ~SharedRingRegion();
  SharedRingRegion(const SharedRingRegion&) = delete;
  SharedRingRegion& operator=(const SharedRingRegion&) = delete;

  RingView view() const { return RingView(base_, geometry_); }
  uint8_t* base() const { return base_; }
  size_t size() const { return size_; }  // the ring's mapping + trailer
  // The bytes after the ring's mapping (null, 0 when there are none).
  uint8_t* trailer() const {
    return trailer_bytes_ ? base_ + geometry_.MappingSize() : nullptr;
  }
  size_t trailer_bytes() const { return trailer_bytes_; }
  // The memfd, or -1 for a wrapped region. Owned by the region.
  int fd() const { return fd_.get(); }

 private:
  // Maps |size| bytes of |fd| MAP_SHARED for |geometry| (the last step of
  // CreateMemfd and MapFd); closes |fd| on failure.
  static std::unique_ptr<SharedRingRegion> MapShared(
      base::ScopedFd fd,
      size_t size,
      const RingGeometry& geometry,
      base::Status* status);
  SharedRingRegion(uint8_t* base,
                   size_t size,
                   RingGeometry g,
                   base::ScopedFd fd,
                   bool owns_mapping);

  uint8_t* base_;
  size_t size_;
  size_t trailer_bytes_ = 0;  // CreateMemfd / MapFd only
  RingGeometry geometry_;
  base::ScopedFd fd_;
  bool owns_mapping_;
};

}  // namespace shm_ring
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_SHM_RING_SHM_REGION_H_
