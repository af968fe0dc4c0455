/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/shm_ring/shm_region.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "src/tracing/core/shm_ring/ring_wait.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"

namespace ringtrace {
namespace shm_ring {
namespace {

TEST(SharedRingRegionTest, MemfdRingIsSharedAndZeroFilled) {
  base::Status status;
  auto region = SharedRingRegion::CreateMemfd(RingGeometry(512, 4), &status);
  ASSERT_NE(region, nullptr) << status.message();
  EXPECT_TRUE(status.ok());
  EXPECT_GE(region->fd(), 0);
  EXPECT_EQ(region->size(), 256u + 4 * 512);
  for (size_t i = 0; i < region->size(); i++)
    ASSERT_EQ(region->base()[i], 0) << i;

  // A second mapping of the same fd (as the service would make) sees what
  // the writer publishes.
  void* other = mmap(nullptr, region->size(), PROT_READ | PROT_WRITE,
                     MAP_SHARED, region->fd(), 0);
  ASSERT_NE(other, MAP_FAILED);
  RingWriter::Options opts;
  opts.writer_id = 3;
  RingWriter writer(region->view(), opts);
  RingWriter::Span span;
  ASSERT_TRUE(writer.BeginPacket(&span));
  memcpy(span.wptr, "shared", 6);
  writer.EndPacket(span.wptr + 6);
  ASSERT_TRUE(writer.Flush(nullptr));

  TestRingReader reader(
      RingView(static_cast<uint8_t*>(other), RingGeometry(512, 4)));
  std::vector<ReadChunk> chunks;
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].fragments, std::vector<std::string>{"shared"});
  munmap(other, region->size());
}

TEST(SharedRingRegionTest, RejectsBadGeometryAndMemory) {
  base::Status status;
  EXPECT_EQ(SharedRingRegion::CreateMemfd(RingGeometry(300, 4), &status),
            nullptr);
  EXPECT_FALSE(status.ok());
  void* mem = aligned_alloc(64, 4096);
  EXPECT_EQ(SharedRingRegion::Wrap(mem, 4096, RingGeometry(256, 64), &status),
            nullptr);  // too small
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(SharedRingRegion::Wrap(static_cast<uint8_t*>(mem) + 8, 2048,
                                   RingGeometry(256, 4), &status),
            nullptr);  // misaligned
  auto ok = SharedRingRegion::Wrap(mem, 4096, RingGeometry(256, 8), &status);
  ASSERT_NE(ok, nullptr);
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(ok->fd(), -1);
  EXPECT_EQ(ok->view().chunk(0), static_cast<uint8_t*>(mem) + 256);
  ok.reset();
  free(mem);
}

// The file handed to the other side cannot be resized: a peer that
// truncates it would turn our reads of the mapping into SIGBUS.
TEST(SharedRingRegionTest, MemfdIsSealedAgainstResizing) {
  base::Status status;
  auto region = SharedRingRegion::CreateMemfd(RingGeometry(512, 4), &status);
  ASSERT_NE(region, nullptr) << status.message();
  const int seals = fcntl(region->fd(), F_GET_SEALS);
  ASSERT_GE(seals, 0);
  EXPECT_NE(seals & F_SEAL_SHRINK, 0);
  EXPECT_NE(seals & F_SEAL_GROW, 0);
  EXPECT_NE(seals & F_SEAL_SEAL, 0);   // nobody can lift or add seals
  EXPECT_EQ(seals & F_SEAL_WRITE, 0);  // the producer must write
  EXPECT_NE(ftruncate(region->fd(), 256), 0);
  EXPECT_NE(ftruncate(region->fd(), static_cast<off_t>(region->size()) * 2), 0);
  EXPECT_NE(fcntl(region->fd(), F_ADD_SEALS, F_SEAL_WRITE), 0);
}

// MapFd is the producer's side: it maps the received file, which then
// shares its bytes with the creator's mapping.
TEST(SharedRingRegionTest, MapFdSharesTheRing) {
  base::Status status;
  const RingGeometry geometry(512, 4);
  auto service = SharedRingRegion::CreateMemfd(geometry, &status);
  ASSERT_NE(service, nullptr) << status.message();
  auto producer =
      SharedRingRegion::MapFd(dup(service->fd()), geometry, &status);
  ASSERT_NE(producer, nullptr) << status.message();
  EXPECT_EQ(producer->size(), service->size());
  EXPECT_NE(producer->base(), service->base());

  RingWriter::Options opts;
  opts.writer_id = 9;
  RingWriter writer(producer->view(), opts);
  RingWriter::Span span;
  ASSERT_TRUE(writer.BeginPacket(&span));
  memcpy(span.wptr, "mapped", 6);
  writer.EndPacket(span.wptr + 6);
  ASSERT_TRUE(writer.Flush(nullptr));
  TestRingReader reader(service->view());
  std::vector<ReadChunk> chunks;
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].fragments, std::vector<std::string>{"mapped"});
}

// Files MapFd must refuse, each with a status and without leaking the fd.
TEST(SharedRingRegionTest, MapFdRejectsUnsafeFiles) {
  const RingGeometry geometry(512, 4);
  const auto open_fds = [] {
    int n = 0;
    for (int fd = 0; fd < 1024; fd++)
      n += fcntl(fd, F_GETFD) >= 0 ? 1 : 0;
    return n;
  };
  const int fds_before = open_fds();
  base::Status status;

  EXPECT_EQ(SharedRingRegion::MapFd(-1, geometry, &status), nullptr);
  EXPECT_FALSE(status.ok());

  // Not sealed: a plain memfd of the right size.
  int fd = static_cast<int>(syscall(SYS_memfd_create, "t", 0x0002u));
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(geometry.MappingSize())), 0);
  EXPECT_EQ(SharedRingRegion::MapFd(fd, geometry, &status), nullptr);
  EXPECT_NE(status.message().find("sealed"), std::string::npos)
      << status.message();

  // Sealed but smaller than the geometry says.
  fd = static_cast<int>(syscall(SYS_memfd_create, "t", 0x0002u));
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 1024), 0);
  ASSERT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
  EXPECT_EQ(SharedRingRegion::MapFd(fd, geometry, &status), nullptr);
  EXPECT_NE(status.message().find("too small"), std::string::npos)
      << status.message();

  // A valid file but an invalid geometry.
  auto region = SharedRingRegion::CreateMemfd(geometry, &status);
  ASSERT_NE(region, nullptr);
  EXPECT_EQ(
      SharedRingRegion::MapFd(dup(region->fd()), RingGeometry(300, 4), &status),
      nullptr);
  EXPECT_FALSE(status.ok());
  region.reset();

  EXPECT_EQ(open_fds(), fds_before);
}

// Scheduler state of a thread of this process ('S' = sleeping).
char ThreadState(pid_t tid) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
  FILE* f = fopen(path, "r");
  if (!f)
    return '?';
  char buf[512] = {};
  const size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  const std::string s(buf, n);
  const size_t paren = s.rfind(')');
  return paren != std::string::npos && paren + 2 < s.size() ? s[paren + 2]
                                                            : '?';
}

// The writer-wait futex is SHARED: the reader lives in another process and
// wakes the writer through its own mapping of the memfd. Two mappings of the
// same memfd in one process have different addresses, exactly like two
// processes: a private futex would key the sleeper by (process, address) and
// the wake through the other mapping would miss it (the writer would only
// notice the new read_pos at its deadline, with no FUTEX_WAKE counted).
TEST(SharedRingRegionTest, WakeThroughAnotherMappingReachesTheStalledWriter) {
  const RingGeometry geometry(256, 2);
  base::Status status;
  auto region = SharedRingRegion::CreateMemfd(geometry, &status);
  ASSERT_NE(region, nullptr) << status.message();
  void* other = mmap(nullptr, region->size(), PROT_READ | PROT_WRITE,
                     MAP_SHARED, region->fd(), 0);
  ASSERT_NE(other, MAP_FAILED);
  const RingView reader_view(static_cast<uint8_t*>(other), geometry);

  std::atomic<pid_t> tid{0};
  bool moved = false;
  uint32_t futex_wakes = 0;
  std::thread writer([&] {
    tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
    // Deadline far away: only a wake-up ends the sleep early.
    moved = WaitForReadPosChange(region->view(), /*sampled=*/0,
                                 base::MonotonicNs() + 60ull * 1000000000ull,
                                 nullptr, nullptr, &futex_wakes);
  });
  // The registration is visible through the reader's mapping; wait until
  // the writer sleeps.
  while (reader_view.num_writers_waiting()->load(std::memory_order_relaxed) ==
             0 ||
         tid.load() == 0) {
    std::this_thread::yield();
  }
  while (ThreadState(tid.load()) != 'S')
    std::this_thread::yield();
  // The reader's side, through its own mapping (R1..R3 of ring_wait.h).
  reader_view.read_pos()->store(1, std::memory_order_release);
  EXPECT_TRUE(WakeStalledWriters(reader_view));
  writer.join();
  EXPECT_TRUE(moved);
  EXPECT_EQ(futex_wakes, 1u);
  EXPECT_EQ(region->view().num_writers_waiting()->load(), 0u);
  munmap(other, region->size());
}

}  // namespace
}  // namespace shm_ring
}  // namespace ringtrace
