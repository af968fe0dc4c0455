/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The reader against a hostile producer: garbage state words, reserved
// states, non-zero Acknowledged payload bits, forged cursors, random
// directories, and a child process that scribbles over the shared mapping
// while the reader drains it. Nothing may crash, hang or read outside the
// mapping (ASan; the mapping ends at a PROT_NONE guard page), and every
// anomaly must be reported.

#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <new>
#include <string>
#include <vector>

#include "ringtrace/logging.h"
#include "src/tracing/service/ring_drainer/ring_reader.h"
#include "src/tracing/service/ring_drainer/test/fake_ring.h"
#include "src/tracing/service/ring_drainer/test/recording_sink.h"

namespace ringtrace {
namespace ring_drainer {
namespace {

using shm_ring::ChunkState;
using shm_ring::MakeAcknowledged;
using shm_ring::MakeDataWord;
using shm_ring::MakeFreeForWrap;
using shm_ring::StateWord;
using shm_ring::TestRing;
using test::FakeWriter;
using test::RecordingConsumer;

struct GarbageCase {
  const char* name;
  StateWord word;
  ProtocolErrorKind kind;
};

TEST(RingReaderAdversarialTest, GarbageStateWordsStopTheRingUntouched) {
  const std::vector<GarbageCase> cases = {
      {"free tag from the past", MakeFreeForWrap(0), ProtocolErrorKind::kNone},
      {"free tag from the future", MakeFreeForWrap(9),
       ProtocolErrorKind::kFreeTagMismatch},
      {"free tag max", MakeFreeForWrap(0x1fff'ffff),
       ProtocolErrorKind::kFreeTagMismatch},
      {"reserved 101", 0xa000'0000u, ProtocolErrorKind::kReservedState},
      {"reserved 110", 0xc123'4567u, ProtocolErrorKind::kReservedState},
      {"reserved 111", 0xffff'ffffu, ProtocolErrorKind::kReservedState},
      {"acknowledged + bit 0", MakeAcknowledged() | 1u,
       ProtocolErrorKind::kAcknowledgedPayloadBits},
      {"acknowledged + bit 28", MakeAcknowledged() | (1u << 28),
       ProtocolErrorKind::kAcknowledgedPayloadBits},
  };
  for (const GarbageCase& tc : cases) {
    SCOPED_TRACE(tc.name);
    // Resolve position 4 of a 4-chunk ring: chunk 0, expected tag 1.
    TestRing ring(256, 4);
    ring.SeedPositions(4);
    ring.set_word(0, tc.word);
    ring.set_write_pos(5);
    RingReader reader(ring.view(), 4);
    RecordingConsumer consumer;
    if (tc.kind == ProtocolErrorKind::kNone) {
      // "From the past" == FreeForWrap(0) but position 4 needs tag 1.
      EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kProtocolError);
      EXPECT_EQ(reader.protocol_error().kind,
                ProtocolErrorKind::kFreeTagMismatch);
    } else {
      EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kProtocolError);
      EXPECT_EQ(reader.protocol_error().kind, tc.kind);
    }
    EXPECT_TRUE(reader.stopped());
    EXPECT_EQ(reader.protocol_error().position, 4u);
    EXPECT_EQ(reader.protocol_error().word, tc.word);
    EXPECT_EQ(reader.stats().protocol_errors, 1u);
    // Word and read_pos untouched.
    EXPECT_EQ(ring.word(0), tc.word);
    EXPECT_EQ(ring.read_pos(), 4u);
    EXPECT_EQ(reader.read_pos(), 4u);
    // The ring stays stopped even if the word becomes valid again; the
    // reader does not look at the mapping any more.
    ring.set_word(0, MakeFreeForWrap(1));
    EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kProtocolError);
    EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
    EXPECT_EQ(reader.stats().positions_resolved, 0u);
    EXPECT_EQ(consumer.begins, 0u);
  }
}

TEST(RingReaderAdversarialTest, ForgedWritePos) {
  struct Case {
    uint32_t write_pos;
    bool error;
  };
  // read_pos is 8 in an 8-chunk ring.
  const std::vector<Case> cases = {
      {16, false},           // Exactly full: legal.
      {17, true},            // One beyond full.
      {7, true},             // Behind read_pos: distance 0xffffffff.
      {0x8000'0008u, true},  // Half the sequence space away.
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.write_pos);
    TestRing ring(256, 8);
    ring.SeedPositions(8);
    ring.set_write_pos(tc.write_pos);
    RingReader reader(ring.view(), 8);
    RecordingConsumer consumer;
    const ReadResult r = reader.ReadOne(&consumer);
    if (tc.error) {
      EXPECT_EQ(r, ReadResult::kProtocolError);
      EXPECT_EQ(reader.protocol_error().kind,
                ProtocolErrorKind::kWritePosOutOfRange);
      EXPECT_EQ(reader.protocol_error().word, tc.write_pos);
      EXPECT_EQ(reader.protocol_error().position, 8u);
      EXPECT_EQ(reader.read_pos(), 8u);
      EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
      EXPECT_EQ(ring.read_pos(), 8u);
    } else {
      EXPECT_EQ(r, ReadResult::kSkipped);  // Reserved, unclaimed.
    }
  }
}

TEST(RingReaderAdversarialTest, AcknowledgedReclaimRaceIsAProtocolError) {
  // Nobody but the reader may leave Acknowledged: a producer changing it
  // under the reader's CAS stops the ring with the word it found.
  TestRing ring(256, 2);
  ring.set_word(0, MakeAcknowledged());
  ring.set_write_pos(1);
  RingReader reader(ring.view(), 0);
  const StateWord forged =
      MakeDataWord(ChunkState::kComplete, 0, shm_ring::kNoChunkFlags, 1, 0x66);
  reader.SetTestHookForTesting(
      [&](RingReader::HookPoint p, uint32_t, uint32_t) {
        if (p == RingReader::HookPoint::kBeforeReclaimAcknowledged)
          ring.set_word(0, forged);
      });
  RecordingConsumer consumer;
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kProtocolError);
  EXPECT_EQ(reader.protocol_error().kind,
            ProtocolErrorKind::kAcknowledgedReclaimFailed);
  EXPECT_EQ(reader.protocol_error().word, forged);
  EXPECT_EQ(reader.protocol_error().position, 0u);
  EXPECT_EQ(reader.stats().protocol_errors, 1u);
  EXPECT_EQ(reader.stats().positions_resolved, 0u);
  // The reader wrote nothing: the word is the producer's, read_pos is as it
  // was (shared and private).
  EXPECT_EQ(ring.word(0), forged);
  EXPECT_EQ(ring.read_pos(), 0u);
  EXPECT_EQ(reader.read_pos(), 0u);
  EXPECT_TRUE(reader.stopped());
  EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kProtocolError);
  EXPECT_EQ(ring.word(0), forged);
}

// A consumer that lets the "producer" rewrite the chunk's directory and
// BufferID right after the reader validated them (BeginChunk runs between
// the directory copy and the payload copy).
class RewritingConsumer : public RecordingConsumer {
 public:
  RewritingConsumer(TestRing* ring, uint32_t index)
      : ring_(ring), index_(index) {}
  uint8_t* BeginChunk(const ChunkDescriptor& desc,
                      const uint32_t* sizes) override {
    uint8_t* c = ring_->chunk(index_);
    const uint32_t chunk_size = ring_->geometry().chunk_size;
    memset(c + chunk_size - 64, 0xff, 64);  // Every size entry: huge.
    c[shm_ring::kBufferIdOffset] = 0xee;
    c[shm_ring::kBufferIdOffset + 1] = 0xee;
    return RecordingConsumer::BeginChunk(desc, sizes);
  }

 private:
  TestRing* const ring_;
  const uint32_t index_;
};

TEST(RingReaderAdversarialTest, DirectoryIsNotReadAgainAfterValidation) {
  // The reader parses its private copy of the directory (spec 6.4): a
  // directory rewritten after validation changes nothing it copies, and the
  // BufferID it reports is the one it copied.
  for (uint32_t chunk_size : {256u, 4096u}) {
    SCOPED_TRACE(chunk_size);
    TestRing ring(chunk_size, 2);
    FakeWriter writer(ring.view(), 4, /*target=*/0x0102);
    writer.ReserveAndClaim();
    writer.Append("first");
    writer.Append("second!");
    ASSERT_TRUE(writer.Publish(true));
    RingReader reader(ring.view(), 0);
    RewritingConsumer consumer(&ring, 0);
    EXPECT_EQ(reader.ReadOne(&consumer), ReadResult::kEmitted);
    ASSERT_EQ(consumer.chunks.size(), 1u);
    EXPECT_EQ(consumer.chunks[0].fragments,
              (std::vector<std::string>{"first", "second!"}));
    EXPECT_EQ(consumer.chunks[0].desc.target_buffer, 0x0102);
    EXPECT_EQ(consumer.chunks[0].desc.payload_size, 12u);
    EXPECT_EQ(reader.stats().bytes_emitted, 12u);
    EXPECT_EQ(ring.word(0), MakeFreeForWrap(1));
  }
}

TEST(RingReaderAdversarialTest, OneRingStoppingDoesNotAffectAnother) {
  TestRing bad(256, 2);
  TestRing good(256, 2);
  bad.set_word(0, 0xe000'0000u);
  bad.set_write_pos(1);
  FakeWriter writer(good.view(), 1);
  writer.ReserveAndClaim();
  writer.Append("ok");
  ASSERT_TRUE(writer.Publish(true));
  RingReader bad_reader(bad.view(), 0);
  RingReader good_reader(good.view(), 0);
  RecordingConsumer consumer;
  EXPECT_EQ(bad_reader.ReadOne(&consumer), ReadResult::kProtocolError);
  EXPECT_EQ(good_reader.ReadOne(&consumer), ReadResult::kEmitted);
  EXPECT_EQ(consumer.chunks.size(), 1u);
}

// xorshift32: deterministic and cheap.
struct Rng {
  uint32_t s;
  uint32_t Next() {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
  }
};

// Checks the reader's books after a hostile run.
void ExpectConsistent(const RingReader& reader,
                      const RecordingConsumer& consumer,
                      uint32_t chunk_size) {
  const RingReaderStats& s = reader.stats();
  EXPECT_EQ(s.positions_resolved, s.holes + s.chunks_emitted);
  EXPECT_LE(s.protocol_errors, 1u);
  EXPECT_EQ(s.protocol_errors != 0, reader.stopped());
  EXPECT_EQ(s.chunks_emitted, consumer.chunks.size());
  uint64_t bytes = 0;
  for (const auto& c : consumer.chunks) {
    uint64_t sum = 0;
    for (const auto& f : c.fragments)
      sum += f.size();
    EXPECT_EQ(sum, c.desc.payload_size);
    EXPECT_LE(sum + c.fragments.size(), chunk_size);
    bytes += sum;
  }
  EXPECT_EQ(bytes, s.bytes_emitted);
}

TEST(RingReaderAdversarialTest, RandomMappingsNeverBreakTheReader) {
  // Fills the whole mapping with random bytes and plausible-looking words,
  // then drains. Deterministic: one fixed seed per round.
  for (uint32_t round = 0; round < 200; ++round) {
    Rng rng{0x9e37'79b9u ^ (round * 7919u + 1)};
    const uint32_t chunk_size = 256u << (round % 4);
    TestRing ring(chunk_size, 8);
    const size_t size = static_cast<size_t>(ring.geometry().MappingSize());
    uint8_t* base = ring.view().base();
    for (size_t i = 0; i < size; ++i)
      base[i] = static_cast<uint8_t>(rng.Next());
    // Bias towards words that get past the state dispatch.
    const uint32_t start = rng.Next();
    for (uint32_t k = 0; k < 8; ++k) {
      const uint32_t pos = start + k;
      const uint32_t idx = ring.geometry().ChunkIndex(pos);
      switch (rng.Next() % 5) {
        case 0:
          ring.set_word(idx, MakeFreeForWrap(ring.geometry().WrapCount(pos)));
          break;
        case 1:
        case 2:
          ring.set_word(
              idx,
              MakeDataWord(ChunkState::kComplete, rng.Next() % 4 == 0 ? 1 : 0,
                           shm_ring::ChunkFlags::FromBits(rng.Next()),
                           rng.Next(), static_cast<uint16_t>(rng.Next())));
          break;
        case 3:
          ring.set_word(
              idx,
              MakeDataWord(ChunkState::kAcquired, 0,
                           shm_ring::ChunkFlags::FromBits(rng.Next()),
                           rng.Next() % 8, static_cast<uint16_t>(rng.Next())));
          break;
        default:
          break;  // Keep the random word.
      }
    }
    ring.set_write_pos(start + rng.Next() % 12);
    RingReader reader(ring.view(), start);
    RecordingConsumer consumer;
    for (int i = 0; i < 16; ++i) {
      const ReadResult r = reader.ReadOne(&consumer);
      if (r == ReadResult::kNoData || r == ReadResult::kProtocolError)
        break;
    }
    ExpectConsistent(reader, consumer, chunk_size);
  }
}

// A ring in a memfd shared with a forked child. The mapping ends exactly at
// a PROT_NONE guard page, so a read past its end faults even without ASan
// (ASan does not instrument mmap()ed memory).
class SharedRing {
 public:
  explicit SharedRing(shm_ring::RingGeometry geometry) : geometry_(geometry) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_ = static_cast<size_t>(geometry.MappingSize());
    data_pages_ = (size_ + page - 1) / page * page;
    reserved_ = data_pages_ + 2 * page;
    uint8_t* area = static_cast<uint8_t*>(mmap(
        nullptr, reserved_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    RT_CHECK(area != MAP_FAILED);
    area_ = area;
    const int fd = memfd_create("ring_drainer_scribble", MFD_CLOEXEC);
    RT_CHECK(fd >= 0);
    RT_CHECK(ftruncate(fd, static_cast<off_t>(data_pages_)) == 0);
    void* data = mmap(area + page, data_pages_, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_FIXED, fd, 0);
    RT_CHECK(data == area + page);
    close(fd);
    // End-align: MappingSize() is a multiple of 64, so base stays aligned.
    base_ = area + page + data_pages_ - size_;
    view_ = shm_ring::RingView(base_, geometry_);
  }
  ~SharedRing() { munmap(area_, reserved_); }

  const shm_ring::RingView& view() const { return view_; }
  uint8_t* base() const { return base_; }
  size_t size() const { return size_; }

 private:
  shm_ring::RingGeometry geometry_;
  size_t size_ = 0;
  size_t data_pages_ = 0;
  size_t reserved_ = 0;
  uint8_t* area_ = nullptr;
  uint8_t* base_ = nullptr;
  shm_ring::RingView view_;
};

// Resets every state word and both cursors so that |pos| is next.
void RingReseed(const shm_ring::RingView& view, uint32_t pos) {
  const shm_ring::RingGeometry& g = view.geometry();
  for (uint32_t k = 0; k < g.num_chunks; ++k) {
    view.chunk_state(g.ChunkIndex(pos + k))
        ->store(MakeFreeForWrap(g.WrapCount(pos + k)),
                std::memory_order_relaxed);
  }
  view.read_pos()->store(pos, std::memory_order_relaxed);
  view.write_pos()->store(pos, std::memory_order_relaxed);
}

// The child: an honest-looking writer that turns into a vandal. It writes
// random words at state words, cursors, BufferIDs and directories, plus
// random bytes anywhere, until the parent raises |stop| (or a fixed cap).
[[noreturn]] void Scribble(const shm_ring::RingView& view,
                           size_t size,
                           std::atomic<uint32_t>* flags) {
  const shm_ring::RingGeometry& g = view.geometry();
  const uint32_t w = g.size_entry_width();
  Rng rng{0x1234'5678u};
  flags[1].store(1, std::memory_order_relaxed);  // Started.
  // Fixed work, so the test's duration does not depend on who gets the
  // CPU; yields now and then so the parent gets to drain on a busy machine.
  for (uint32_t iter = 0; iter < (1u << 19); ++iter) {
    if ((iter & 63) == 0) {
      if (flags[0].load(std::memory_order_relaxed))
        break;
      sched_yield();
    }
    // Aim near the reader, as a writer would.
    const uint32_t read_pos = view.read_pos()->load(std::memory_order_relaxed);
    const uint32_t r = rng.Next();
    const uint32_t pos = read_pos + (r >> 8) % 8;
    const uint32_t idx = g.ChunkIndex(pos);
    uint8_t* c = view.chunk(idx);
    switch (r % 10) {
      case 0:
      case 1: {
        // A plausible chunk: a directory of small sizes, then Complete or
        // Acquired (sometimes of an unknown format).
        const uint32_t n = 1 + (r >> 12) % 6;
        for (uint32_t i = 0; i < n; ++i)
          shm_ring::WriteSizeEntry(c + g.chunk_size - (i + 1) * w, w,
                                   rng.Next() % 90);
        const uint32_t word = MakeDataWord(
            (r >> 3) % 2 ? ChunkState::kComplete : ChunkState::kAcquired,
            (r >> 4) % 8 == 0 ? 1 : 0, shm_ring::ChunkFlags::FromBits(r >> 5),
            n, static_cast<uint16_t>(r >> 16));
        view.chunk_state(idx)->store(word, std::memory_order_release);
        break;
      }
      case 2:
        view.chunk_state(idx)->store(MakeFreeForWrap(g.WrapCount(pos)),
                                     std::memory_order_relaxed);
        break;
      case 3:
        view.chunk_state(idx)->store(
            r % 3 ? MakeAcknowledged()
                  : MakeDataWord(ChunkState::kRewriteRequested, 0,
                                 shm_ring::kNoChunkFlags, 1, 1),
            std::memory_order_relaxed);
        break;
      case 4:
        view.write_pos()->store(read_pos + 1 + (r >> 8) % g.num_chunks,
                                std::memory_order_relaxed);
        break;
      case 5:
        if ((r >> 8) % 64 == 0)  // Rarely: plain garbage in a state word.
          view.chunk_state(idx)->store(rng.Next(), std::memory_order_relaxed);
        break;
      case 6:
      case 7:
        // Directory bytes, anywhere in the last 64 bytes of the chunk.
        c[g.chunk_size - 1 - (r >> 8) % 64] = static_cast<uint8_t>(r >> 24);
        break;
      default:
        view.base()[rng.Next() % size] = static_cast<uint8_t>(r);
        break;
    }
  }
  _exit(0);
}

TEST(RingReaderAdversarialTest, ScribblingProducerInChildProcess) {
  SharedRing ring(shm_ring::RingGeometry(512, 16));
  // A separate shared page for the stop flag.
  void* flag_page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(flag_page, MAP_FAILED);
  // flags[0]: stop (parent -> child); flags[1]: started (child -> parent).
  auto* flags = new (flag_page) std::atomic<uint32_t>[2]();

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0)
    Scribble(ring.view(), ring.size(), flags);
  // Bounded wait for the child to start scribbling.
  for (int i = 0; i < 100000 && !flags[1].load(std::memory_order_relaxed); ++i)
    usleep(10);

  uint64_t resolved = 0;
  uint64_t anomalies = 0;
  uint64_t stops = 0;
  // Bounded in rounds; ends early once every kind of outcome was seen often
  // enough, or some rounds after the child finished its fixed work.
  bool child_exited = false;
  int status = 0;
  uint32_t rounds_after_exit = 0;
  for (uint32_t round = 0; round < 100000; ++round) {
    if (resolved >= 1000 && anomalies >= 8 && stops >= 8)
      break;
    if (!child_exited && (round & 63) == 0)
      child_exited = waitpid(child, &status, WNOHANG) == child;
    if (child_exited && ++rounds_after_exit > 1000)
      break;
    // A fresh reader per round (as if the service re-attached): the old one
    // may be stopped. Its start position is the service's choice; this test
    // picks the value the mapping shows so that the child's writes land
    // near it (the reader itself never loads read_pos).
    RingReader reader(ring.view(),
                      ring.view().read_pos()->load(std::memory_order_relaxed));
    RecordingConsumer consumer;
    for (int i = 0; i < 64; ++i) {
      const ReadResult r = reader.ReadOne(&consumer);
      if (r == ReadResult::kNoData)
        sched_yield();  // Let the child (on a shared core) make a mess.
      if (r == ReadResult::kNoData || r == ReadResult::kProtocolError)
        break;
    }
    ExpectConsistent(reader, consumer, 512);
    const RingReaderStats& s = reader.stats();
    resolved += s.positions_resolved;
    anomalies += s.malformed_directories + s.unknown_formats;
    if (reader.stopped()) {
      ++stops;
      EXPECT_NE(reader.protocol_error().kind, ProtocolErrorKind::kNone);
      // Re-create the ring around the reader's position, as a service
      // would after tearing down a broken producer, so the next rounds get
      // past the first state word again.
      RingReseed(ring.view(), reader.read_pos());
    }
  }
  flags[0].store(1, std::memory_order_relaxed);
  if (!child_exited) {
    ASSERT_EQ(waitpid(child, &status, 0), child);
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  munmap(flag_page, 4096);
  // The vandal was noticed.
  EXPECT_GT(stops + anomalies, 0u);
  RT_LOG("scribbler: %llu positions resolved, %llu anomalies, %llu stops",
         static_cast<unsigned long long>(resolved),
         static_cast<unsigned long long>(anomalies),
         static_cast<unsigned long long>(stops));
}

}  // namespace
}  // namespace ring_drainer
}  // namespace ringtrace
