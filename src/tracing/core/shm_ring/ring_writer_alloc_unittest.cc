/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The relocation path allocates nothing (spec 7 step 6: scratch is preallocated
// at construction). This file replaces the global operator new for the whole
// test binary with a pass-through to malloc that counts calls made by the
// current thread while a counter defined here is active; everywhere else it
// behaves like the default one.

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <new>
#include <string>

#include <gtest/gtest.h>

#include "src/tracing/core/shm_ring/ring_writer.h"
#include "src/tracing/core/shm_ring/test_ring.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"

// TSan's runtime is linked whole and defines operator new/delete itself, so
// a replacement cannot link there; the TSan build skips these tests (the
// property does not depend on the build; release, debug and ASan run them).
#if defined(__SANITIZE_THREAD__)
#define RT_ALLOC_COUNTING 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RT_ALLOC_COUNTING 0
#endif
#endif
#ifndef RT_ALLOC_COUNTING
#define RT_ALLOC_COUNTING 1
#endif

namespace {
// Constant-initialized, so reading them never allocates.
thread_local bool g_count_allocations = false;
thread_local uint64_t g_allocations = 0;
}  // namespace

#if RT_ALLOC_COUNTING
// libstdc++'s new[] and nothrow new forward to operator new(size_t); the
// aligned forms are not counted (the writer uses none).
void* operator new(size_t size) {
  if (g_count_allocations)
    g_allocations++;
  void* p = malloc(size == 0 ? 1 : size);
  if (!p)
    abort();  // -fno-exceptions: no std::bad_alloc to throw
  return p;
}

void operator delete(void* p) noexcept {
  free(p);
}

void operator delete(void* p, size_t) noexcept {
  free(p);
}
#endif  // RT_ALLOC_COUNTING

namespace ringtrace {
namespace shm_ring {
namespace {

constexpr WriterID kWid = 21;

// Counts operator new calls of this thread while alive (and not paused).
class AllocationCounter {
 public:
  AllocationCounter() {
    g_allocations = 0;
    g_count_allocations = true;
  }
  ~AllocationCounter() { g_count_allocations = false; }
  uint64_t count() const { return g_allocations; }
  // The test reader allocates (vectors of fragments); it plays another
  // process, so its allocations are not the writer's.
  class Pause {
   public:
    Pause() : was_(g_count_allocations) { g_count_allocations = false; }
    ~Pause() { g_count_allocations = was_; }

   private:
    bool was_;
  };
};

// Keeps the allocation observable, so the compiler cannot elide it.
void* volatile g_escape = nullptr;

RingWriter::Options MakeOptions(
    Publication publication = Publication::kPerPacket) {
  RingWriter::Options o;
  o.writer_id = kWid;
  o.target_buffer = 3;
  o.publication = publication;
  return o;
}

void Append(RingWriter::Span* span, const char* s) {
  const size_t n = strlen(s);
  memcpy(span->wptr, s, n);
  span->wptr += n;
}

// The counter is live: it sees an allocation of this thread.
TEST(RingWriterAllocationTest, CounterSeesOperatorNew) {
#if !RT_ALLOC_COUNTING
  GTEST_SKIP() << "no operator new replacement under TSan";
#endif
  AllocationCounter counter;
  g_escape = new int(1);
  EXPECT_EQ(counter.count(), 1u);
  {
    AllocationCounter::Pause pause;
    delete static_cast<int*>(g_escape);
    g_escape = new int(2);
  }
  EXPECT_EQ(counter.count(), 1u);
  delete static_cast<int*>(g_escape);
  g_escape = nullptr;
}

// Spec 7 relocation in every shape (finalized suffix only, finalized and
// open, open only, during ContinuePacket), the Flush() move of an open
// fragment, and a dropped suffix: no operator new on the writer's thread
// (the reader's work runs with the counter paused).
TEST(RingWriterAllocationTest, RelocationPathDoesNotAllocate) {
#if !RT_ALLOC_COUNTING
  GTEST_SKIP() << "no operator new replacement under TSan";
#endif
  TestRing ring(256, 16);
  TestRingReader reader(ring.view());
  // Deferred publication: every relocation shape, several finalized
  // fragments included. (The default's shapes are in the next test.)
  RingWriter w(ring.view(),
               MakeOptions(Publication::kPerChunkRisksLossOnCrash));
  // Warm up whatever the first use might set up lazily.
  ASSERT_TRUE(WritePacket(&w, "warm"));
  ASSERT_TRUE(w.Flush(nullptr));
  ASSERT_EQ(reader.DrainAll(nullptr), ResolveResult::kNoData);
  auto scrape = [&reader] {
    AllocationCounter::Pause pause;
    ASSERT_EQ(reader.DrainAll(nullptr), ResolveResult::kNoData);
  };

  AllocationCounter counter;
  RingWriter::Span span;
  // (a) finalized suffix only: the publication CAS fails.
  ASSERT_TRUE(WritePacket(&w, "a1"));
  ASSERT_TRUE(WritePacket(&w, "a2"));
  scrape();
  ASSERT_TRUE(w.Flush(nullptr));
  EXPECT_EQ(w.stats().relocations, 1u);

  // (c) finalized suffix and open fragment: Flush() publishes around the
  // open fragment and loses to the scrape.
  ASSERT_TRUE(WritePacket(&w, "c1"));
  ASSERT_TRUE(w.BeginPacket(&span));
  Append(&span, "c2-open");
  scrape();
  ASSERT_TRUE(w.Flush(&span));
  EXPECT_EQ(w.stats().relocations, 2u);

  // (b) open fragment only: the replacement is scraped again.
  scrape();
  ASSERT_TRUE(w.Flush(&span));
  EXPECT_EQ(w.stats().relocations, 3u);
  Append(&span, "-more");
  w.EndPacket(span.wptr);

  // During ContinuePacket: the packet overflows a scraped chunk.
  ASSERT_TRUE(w.BeginPacket(&span));
  Append(&span, "big");
  scrape();
  std::string big;
  {
    AllocationCounter::Pause pause;
    big = Pattern(400, 'x');
  }
  ASSERT_TRUE(AppendToPacket(&w, &span, big));
  w.EndPacket(span.wptr);
  EXPECT_EQ(w.stats().relocations, 4u);
  ASSERT_TRUE(w.Flush(nullptr));

  // Flush() with a packet open publishes the finished one and the reader
  // consumes the chunk before the reuse CAS: the open fragment moves from
  // scratch to a new chunk.
  struct ConsumeOnFlushPublished {
    TestRingReader* reader;
    static void Hook(void* arg, RingWriter::TestStep step, uint32_t) {
      if (step != RingWriter::TestStep::kFlushPublished)
        return;
      AllocationCounter::Pause pause;
      auto* self = static_cast<ConsumeOnFlushPublished*>(arg);
      EXPECT_EQ(self->reader->DrainAll(nullptr), ResolveResult::kNoData);
    }
  } consume{&reader};
  ASSERT_TRUE(WritePacket(&w, "m1"));
  ASSERT_TRUE(w.BeginPacket(&span));
  Append(&span, "m2-open");
  w.SetStepHookForTesting(&ConsumeOnFlushPublished::Hook, &consume);
  ASSERT_TRUE(w.Flush(&span));
  w.SetStepHookForTesting(nullptr, nullptr);
  EXPECT_EQ(w.stats().open_fragments_moved, 1u);
  w.EndPacket(span.wptr);
  ASSERT_TRUE(w.Flush(nullptr));

  // No replacement: the suffix is dropped.
  ASSERT_TRUE(WritePacket(&w, "d1"));
  scrape();
  const uint32_t wp = ring.write_pos();
  ring.set_write_pos(ring.read_pos() + 16);  // the ring looks Full
  ASSERT_TRUE(w.Flush(nullptr));
  ring.set_write_pos(wp);
  EXPECT_EQ(w.stats().suffixes_dropped, 1u);

  EXPECT_EQ(w.stats().protocol_errors, 0u);
  EXPECT_EQ(counter.count(), 0u);
}

// The default publication's relocation shapes: the scrape found by the
// publication at the end of a packet, by Flush() with a packet open, by
// ContinuePacket(), and the suffix dropped at a packet's end.
TEST(RingWriterAllocationTest, PerPacketRelocationPathDoesNotAllocate) {
#if !RT_ALLOC_COUNTING
  GTEST_SKIP() << "no operator new replacement under TSan";
#endif
  TestRing ring(256, 16);
  TestRingReader reader(ring.view());
  RingWriter w(ring.view(), MakeOptions());
  ASSERT_TRUE(WritePacket(&w, "warm"));
  ASSERT_EQ(reader.DrainAll(nullptr), ResolveResult::kNoData);
  auto scrape = [&reader] {
    AllocationCounter::Pause pause;
    ASSERT_EQ(reader.DrainAll(nullptr), ResolveResult::kNoData);
  };
  std::string big;
  {
    AllocationCounter::Pause pause;
    big = Pattern(400, 'x');
  }

  AllocationCounter counter;
  RingWriter::Span span;
  ASSERT_TRUE(w.BeginPacket(&span));
  Append(&span, "e1");
  scrape();
  w.EndPacket(span.wptr);  // publication fails: relocate, publish
  EXPECT_EQ(w.stats().relocations, 1u);

  ASSERT_TRUE(w.BeginPacket(&span));
  Append(&span, "f1-open");
  scrape();
  ASSERT_TRUE(w.Flush(&span));  // the open fragment moves
  EXPECT_EQ(w.stats().relocations, 2u);
  w.EndPacket(span.wptr);

  ASSERT_TRUE(w.BeginPacket(&span));
  Append(&span, "g1");
  scrape();
  ASSERT_TRUE(AppendToPacket(&w, &span, big));  // ContinuePacket relocates
  w.EndPacket(span.wptr);
  EXPECT_EQ(w.stats().relocations, 3u);

  ASSERT_TRUE(w.BeginPacket(&span));
  Append(&span, "h1");
  scrape();
  const uint32_t wp = ring.write_pos();
  ring.set_write_pos(ring.read_pos() + 16);  // the ring looks Full
  w.EndPacket(span.wptr);
  ring.set_write_pos(wp);
  EXPECT_EQ(w.stats().suffixes_dropped, 1u);
  EXPECT_EQ(w.stats().ended_packets_dropped, 1u);

  EXPECT_EQ(w.stats().protocol_errors, 0u);
  EXPECT_EQ(counter.count(), 0u);
}

}  // namespace
}  // namespace shm_ring
}  // namespace ringtrace
