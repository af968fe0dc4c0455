/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Buffer-exhausted policies: Drop, Stall (writer-wait protocol of
// ring_wait.h) and StallThenDrop.

#include <gtest/gtest.h>

#include <errno.h>

#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "src/tracing/core/shm_ring/ring_wait.h"
#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/test_ring.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"

namespace ringtrace {
namespace shm_ring {
namespace {

constexpr WriterID kWid = 21;

RingWriter::Options MakeOptions(BufferExhaustedPolicy policy,
                                uint32_t stall_timeout_ms) {
  RingWriter::Options o;
  o.writer_id = kWid;
  o.policy = policy;
  o.stall_timeout_ms = stall_timeout_ms;
  return o;
}

// Fills a 2-chunk ring with two published chunks of another writer.
void FillRing(TestRing* ring) {
  RingWriter::Options o;
  o.writer_id = 99;
  RingWriter other(ring->view(), o);
  ASSERT_TRUE(WritePacket(&other, Pattern(249, 'a')));  // fills chunk 0
  ASSERT_TRUE(WritePacket(&other, Pattern(249, 'b')));  // fills chunk 1
  ASSERT_TRUE(other.Flush(nullptr));
  ASSERT_EQ(ring->write_pos() - ring->read_pos(), 2u);
}

// Scheduler state of a thread of this process ('S' = sleeping, e.g. in a
// futex wait).
char ThreadState(pid_t tid) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
  FILE* f = fopen(path, "r");
  if (!f)
    return '?';
  char buf[512] = {};
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  std::string s(buf, n);
  size_t paren = s.rfind(')');
  return paren != std::string::npos && paren + 2 < s.size() ? s[paren + 2]
                                                            : '?';
}

TEST(RingWriterPolicyTest, NamesRoundTrip) {
  const struct {
    BufferExhaustedPolicy policy;
    const char* name;
  } kAll[] = {
      {BufferExhaustedPolicy::kDrop, "drop"},
      {BufferExhaustedPolicy::kStall, "stall"},
      {BufferExhaustedPolicy::kStallThenDrop, "stall_then_drop"},
  };
  for (const auto& e : kAll) {
    EXPECT_STREQ(BufferExhaustedPolicyName(e.policy), e.name);
    // From another value, so that the parse must write.
    BufferExhaustedPolicy parsed = e.policy == BufferExhaustedPolicy::kDrop
                                       ? BufferExhaustedPolicy::kStall
                                       : BufferExhaustedPolicy::kDrop;
    EXPECT_TRUE(ParseBufferExhaustedPolicy(e.name, &parsed)) << e.name;
    EXPECT_EQ(parsed, e.policy) << e.name;
  }
  for (const char* bad : {"", "Drop", "DROP", "stall-then-drop", "stall ",
                          " drop", "block", "stall_then", "drop\n"}) {
    BufferExhaustedPolicy parsed = BufferExhaustedPolicy::kStall;
    EXPECT_FALSE(ParseBufferExhaustedPolicy(bad, &parsed)) << bad;
    EXPECT_EQ(parsed, BufferExhaustedPolicy::kStall) << bad;
  }
}

TEST(RingWriterPolicyTest, DropReturnsAtOnceOnFull) {
  TestRing ring(256, 2);
  FillRing(&ring);
  RingWriter w(ring.view(), MakeOptions(BufferExhaustedPolicy::kDrop, 1000));
  RingWriter::Span span;
  EXPECT_FALSE(w.BeginPacket(&span));
  EXPECT_EQ(w.stats().full, 1u);
  EXPECT_EQ(w.stats().stalls, 0u);
  EXPECT_EQ(ring.num_writers_waiting(), 0u);
}

// The writer is asleep in the futex when the reader advances: the reader's
// wake-up releases it.
TEST(RingWriterPolicyTest, StallWakesWhenReaderAdvances) {
  TestRing ring(256, 2);
  FillRing(&ring);
  RingWriter w(ring.view(),
               MakeOptions(BufferExhaustedPolicy::kStall, 60 * 1000));
  std::atomic<pid_t> tid{0};
  std::atomic<bool> ok{false};
  std::thread writer([&] {
    tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
    ok.store(WritePacket(&w, "stalled"));
  });
  // Wait (bounded by the test's own progress, not a clock) until the writer
  // is registered and asleep.
  while (ring.num_writers_waiting() == 0 || tid.load() == 0)
    std::this_thread::yield();
  while (ThreadState(tid.load()) != 'S')
    std::this_thread::yield();
  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  ASSERT_EQ(reader.ResolveOne(nullptr), ResolveResult::kEmitted);
  EXPECT_EQ(reader.wakeups(), 1u);  // the registration was seen
  writer.join();
  EXPECT_TRUE(ok.load());
  EXPECT_EQ(w.stats().stalls, 1u);
  EXPECT_EQ(w.stats().stall_timeouts, 0u);
  EXPECT_EQ(w.stats().loss_events, 0u);
  EXPECT_EQ(ring.num_writers_waiting(), 0u);
  ASSERT_TRUE(w.Flush(nullptr));
  EXPECT_EQ(reader.DrainAll(&chunks), ResolveResult::kNoData);
  EXPECT_EQ(Reassemble(chunks, kWid), std::vector<std::string>{"stalled"});
}

struct AdvanceInHook {
  TestRingReader* reader;
  int calls = 0;
  static void Hook(void* arg) {
    auto* self = static_cast<AdvanceInHook*>(arg);
    if (self->calls++ == 0)
      self->reader->ResolveOne(nullptr);
  }
};

// The other order: the reader advances after the writer registered but
// before it sleeps. The writer's re-check sees the move and never sleeps
// (no lost wake-up, no wait until the deadline).
TEST(RingWriterPolicyTest, StallReaderAdvancesBeforeWriterSleeps) {
  TestRing ring(256, 2);
  FillRing(&ring);
  RingWriter w(ring.view(),
               MakeOptions(BufferExhaustedPolicy::kStall, 60 * 1000));
  TestRingReader reader(ring.view());
  AdvanceInHook hook{&reader};
  w.SetStallHookForTesting(&AdvanceInHook::Hook, &hook);
  ASSERT_TRUE(WritePacket(&w, "quick"));
  EXPECT_EQ(hook.calls, 1);
  EXPECT_EQ(reader.wakeups(), 1u);  // registered while the reader advanced
  EXPECT_EQ(w.stats().stalls, 1u);
  EXPECT_EQ(w.stats().stall_timeouts, 0u);
  EXPECT_EQ(ring.num_writers_waiting(), 0u);
}

TEST(RingWriterPolicyTest, StallTimesOutAndDrops) {
  TestRing ring(256, 2);
  FillRing(&ring);
  RingWriter w(ring.view(), MakeOptions(BufferExhaustedPolicy::kStall, 5));
  RingWriter::Span span;
  // The stall sleeps in the app's code: the futex's ETIMEDOUT must not
  // reach the app's errno.
  errno = EDOM;
  EXPECT_FALSE(w.BeginPacket(&span));
  EXPECT_EQ(errno, EDOM);
  EXPECT_EQ(w.stats().stall_timeouts, 1u);
  EXPECT_EQ(w.stats().loss_events, 1u);
  EXPECT_EQ(ring.num_writers_waiting(), 0u);
  // kStall stalls again on the next Full.
  EXPECT_FALSE(w.BeginPacket(&span));
  EXPECT_EQ(w.stats().stalls, 2u);
}

TEST(RingWriterPolicyTest, StallThenDropStopsStallingAfterATimeout) {
  TestRing ring(256, 2);
  FillRing(&ring);
  RingWriter w(ring.view(),
               MakeOptions(BufferExhaustedPolicy::kStallThenDrop, 5));
  RingWriter::Span span;
  EXPECT_FALSE(w.BeginPacket(&span));
  EXPECT_EQ(w.stats().stalls, 1u);
  EXPECT_EQ(w.stats().stall_timeouts, 1u);
  // Drop mode: the next Full drops at once.
  EXPECT_FALSE(w.BeginPacket(&span));
  EXPECT_EQ(w.stats().stalls, 1u);
  EXPECT_EQ(w.stats().full, 2u);
  // Space frees: writing resumes and drop mode ends.
  TestRingReader reader(ring.view());
  std::vector<ReadChunk> chunks;
  reader.DrainAll(&chunks);
  ASSERT_TRUE(WritePacket(&w, Pattern(249, 'c')));
  ASSERT_TRUE(WritePacket(&w, Pattern(249, 'd')));
  ASSERT_TRUE(w.Flush(nullptr));
  EXPECT_FALSE(w.BeginPacket(&span));  // Full again: stalls again
  EXPECT_EQ(w.stats().stalls, 2u);
}

TEST(RingWaitTest, WakeWithoutWaitersIsCheap) {
  TestRing ring(256, 2);
  EXPECT_FALSE(WakeStalledWriters(ring.view()));
  // A wait whose sampled value is already stale returns at once.
  ring.view().read_pos()->store(3, std::memory_order_relaxed);
  EXPECT_TRUE(WaitForReadPosChange(ring.view(), 2, base::MonotonicNs()));
  EXPECT_FALSE(WaitForReadPosChange(ring.view(), 3, base::MonotonicNs()));
  EXPECT_EQ(ring.num_writers_waiting(), 0u);
}

}  // namespace
}  // namespace shm_ring
}  // namespace ringtrace
