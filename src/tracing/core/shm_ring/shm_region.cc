/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/shm_ring/shm_region.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#if defined(__linux__)
#include <sys/syscall.h>
#endif

namespace ringtrace {
namespace shm_ring {

namespace {

void SetStatus(base::Status* status, base::Status s) {
  if (status)
    *status = std::move(s);
}

// Returns false (and sets |status|) if |geometry| is not a valid ring.
bool CheckGeometry(const RingGeometry& geometry, base::Status* status) {
  const GeometryError ge =
      ValidateGeometry(geometry.chunk_size, geometry.num_chunks);
  if (ge == GeometryError::kOk)
    return true;
  SetStatus(status, base::ErrStatus("invalid ring geometry: %s",
                                    GeometryErrorToString(ge)));
  return false;
}

// The mapping size of a valid |geometry| plus |trailer_bytes| as a size_t,
// or false (and |status|) if it cannot be mapped in this address space or
// the trailer is not a whole number of 64-byte lines.
bool MappingSizeFits(const RingGeometry& geometry,
                     size_t trailer_bytes,
                     size_t* size,
                     base::Status* status) {
  if (trailer_bytes % 64 != 0 || trailer_bytes > (SIZE_MAX / 4)) {
    SetStatus(status,
              base::ErrStatus("ring trailer of %zu bytes", trailer_bytes));
    return false;
  }
  // Both terms are at most SIZE_MAX / 4 here (MappingSize() of a valid
  // geometry is far below), so the sum cannot wrap.
  const uint64_t size64 = geometry.MappingSize() + trailer_bytes;
  if (size64 > static_cast<uint64_t>(SIZE_MAX / 2)) {
    SetStatus(status, base::ErrStatus("ring of %llu bytes does not fit",
                                      static_cast<unsigned long long>(size64)));
    return false;
  }
  *size = static_cast<size_t>(size64);
  return true;
}

int MakeMemfd() {
#if defined(__linux__) && defined(SYS_memfd_create)
  // MFD_CLOEXEC | MFD_ALLOW_SEALING (spelled out: older libc headers lack
  // memfd_create and its flags).
  return static_cast<int>(
      syscall(SYS_memfd_create, "ringtrace_shm_ring", 0x0001u | 0x0002u));
#else
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

SharedRingRegion::SharedRingRegion(uint8_t* base,
                                   size_t size,
                                   RingGeometry g,
                                   base::ScopedFd fd,
                                   bool owns_mapping)
    : base_(base),
      size_(size),
      geometry_(g),
      fd_(std::move(fd)),
      owns_mapping_(owns_mapping) {}

SharedRingRegion::~SharedRingRegion() {
  if (owns_mapping_)
    munmap(base_, size_);
}

std::unique_ptr<SharedRingRegion> SharedRingRegion::MapShared(
    base::ScopedFd fd,
    size_t size,
    const RingGeometry& geometry,
    base::Status* status) {
  void* mem =
      mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (mem == MAP_FAILED) {
    SetStatus(status, base::ErrStatus("mmap: %s", strerror(errno)));
    return nullptr;
  }
  SetStatus(status, base::OkStatus());
  return std::unique_ptr<SharedRingRegion>(
      new SharedRingRegion(static_cast<uint8_t*>(mem), size, geometry,
                           std::move(fd), /*owns_mapping=*/true));
}

std::unique_ptr<SharedRingRegion> SharedRingRegion::CreateMemfd(
    const RingGeometry& geometry,
    base::Status* status) {
  return CreateMemfd(geometry, 0, status);
}

std::unique_ptr<SharedRingRegion> SharedRingRegion::CreateMemfd(
    const RingGeometry& geometry,
    size_t trailer_bytes,
    base::Status* status) {
  size_t size = 0;
  if (!CheckGeometry(geometry, status) ||
      !MappingSizeFits(geometry, trailer_bytes, &size, status)) {
    return nullptr;
  }
  base::ScopedFd fd(MakeMemfd());
  if (!fd.valid()) {
    SetStatus(status, base::ErrStatus("memfd_create: %s", strerror(errno)));
    return nullptr;
  }
  if (ftruncate(fd.get(), static_cast<off_t>(size)) != 0) {
    SetStatus(status, base::ErrStatus("ftruncate: %s", strerror(errno)));
    return nullptr;
  }
  if (fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) !=
      0) {
    SetStatus(status, base::ErrStatus("F_ADD_SEALS: %s", strerror(errno)));
    return nullptr;
  }
  std::unique_ptr<SharedRingRegion> region =
      MapShared(std::move(fd), size, geometry, status);
  if (region)
    region->trailer_bytes_ = trailer_bytes;
  return region;
}

std::unique_ptr<SharedRingRegion> SharedRingRegion::MapFd(
    int raw_fd,
    const RingGeometry& geometry,
    base::Status* status) {
  return MapFd(raw_fd, geometry, 0, status);
}

std::unique_ptr<SharedRingRegion> SharedRingRegion::MapFd(
    int raw_fd,
    const RingGeometry& geometry,
    size_t trailer_bytes,
    base::Status* status) {
  // Closes the fd on every failure below.
  base::ScopedFd fd(raw_fd);
  if (!fd.valid()) {
    SetStatus(status, base::ErrStatus("no ring fd"));
    return nullptr;
  }
  size_t size = 0;
  if (!CheckGeometry(geometry, status) ||
      !MappingSizeFits(geometry, trailer_bytes, &size, status)) {
    return nullptr;
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) {
    SetStatus(status, base::ErrStatus("fstat: %s", strerror(errno)));
    return nullptr;
  }
  if (st.st_size < 0 || static_cast<uint64_t>(st.st_size) < size) {
    SetStatus(status,
              base::ErrStatus("ring file too small: %lld < %zu",
                              static_cast<long long>(st.st_size), size));
    return nullptr;
  }
  const int seals = fcntl(fd.get(), F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
    SetStatus(status,
              base::ErrStatus("ring file is not sealed against shrinking"));
    return nullptr;
  }
  std::unique_ptr<SharedRingRegion> region =
      MapShared(std::move(fd), size, geometry, status);
  if (region)
    region->trailer_bytes_ = trailer_bytes;
  return region;
}

std::unique_ptr<SharedRingRegion> SharedRingRegion::Wrap(
    void* memory,
    size_t size,
    const RingGeometry& geometry,
    base::Status* status) {
  if (!CheckGeometry(geometry, status))
    return nullptr;
  if (!memory || (reinterpret_cast<uintptr_t>(memory) & 63) != 0) {
    SetStatus(status, base::ErrStatus("ring memory must be 64-byte aligned"));
    return nullptr;
  }
  if (static_cast<uint64_t>(size) < geometry.MappingSize()) {
    SetStatus(status, base::ErrStatus("ring memory too small: %zu < %llu", size,
                                      static_cast<unsigned long long>(
                                          geometry.MappingSize())));
    return nullptr;
  }
  SetStatus(status, base::OkStatus());
  return std::unique_ptr<SharedRingRegion>(
      new SharedRingRegion(static_cast<uint8_t*>(memory), size, geometry,
                           base::ScopedFd(), /*owns_mapping=*/false));
}

}  // namespace shm_ring
}  // namespace ringtrace
