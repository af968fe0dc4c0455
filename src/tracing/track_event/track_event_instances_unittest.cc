/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Categories for this test only (see RT_TRACK_EVENT_NAMESPACE).
#define RT_TRACK_EVENT_NAMESPACE rt_track_event_instances_unittest_categories

#include "src/tracing/track_event/track_event_instances.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "protos/perfetto/trace/trace_packet.pb.h"
#include "ringtrace/track_event.h"
#include "src/tracing/track_event/test/sequence_reader.h"

RT_DEFINE_CATEGORIES("inst.a",
                     "inst.b",
                     "inst.common",
                     "inst.a.verbose",
                     ringtrace::track_event::Category("inst.slow")
                         .SetDescription("Expensive events")
                         .SetTags("slow", "inst.tag"));

namespace ringtrace {
namespace track_event {
namespace {

namespace pb = perfetto::protos;

// An instance of |enabled| only: disabled_categories "*" unless given
// (Perfetto's "enable a specific category").
InstanceConfig Config(std::vector<std::string> enabled,
                      WriterFactory factory,
                      std::vector<std::string> disabled = {"*"}) {
  InstanceConfig config;
  config.categories.enabled_categories = std::move(enabled);
  config.categories.disabled_categories = std::move(disabled);
  config.new_writer = std::move(factory);
  return config;
}

InstanceHandle Start(InstanceConfig config) {
  base::Status status;
  InstanceHandle handle = StartInstance(std::move(config), &status);
  EXPECT_TRUE(handle.valid()) << status.message();
  return handle;
}

// The events of one sequence (TrackEvent packets only).
std::vector<pb::TrackEvent> Events(const RingCapture::Sequence& sequence) {
  std::vector<pb::TrackEvent> events;
  for (const pb::TracePacket& p : sequence.packets) {
    if (p.has_track_event())
      events.push_back(p.track_event());
  }
  return events;
}

// Every sequence starts with the process descriptor (CLEARED) and the
// thread descriptor; returns the thread's tid.
int64_t CheckSequenceStart(const RingCapture::Sequence& sequence) {
  EXPECT_GE(sequence.packets.size(), 2u);
  if (sequence.packets.size() < 2)
    return 0;
  EXPECT_EQ(
      sequence.packets[0].sequence_flags(),
      static_cast<uint32_t>(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED));
  EXPECT_EQ(sequence.packets[0].track_descriptor().uuid(), ProcessTrackUuid());
  EXPECT_TRUE(sequence.packets[1].track_descriptor().has_thread());
  return sequence.packets[1].track_descriptor().thread().tid();
}

int64_t Tid() {
  return static_cast<int64_t>(syscall(SYS_gettid));
}

class TrackEventInstancesTest : public testing::Test {
 protected:
  void SetUp() override {
    SetCategoriesEnabled("-*");
    ASSERT_EQ(RunningInstances(), 0u);
  }
  void TearDown() override { EXPECT_EQ(RunningInstances(), 0u); }
};

// The rule itself is category_matching_unittest.cc's; here its inputs:
// the declared tags and the four lists of the instance's config.
TEST_F(TrackEventInstancesTest, DeclaredTagsAndTheFourListsDecideTheMask) {
  RingCapture capture;
  // No lists: everything but the slow category (of this file's; other
  // files' categories are in the process too).
  const InstanceHandle all = Start(Config({}, capture.Factory(1), {}));
  EXPECT_EQ(CategoryMask("inst.a"), 1u << all.slot);
  EXPECT_EQ(CategoryMask("inst.a.verbose"), 1u << all.slot);
  EXPECT_EQ(CategoryMask("inst.slow"), 0u);
  InstanceConfig slow = Config({}, capture.Factory(2), {"*"});
  slow.categories.enabled_tags = {"slow"};
  const InstanceHandle slow_only = Start(std::move(slow));
  EXPECT_EQ(CategoryMask("inst.a"), 1u << all.slot);
  EXPECT_EQ(CategoryMask("inst.slow"), 1u << slow_only.slot);
  InstanceConfig by_tag = Config({}, capture.Factory(3), {});
  by_tag.categories.disabled_tags = {"inst.*"};
  const InstanceHandle not_by_tag = Start(std::move(by_tag));
  EXPECT_EQ(CategoryMask("inst.slow"), 1u << slow_only.slot);
  EXPECT_EQ(CategoryMask("inst.b"), (1u << all.slot) | (1u << not_by_tag.slot));
  StopInstance(all);
  StopInstance(slow_only);
  StopInstance(not_by_tag);
  EXPECT_EQ(CategoryMask("inst.slow"), 0u);
}

TEST_F(TrackEventInstancesTest, DeclaredCategoriesListsNamesDescriptionsTags) {
  const std::vector<Category> declared = DeclaredCategories();
  const Category* slow = nullptr;
  size_t inst_a = 0;
  for (const Category& c : declared) {
    if (std::string(c.name()) == "inst.slow")
      slow = &c;
    inst_a += std::string(c.name()) == "inst.a";
  }
  EXPECT_EQ(inst_a, 1u);
  ASSERT_NE(slow, nullptr);
  EXPECT_STREQ(slow->description(), "Expensive events");
  ASSERT_EQ(slow->tag_count(), 2u);
  EXPECT_STREQ(slow->tag(0), "slow");
  EXPECT_STREQ(slow->tag(1), "inst.tag");
  // A dynamic category is not declared.
  RT_TRACE_INSTANT_DYNAMIC(std::string("inst.dynamic.unlisted"), "X");
  for (const Category& c : DeclaredCategories())
    EXPECT_STRNE(c.name(), "inst.dynamic.unlisted");
}

TEST_F(TrackEventInstancesTest, StartSetsTheInstanceBitsAndStopClearsThem) {
  RingCapture capture;
  SetCategoriesEnabled("inst.b");
  const InstanceHandle a = Start(Config(
      {"inst.a*", "inst.common"}, capture.Factory(1), {"inst.a.verbose", "*"}));
  const InstanceHandle b = Start(Config({"inst.b"}, capture.Factory(2)));
  ASSERT_NE(a.slot, b.slot);
  const uint32_t bit_a = 1u << a.slot;
  const uint32_t bit_b = 1u << b.slot;
  EXPECT_EQ(CategoryMask("inst.a"), bit_a);
  EXPECT_EQ(CategoryMask("inst.common"), bit_a);
  EXPECT_EQ(CategoryMask("inst.a.verbose"), 0u);
  EXPECT_EQ(CategoryMask("inst.b"), bit_b | kStaticBit);
  EXPECT_EQ(RunningInstances(), 2u);
  StopInstance(a);
  EXPECT_EQ(CategoryMask("inst.a"), 0u);
  EXPECT_EQ(CategoryMask("inst.b"), bit_b | kStaticBit);
  StopInstance(a);  // a no-op
  StopInstance(b);
  EXPECT_EQ(CategoryMask("inst.b"), kStaticBit);
  SetCategoriesEnabled("-*");
  EXPECT_EQ(CategoryMask("inst.b"), 0u);
  EXPECT_EQ(capture.writers_created(), 0u);  // nobody traced
}

// IsCategoryEnabled() answers for every enabler, as the macros do: the
// static spec or any running instance.
TEST_F(TrackEventInstancesTest, IsCategoryEnabledWhileAnInstanceEnablesIt) {
  RingCapture capture;
  EXPECT_FALSE(IsCategoryEnabled("inst.a"));
  const InstanceHandle a = Start(Config({"inst.a"}, capture.Factory(1)));
  EXPECT_TRUE(IsCategoryEnabled("inst.a"));
  EXPECT_FALSE(IsCategoryEnabled("inst.b"));
  const InstanceHandle b =
      Start(Config({"inst.a", "inst.b"}, capture.Factory(2)));
  StopInstance(a);
  EXPECT_TRUE(IsCategoryEnabled("inst.a"));  // b still enables it
  EXPECT_TRUE(IsCategoryEnabled("inst.b"));
  StopInstance(b);
  EXPECT_FALSE(IsCategoryEnabled("inst.a"));
  EXPECT_FALSE(IsCategoryEnabled("inst.b"));
  SetCategoriesEnabled("inst.b");
  EXPECT_TRUE(IsCategoryEnabled("inst.b"));
  SetCategoriesEnabled("-*");
  EXPECT_FALSE(IsCategoryEnabled("inst.b"));
}

// RT_TRACE_EVENT_CATEGORY_ENABLED sees the instance bits as the event
// macros do.
TEST_F(TrackEventInstancesTest, CategoryEnabledMacroSeesInstances) {
  RingCapture capture;
  EXPECT_FALSE(RT_TRACE_EVENT_CATEGORY_ENABLED("inst.a"));
  const InstanceHandle a = Start(Config({"inst.a"}, capture.Factory(1)));
  EXPECT_TRUE(RT_TRACE_EVENT_CATEGORY_ENABLED("inst.a"));
  EXPECT_FALSE(RT_TRACE_EVENT_CATEGORY_ENABLED("inst.b"));
  StopInstance(a);
  EXPECT_FALSE(RT_TRACE_EVENT_CATEGORY_ENABLED("inst.a"));
}

// Flush() publishes what the thread wrote into its binding and into its
// instance writer while both writers live on. The writers defer
// publication, so without the Flush() the reader would see neither event.
TEST_F(TrackEventInstancesTest, FlushPublishesTheThreadsWriters) {
  constexpr auto kDeferred = shm_ring::Publication::kPerChunkRisksLossOnCrash;
  RingCapture capture;
  base::Status status;
  std::unique_ptr<shm_ring::TraceWriterV2> bound =
      capture.Factory(1, kDeferred)(&status);
  ScopedThreadWriter bind(bound.get());
  SetCategoriesEnabled("inst.b");
  const InstanceHandle a =
      Start(Config({"inst.a"}, capture.Factory(2, kDeferred)));
  RT_TRACE_INSTANT("inst.b", "ToBinding");
  RT_TRACE_INSTANT("inst.a", "ToInstance");
  Flush();
  const auto sequences = capture.Drain();
  std::map<shm_ring::BufferID, std::vector<std::string>> names;
  for (const auto& [id, sequence] : sequences) {
    for (const pb::TrackEvent& e : Events(sequence))
      names[sequence.buffer].push_back(e.name());
  }
  EXPECT_EQ(names[1], std::vector<std::string>{"ToBinding"});
  EXPECT_EQ(names[2], std::vector<std::string>{"ToInstance"});
  StopInstance(a);
  ReleaseStoppedInstanceWriters();
  SetCategoriesEnabled("-*");
}

TEST_F(TrackEventInstancesTest, AllSlotsInUseFailsWithAStatus) {
  RingCapture capture;
  std::vector<InstanceHandle> handles;
  for (uint32_t i = 0; i < kMaxInstances; i++)
    handles.push_back(Start(Config({"inst.a"}, capture.Factory(1))));
  base::Status status;
  InstanceConfig extra = Config({"inst.a"}, capture.Factory(1));
  extra.instance_id = 77;
  EXPECT_FALSE(StartInstance(std::move(extra), &status).valid());
  EXPECT_NE(status.message().find("instance 77"), std::string::npos)
      << status.message();
  uint32_t all_bits = 0;
  for (const InstanceHandle& h : handles)
    all_bits |= 1u << h.slot;
  EXPECT_EQ(CategoryMask("inst.a"), all_bits);
  EXPECT_EQ(all_bits, ((1u << (kMaxInstances + 1)) - 1) & ~kStaticBit);
  for (const InstanceHandle& h : handles)
    StopInstance(h);
}

// Two instances enabling different categories, three threads: each
// instance's sequences (one per thread, in its own buffer) hold exactly its
// categories; a category both enable is written once into each.
TEST_F(TrackEventInstancesTest, TwoInstancesGetExactlyTheirCategories) {
  constexpr int kThreads = 3;
  constexpr int kEvents = 50;  // below the 16 KiB byte clear period
  RingCapture capture;
  const TrackEventStats before = Stats();
  const InstanceHandle a =
      Start(Config({"inst.a", "inst.common"}, capture.Factory(1)));
  const InstanceHandle b =
      Start(Config({"inst.b*", "inst.common"}, capture.Factory(2)));
  std::vector<std::thread> threads;
  std::vector<int64_t> tids(kThreads);
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&tids, t] {
      tids[t] = Tid();
      for (int i = 0; i < kEvents; i++) {
        RT_TRACE_EVENT("inst.a", "A", "i", i);
        RT_TRACE_INSTANT("inst.b", "B", "i", i);
        RT_TRACE_COUNTER("inst.common", "common", i);
        RT_TRACE_INSTANT("inst.a.verbose", "Never");
      }
    });
  }
  for (std::thread& thread : threads)
    thread.join();
  StopInstance(a);
  StopInstance(b);
  const TrackEventStats after = Stats();
  EXPECT_EQ(after.events_without_writer, before.events_without_writer);
  EXPECT_EQ(after.instance_writers_created - before.instance_writers_created,
            2u * kThreads);
  EXPECT_EQ(after.instance_writers_released - before.instance_writers_released,
            2u * kThreads);

  const std::map<shm_ring::WriterID, RingCapture::Sequence> sequences =
      capture.Drain();
  ASSERT_EQ(sequences.size(), 2u * kThreads);
  std::map<shm_ring::BufferID, std::set<int64_t>> tids_by_buffer;
  for (const auto& [id, sequence] : sequences) {
    const int64_t tid = CheckSequenceStart(sequence);
    // One generation: a sequence created by an event that writes into two
    // instances does not clear again at that event.
    EXPECT_EQ(sequence.clears, 1) << id;
    EXPECT_TRUE(tids_by_buffer[sequence.buffer].insert(tid).second);
    std::map<std::string, int> names;  // event name (or counter) -> count
    for (const pb::TrackEvent& e : Events(sequence)) {
      if (e.type() == pb::TrackEvent::TYPE_SLICE_END) {
        EXPECT_EQ(e.categories_size(), 0);  // an end names nothing
        names["end"]++;
        continue;
      }
      ASSERT_EQ(e.categories_size(), 1);
      if (e.type() == pb::TrackEvent::TYPE_COUNTER) {
        EXPECT_EQ(e.categories(0), "inst.common");
        names["counter"]++;
        continue;
      }
      EXPECT_EQ(e.categories(0), e.name() == "A" ? "inst.a" : "inst.b");
      names[e.name()]++;
    }
    if (sequence.buffer == 1) {
      EXPECT_EQ(names,
                (std::map<std::string, int>{
                    {"A", kEvents}, {"end", kEvents}, {"counter", kEvents}}))
          << id;
    } else {
      EXPECT_EQ(sequence.buffer, 2u);
      EXPECT_EQ(names, (std::map<std::string, int>{{"B", kEvents},
                                                   {"counter", kEvents}}))
          << id;
    }
  }
  const std::set<int64_t> all_tids(tids.begin(), tids.end());
  EXPECT_EQ(tids_by_buffer[1], all_tids);
  EXPECT_EQ(tids_by_buffer[2], all_tids);
}

// A thread's writers are flushed and released when it exits: its last
// events are in the trace, the writer count drops back, and once the
// instance stopped too the instance (and its keep_alive, the producer in an
// app) is released.
TEST_F(TrackEventInstancesTest, ThreadExitFlushesAndReleasesItsWriters) {
  RingCapture capture;
  auto producer_stand_in = std::make_shared<int>(0);
  std::weak_ptr<int> watch = producer_stand_in;
  InstanceConfig config = Config({"inst.a"}, capture.Factory(1));
  config.keep_alive = std::move(producer_stand_in);
  const InstanceHandle a = Start(std::move(config));
  const TrackEventStats before = Stats();
  std::thread thread([] {
    for (int i = 0; i < 10; i++)
      RT_TRACE_INSTANT("inst.a", "Step", "i", i);
    RT_TRACE_INSTANT("inst.a", "Last");
  });
  thread.join();
  const TrackEventStats after = Stats();
  EXPECT_EQ(after.instance_writers_created - before.instance_writers_created,
            1u);
  EXPECT_EQ(after.instance_writers_released - before.instance_writers_released,
            1u);
  EXPECT_FALSE(watch.expired());  // the instance still runs
  StopInstance(a);
  EXPECT_TRUE(watch.expired());  // no writer holds it: released at stop

  const auto sequences = capture.Drain();
  ASSERT_EQ(sequences.size(), 1u);
  const std::vector<pb::TrackEvent> events = Events(sequences.begin()->second);
  ASSERT_EQ(events.size(), 11u);
  EXPECT_EQ(events.back().name(), "Last");
}

// A writer of a stopped instance that an idle thread still holds keeps the
// instance's keep_alive until the thread's next event, which releases it.
TEST_F(TrackEventInstancesTest, StaleWriterIsReleasedAtTheNextEvent) {
  RingCapture capture;
  auto stand_in = std::make_shared<int>(0);
  std::weak_ptr<int> watch = stand_in;
  InstanceConfig config = Config({"inst.a"}, capture.Factory(1));
  config.keep_alive = std::move(stand_in);
  const InstanceHandle a = Start(std::move(config));
  RT_TRACE_INSTANT("inst.a", "OnMain");
  StopInstance(a);
  EXPECT_FALSE(watch.expired());  // this thread's writer still holds it
  const TrackEventStats before = Stats();
  // Any instance event of this thread sweeps stale writers.
  const InstanceHandle b = Start(Config({"inst.b"}, capture.Factory(2)));
  RT_TRACE_INSTANT("inst.b", "Sweeps");
  EXPECT_TRUE(watch.expired());
  const TrackEventStats after = Stats();
  EXPECT_EQ(after.instance_writers_released - before.instance_writers_released,
            1u);
  StopInstance(b);
  RT_TRACE_INSTANT("inst.a", "Disabled");  // mask 0: nothing at all
  const InstanceHandle c = Start(Config({"inst.common"}, capture.Factory(3)));
  RT_TRACE_INSTANT("inst.common", "SweepsB");
  StopInstance(c);
  ReleaseStoppedInstanceWriters();
  EXPECT_EQ(
      Stats().instance_writers_released - before.instance_writers_released, 3u);
  const auto sequences = capture.Drain();
  ASSERT_EQ(sequences.size(), 3u);
  for (const auto& [id, sequence] : sequences) {
    const std::vector<pb::TrackEvent> events = Events(sequence);
    ASSERT_EQ(events.size(), 1u) << id;
    EXPECT_EQ(events[0].name(), sequence.buffer == 1   ? "OnMain"
                                : sequence.buffer == 2 ? "Sweeps"
                                                       : "SweepsB");
  }
}

// Threads emit numbered events while the instance stops. Every event that
// ended before the stop began is in the trace, no event that began after
// the stop returned is, and each thread's sequence is a gap-free prefix of
// its numbers: both outcomes are reached on every thread.
TEST_F(TrackEventInstancesTest, StopWhileThreadsEmit) {
  constexpr int kThreads = 3;
  constexpr int kBeforeStop = 100;  // events each thread ends before the stop
  constexpr int kAfterStop = 100;   // events each begins after it returned
  // The ring is not drained while the threads run: past this many events a
  // thread waits for the stop (so the ring cannot fill).
  constexpr int kMaxEvents = 20000;
  RingCapture capture;
  const TrackEventStats before = Stats();
  const InstanceHandle a = Start(Config({"inst.a"}, capture.Factory(1)));
  std::atomic<int> completed[kThreads] = {};
  std::atomic<bool> stopped{false};
  int first_after_stop[kThreads] = {};
  int64_t tids[kThreads] = {};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      tids[t] = Tid();
      int after = 0;
      for (int i = 0; after < kAfterStop; i++) {
        if (i == kMaxEvents) {
          while (!stopped.load(std::memory_order_acquire))
            std::this_thread::yield();
        }
        // Acquire: pairs with the release store after StopInstance returned.
        const bool stop_returned = stopped.load(std::memory_order_acquire);
        if (stop_returned && after++ == 0)
          first_after_stop[t] = i;
        RT_TRACE_INSTANT("inst.a", "N", "i", i);
        // Release: the main thread's acquire load knows event i ended.
        completed[t].store(i + 1, std::memory_order_release);
      }
    });
  }
  int ended_before_stop[kThreads] = {};
  for (int t = 0; t < kThreads; t++) {
    while (completed[t].load(std::memory_order_acquire) < kBeforeStop)
      std::this_thread::yield();
  }
  for (int t = 0; t < kThreads; t++)
    ended_before_stop[t] = completed[t].load(std::memory_order_acquire);
  StopInstance(a);
  stopped.store(true, std::memory_order_release);
  for (std::thread& thread : threads)
    thread.join();
  EXPECT_EQ(Stats().events_without_writer, before.events_without_writer);

  const auto sequences = capture.Drain();
  ASSERT_EQ(sequences.size(), static_cast<size_t>(kThreads));
  for (const auto& [id, sequence] : sequences) {
    const int64_t tid = CheckSequenceStart(sequence);
    int t = 0;
    while (t < kThreads && tids[t] != tid)
      t++;
    ASSERT_LT(t, kThreads);
    const std::vector<pb::TrackEvent> events = Events(sequence);
    for (size_t i = 0; i < events.size(); i++) {
      ASSERT_EQ(events[i].debug_annotations(0).int_value(),
                static_cast<int64_t>(i));
    }
    EXPECT_GE(static_cast<int>(events.size()), ended_before_stop[t]);
    EXPECT_LE(static_cast<int>(events.size()), first_after_stop[t]);
    EXPECT_GE(ended_before_stop[t], kBeforeStop);
  }
}

// A stop waits for an event of the instance that is in flight (here: a
// thread inside its first event, blocked while its writer is created) and
// for nobody else: an idle thread holding a writer of the instance does not
// delay it (else this test would hang).
TEST_F(TrackEventInstancesTest, StopWaitsForAnEventInFlightOnly) {
  RingCapture capture;
  std::mutex mutex;
  std::condition_variable cv;
  bool block_next = false;  // the factory's next call blocks
  bool in_factory = false;
  bool release_factory = false;
  bool idle_ready = false;
  bool release_idle = false;
  WriterFactory inner = capture.Factory(1);
  WriterFactory blocking = [&](base::Status* status) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      if (block_next) {
        block_next = false;
        in_factory = true;
        cv.notify_all();
        cv.wait(lock, [&] { return release_factory; });
      }
    }
    return inner(status);
  };
  const InstanceHandle a = Start(Config({"inst.a"}, blocking));
  const uint32_t bit = 1u << a.slot;
  std::thread idle([&] {
    RT_TRACE_INSTANT("inst.a", "IdleFirst");
    std::unique_lock<std::mutex> lock(mutex);
    idle_ready = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release_idle; });
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return idle_ready; });
    block_next = true;
  }
  std::thread busy([&] {
    RT_TRACE_INSTANT("inst.a", "InFlight");   // blocks in the factory
    RT_TRACE_INSTANT("inst.a", "AfterStop");  // begins after S1
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return in_factory; });
  }
  std::atomic<bool> stop_returned{false};
  std::thread stopper([&] {
    StopInstance(a);
    stop_returned.store(true, std::memory_order_release);
  });
  // The mask bit is cleared right after the generation (S1), under the
  // registry mutex that CategoryMask() takes: once it is 0, S1 happened.
  while (CategoryMask("inst.a") & bit)
    std::this_thread::yield();
  // The stop cannot return while "InFlight" is in flight. (A broken stop
  // would be caught only if it returned within this window.)
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(stop_returned.load(std::memory_order_acquire));
  {
    std::lock_guard<std::mutex> lock(mutex);
    release_factory = true;
  }
  cv.notify_all();
  stopper.join();  // returns although |idle| is still parked
  busy.join();
  {
    std::lock_guard<std::mutex> lock(mutex);
    release_idle = true;
  }
  cv.notify_all();
  idle.join();

  const auto sequences = capture.Drain();
  ASSERT_EQ(sequences.size(), 2u);
  std::multiset<std::string> names;
  for (const auto& [id, sequence] : sequences) {
    CheckSequenceStart(sequence);
    for (const pb::TrackEvent& e : Events(sequence))
      names.insert(e.name());
  }
  EXPECT_EQ(names, (std::multiset<std::string>{"IdleFirst", "InFlight"}));
}

// An instance stopped and started again (same slot, new generation) gets a
// new writer on each thread: a new sequence that starts with
// SEQ_INCREMENTAL_STATE_CLEARED and interns its strings afresh.
TEST_F(TrackEventInstancesTest, RestartedInstanceGetsAFreshSequence) {
  RingCapture capture;
  const TrackEventStats before = Stats();
  std::thread thread([&capture] {
    const InstanceHandle first = Start(Config({"inst.a"}, capture.Factory(1)));
    RT_TRACE_INSTANT("inst.a", "Same", "k", 1);
    RT_TRACE_INSTANT("inst.a", "Same", "k", 2);
    StopInstance(first);
    const InstanceHandle second = Start(Config({"inst.a"}, capture.Factory(1)));
    EXPECT_EQ(second.slot, first.slot);
    EXPECT_GT(second.generation, first.generation);
    RT_TRACE_INSTANT("inst.a", "Same", "k", 3);
    StopInstance(second);
  });
  thread.join();
  EXPECT_EQ(Stats().instance_writers_created - before.instance_writers_created,
            2u);
  EXPECT_EQ(
      Stats().instance_writers_released - before.instance_writers_released, 2u);
  const auto sequences = capture.Drain();
  ASSERT_EQ(sequences.size(), 2u);
  const RingCapture::Sequence& old_sequence = sequences.begin()->second;
  const RingCapture::Sequence& new_sequence = sequences.rbegin()->second;
  EXPECT_EQ(old_sequence.clears, 1);
  EXPECT_EQ(new_sequence.clears, 1);
  CheckSequenceStart(old_sequence);
  CheckSequenceStart(new_sequence);
  ASSERT_EQ(Events(old_sequence).size(), 2u);
  ASSERT_EQ(Events(new_sequence).size(), 1u);
  // The new sequence defines the name again in its own interned_data.
  const pb::TracePacket& first_event = new_sequence.packets[2];
  ASSERT_TRUE(first_event.has_track_event());
  ASSERT_EQ(first_event.interned_data().event_names_size(), 1);
  EXPECT_EQ(first_event.interned_data().event_names(0).name(), "Same");
  EXPECT_EQ(first_event.track_event().debug_annotations(0).int_value(), 3);
}

// A slice's end goes where its begin went and nowhere else: not to an
// instance started inside the slice, not to one stopped inside it.
TEST_F(TrackEventInstancesTest, SliceEndGoesOnlyWhereItsBeginWent) {
  RingCapture capture;
  std::thread thread([&capture] {
    const InstanceHandle a = Start(Config({"inst.a"}, capture.Factory(1)));
    InstanceHandle b;
    InstanceHandle c;
    {
      RT_TRACE_EVENT("inst.a", "Outer");
      b = Start(Config({"inst.a"}, capture.Factory(2)));
      {
        RT_TRACE_EVENT("inst.a", "Inner");  // into a and b
        c = Start(Config({"inst.a"}, capture.Factory(3)));
        RT_TRACE_INSTANT("inst.a", "Mark");  // a, b and c
        StopInstance(b);
      }  // Inner's end: a only (b stopped, c began after)
    }    // Outer's end: a only
    RT_TRACE_INSTANT("inst.a", "Done");  // a and c
    StopInstance(a);
    StopInstance(c);
  });
  thread.join();
  const auto sequences = capture.Drain();
  ASSERT_EQ(sequences.size(), 3u);
  std::map<shm_ring::BufferID, std::vector<std::string>> got;
  for (const auto& [id, sequence] : sequences) {
    for (const pb::TrackEvent& e : Events(sequence)) {
      got[sequence.buffer].push_back(
          e.type() == pb::TrackEvent::TYPE_SLICE_END ? "end" : e.name());
    }
  }
  using V = std::vector<std::string>;
  EXPECT_EQ(got[1], (V{"Outer", "Inner", "Mark", "end", "end", "Done"}));
  EXPECT_EQ(got[2], (V{"Inner", "Mark"}));
  EXPECT_EQ(got[3], (V{"Mark", "Done"}));
}

// A factory that has no writer to give: the thread asks once, and each of
// its events for the instance is counted, exactly.
TEST_F(TrackEventInstancesTest, NoWriterToBeHadIsCountedPerEvent) {
  std::atomic<int> calls{0};
  WriterFactory failing = [&calls](base::Status* status) {
    calls.fetch_add(1, std::memory_order_relaxed);
    *status = base::ErrStatus("no writer IDs left");
    return std::unique_ptr<shm_ring::TraceWriterV2>();
  };
  const InstanceHandle a = Start(Config({"inst.a"}, failing));
  const TrackEventStats before = Stats();
  std::thread thread([] {
    for (int i = 0; i < 5; i++)
      RT_TRACE_INSTANT("inst.a", "Lost");
    RT_TRACE_COUNTER("inst.a", "lost", 1);
  });
  thread.join();
  StopInstance(a);
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(Stats().events_without_writer - before.events_without_writer, 6u);
  EXPECT_EQ(Stats().instance_writers_created, before.instance_writers_created);
}

// The instance's clear_period_ms drives its sequences' periodic clears.
TEST_F(TrackEventInstancesTest, ClearPeriodComesFromTheInstance) {
  RingCapture capture;
  InstanceConfig config = Config({"inst.a"}, capture.Factory(1));
  config.clear_period_ms = 1;
  const InstanceHandle a = Start(std::move(config));
  std::thread thread([] {
    RT_TRACE_INSTANT("inst.a", "E");
    for (int i = 0; i < 4; i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      RT_TRACE_INSTANT("inst.a", "E");  // a clear before each
    }
  });
  thread.join();
  StopInstance(a);
  const auto sequences = capture.Drain();
  ASSERT_EQ(sequences.size(), 1u);
  EXPECT_GE(sequences.begin()->second.clears, 5);
  EXPECT_EQ(Events(sequences.begin()->second).size(), 5u);
}

// Bit 0 (SetCategoriesEnabled + ScopedThreadWriter) and an instance at once:
// the same event goes into both.
TEST_F(TrackEventInstancesTest, StaticBindingAndInstanceTogether) {
  RingCapture capture;
  RingCapture bound;
  const InstanceHandle a = Start(Config({"inst.a"}, capture.Factory(1)));
  SetCategoriesEnabled("inst.a");
  std::thread thread([&bound] {
    std::unique_ptr<shm_ring::TraceWriterV2> writer = bound.Factory(9)(nullptr);
    ScopedThreadWriter bind(writer.get());
    RT_TRACE_EVENT("inst.a", "Both");
  });
  thread.join();
  SetCategoriesEnabled("-*");
  StopInstance(a);
  for (RingCapture* c : {&capture, &bound}) {
    const auto sequences = c->Drain();
    ASSERT_EQ(sequences.size(), 1u);
    const std::vector<pb::TrackEvent> events =
        Events(sequences.begin()->second);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].name(), "Both");
    EXPECT_EQ(events[1].type(), pb::TrackEvent::TYPE_SLICE_END);
  }
}

// Categories named at run time are matched like declared ones, when first
// used: against every running instance's patterns and against the static
// specs applied before they existed; stopping the instance clears them.
TEST_F(TrackEventInstancesTest,
       DynamicCategoriesFollowInstancesAndStaticSpecs) {
  RingCapture capture;
  RingCapture bound;
  const InstanceHandle a =
      Start(Config({"dyn.*"}, capture.Factory(1), {"dyn.off", "*"}));
  SetCategoriesEnabled("plugin*,-plugin.quiet");
  const std::string prefix = "dyn.";
  const std::string dyn_x = prefix + "x";  // built at run time
  const std::string dyn_off = prefix + "off";
  int evaluated = 0;
  std::thread thread([&] {
    std::unique_ptr<shm_ring::TraceWriterV2> writer = bound.Factory(9)(nullptr);
    ScopedThreadWriter bind(writer.get());
    { RT_TRACE_EVENT_DYNAMIC(dyn_x, "X", "i", 1); }
    RT_TRACE_INSTANT_DYNAMIC(dyn_off, "Off", "n", ++evaluated);
    RT_TRACE_INSTANT_DYNAMIC(std::string("plugin.a"), "Plugin");
    RT_TRACE_INSTANT_DYNAMIC(std::string("plugin.quiet"), "Quiet");
    RT_TRACE_INSTANT_DYNAMIC(dyn_x, "Again");  // this thread's cache
  });
  thread.join();
  EXPECT_EQ(evaluated, 0);
  EXPECT_EQ(CategoryMask("dyn.x"), 1u << a.slot);
  EXPECT_EQ(CategoryMask("dyn.off"), 0u);
  EXPECT_EQ(CategoryMask("plugin.a"), kStaticBit);
  EXPECT_EQ(CategoryMask("plugin.quiet"), 0u);
  StopInstance(a);
  EXPECT_EQ(CategoryMask("dyn.x"), 0u);
  SetCategoriesEnabled("-*");
  EXPECT_EQ(CategoryMask("plugin.a"), 0u);

  auto names = [](RingCapture* c) {
    std::vector<std::string> out;
    for (const auto& [id, sequence] : c->Drain()) {
      for (const pb::TrackEvent& e : Events(sequence)) {
        out.push_back(e.type() == pb::TrackEvent::TYPE_SLICE_END
                          ? "end"
                          : e.name() + "@" + e.categories(0));
      }
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(&capture), (V{"X@dyn.x", "end", "Again@dyn.x"}));
  EXPECT_EQ(names(&bound), (V{"Plugin@plugin.a"}));
}

}  // namespace
}  // namespace track_event
}  // namespace ringtrace
