/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/track_event/test/sequence_reader.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"

#include <gtest/gtest.h>

#include "src/tracing/core/encoding/test/packet_capture.h"
#include "src/tracing/core/shm_ring/test_ring_reader.h"

namespace ringtrace {
namespace track_event {

namespace pb = perfetto::protos;

namespace {

constexpr uint32_t kBootTime = pb::BUILTIN_CLOCK_BOOTTIME;
constexpr uint32_t kFirstSequenceClock = 64;

// The sequence's incremental clock, from its snapshot in the clear packet.
struct IncrementalClock {
  bool known = false;
  uint32_t id = 0;
  uint64_t value = 0;
};

// Rewrites |p|'s timestamp as absolute CLOCK_BOOTTIME, as a reader does:
// the packet's clock is its timestamp_clock_id, else the sequence's
// default; on the incremental clock the timestamp is a delta added to the
// clock's value.
void ResolveTimestamp(const pb::TracePacketDefaults& defaults,
                      IncrementalClock* clock,
                      pb::TracePacket* p) {
  for (const pb::ClockSnapshot::Clock& c : p->clock_snapshot().clocks()) {
    if (c.clock_id() >= kFirstSequenceClock && c.is_incremental()) {
      clock->known = true;
      clock->id = c.clock_id();
      clock->value = c.timestamp();
    }
  }
  if (!p->has_timestamp())
    return;
  const uint32_t id =
      p->has_timestamp_clock_id()
          ? p->timestamp_clock_id()
          : (defaults.has_timestamp_clock_id() ? defaults.timestamp_clock_id()
                                               : kBootTime);
  if (id == kBootTime) {
    p->clear_timestamp_clock_id();
    return;
  }
  EXPECT_TRUE(clock->known && id == clock->id) << "clock " << id;
  clock->value += p->timestamp();
  p->set_timestamp(clock->value);
  p->clear_timestamp_clock_id();
}

// Removes each clear packet (the clock snapshot and the defaults, resolved
// by now) and sets its SEQ_INCREMENTAL_STATE_CLEARED on the packet after
// it, the process descriptor, so that tests index a generation's packets
// as descriptors then events. TrackEventTest.ClearPacketStartsTheGeneration
// checks the clear packet itself.
void FoldClearPackets(std::vector<pb::TracePacket>* packets) {
  std::vector<pb::TracePacket> out;
  out.reserve(packets->size());
  bool cleared = false;
  for (pb::TracePacket& p : *packets) {
    if (p.has_clock_snapshot() && !p.has_track_descriptor() &&
        !p.has_track_event() &&
        (p.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED)) {
      cleared = true;
      continue;
    }
    if (cleared) {
      p.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
      cleared = false;
    }
    out.push_back(std::move(p));
  }
  *packets = std::move(out);
}

}  // namespace

int ResolveIncrementalState(std::vector<pb::TracePacket>* packets) {
  std::map<uint64_t, std::string> names, categories, arg_names;
  pb::TracePacketDefaults defaults;
  IncrementalClock clock;
  int clears = 0;
  for (pb::TracePacket& p : *packets) {
    if (p.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
      names.clear();
      categories.clear();
      arg_names.clear();
      defaults = p.trace_packet_defaults();
      clock = IncrementalClock();
      clears++;
    }
    ResolveTimestamp(defaults, &clock, &p);
    for (const auto& c : p.interned_data().event_categories())
      EXPECT_TRUE(categories.emplace(c.iid(), c.name()).second);
    for (const auto& n : p.interned_data().event_names())
      EXPECT_TRUE(names.emplace(n.iid(), n.name()).second);
    for (const auto& n : p.interned_data().debug_annotation_names())
      EXPECT_TRUE(arg_names.emplace(n.iid(), n.name()).second);
    if (!p.has_track_event())
      continue;
    EXPECT_EQ(
        p.sequence_flags(),
        static_cast<uint32_t>(pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE));
    pb::TrackEvent* e = p.mutable_track_event();
    if (!e->has_track_uuid()) {
      EXPECT_TRUE(defaults.track_event_defaults().has_track_uuid());
      e->set_track_uuid(defaults.track_event_defaults().track_uuid());
    }
    if (e->has_name_iid()) {
      EXPECT_EQ(names.count(e->name_iid()), 1u) << e->name_iid();
      e->set_name(names[e->name_iid()]);
    }
    for (uint64_t iid : e->category_iids()) {
      EXPECT_EQ(categories.count(iid), 1u) << iid;
      e->add_categories(categories[iid]);
    }
    e->clear_category_iids();
    for (pb::DebugAnnotation& a : *e->mutable_debug_annotations()) {
      if (a.has_name_iid()) {
        EXPECT_EQ(arg_names.count(a.name_iid()), 1u) << a.name_iid();
        a.set_name(arg_names[a.name_iid()]);
      }
    }
  }
  FoldClearPackets(packets);
  return clears;
}

RingCapture::RingCapture(uint32_t chunk_size, uint32_t num_chunks)
    : ring_(chunk_size, num_chunks) {}

WriterFactory RingCapture::Factory(shm_ring::BufferID target,
                                   shm_ring::Publication publication) {
  return [this, target, publication](base::Status*) {
    shm_ring::TraceWriterV2::Options options;
    options.target_buffer = target;
    options.publication = publication;
    shm_ring::WriterLossCounters* losses;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      options.writer_id = next_id_++;
      ids_[options.writer_id] = target;
      auto& slot = losses_[options.writer_id];
      slot = std::make_unique<shm_ring::WriterLossCounters>();
      losses = slot.get();
    }
    auto writer = shm_ring::TraceWriterV2Owner::Create(ring_.view(), options);
    shm_ring::TraceWriterV2Owner::AttachProducerControls(writer.get(), nullptr,
                                                         losses);
    return writer;
  };
}

uint32_t RingCapture::writers_created() {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<uint32_t>(ids_.size());
}

std::map<shm_ring::WriterID, RingCapture::Sequence> RingCapture::Drain() {
  shm_ring::TestRingReader reader(ring_.view());
  std::vector<shm_ring::ReadChunk> chunks;
  reader.DrainAll(&chunks);
  shm_ring::TestPacketReassembler reassembler;
  std::map<shm_ring::WriterID, shm_ring::BufferID> ids;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ids = ids_;
  }
  for (const shm_ring::ReadChunk& chunk : chunks) {
    EXPECT_EQ(ids.count(chunk.writer_id), 1u) << chunk.writer_id;
    EXPECT_EQ(chunk.buffer_id, ids[chunk.writer_id]);
    reassembler.Add(chunk);
  }
  std::map<shm_ring::WriterID, Sequence> out;
  for (const auto& [id, buffer] : ids) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const shm_ring::WriterLossCounters& losses = *losses_[id];
      // Acquire: pairs with the writer's release of |version|.
      losses.version.load(std::memory_order_acquire);
      EXPECT_EQ(
          losses.packets_dropped_before_end.load(std::memory_order_relaxed) +
              losses.packets_dropped_after_end.load(std::memory_order_relaxed),
          0u)
          << id;
    }
    const auto& state = reassembler.writer(id);
    EXPECT_EQ(state.data_loss_flags, 0u) << id;
    EXPECT_EQ(state.broken_chains, 0u) << id;
    EXPECT_EQ(state.orphan_fragments, 0u) << id;
    Sequence& sequence = out[id];
    sequence.buffer = buffer;
    for (const std::string& grouped : state.packets) {
      std::string flat;
      EXPECT_TRUE(encoding::PacketCapture::Ungroup(grouped, &flat));
      pb::TracePacket packet;
      EXPECT_TRUE(packet.ParseFromString(flat));
      sequence.packets.push_back(std::move(packet));
    }
    sequence.clears = ResolveIncrementalState(&sequence.packets);
  }
  return out;
}

}  // namespace track_event
}  // namespace ringtrace
