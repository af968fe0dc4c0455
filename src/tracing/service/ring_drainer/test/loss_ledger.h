/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Test support: works out, from the writer's side, exactly WHICH packets of
// one writer were lost, so a test can check
//     delivered + lost == written
// packet by packet instead of trusting a packet counter of the writer.
//
// How. A packet is safe once every one of its fragments is published: the
// reader then takes it (whole chunk or scraped prefix) and nothing can take
// it back. Until then it is at risk. The RingWriter's own stats say what
// happened during each call into it:
//  - publications moved: every closed fragment of the held chunk was
//    published (a relocation moves the unpublished suffix to the new held
//    chunk first), so every finished packet is safe;
//  - suffixes_dropped or protocol_errors moved and nothing was published:
//    every closed-but-unpublished fragment and the open one were dropped, so
//    every finished packet still at risk is lost;
//  - both moved: the publication came first (a drop ends the packet, and a
//    chunk holding a dropped suffix is never published), so the finished
//    packets are safe and only the open packet was hit; the call itself
//    reports that (RingWriter returns false and counts it in
//    open_packets_dropped; TraceWriterV2's packets_dropped is no signal, it
//    also counts finished packets), and the caller says so with
//    OpenPacketLost().
// This relies on at most one publish-or-drop of finished fragments per call,
// and on packets finishing only in EndPacket (which publishes at most once):
// callers must call AfterCall() after EVERY call into the writer, and
// PacketFinished() right before the EndPacket / FinishTracePacket call.
//
// Thread model: used on the writer's thread only.

#ifndef SRC_TRACING_SERVICE_RING_DRAINER_TEST_LOSS_LEDGER_H_
#define SRC_TRACING_SERVICE_RING_DRAINER_TEST_LOSS_LEDGER_H_

#include <stdint.h>

#include <set>
#include <vector>

#include "src/tracing/core/shm_ring/ring_writer.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

class LossLedger {
 public:
  explicit LossLedger(const shm_ring::RingWriter* writer);

  // After every call into the writer (or into the TraceWriterV2 owning it).
  void AfterCall();
  // BeginPacket succeeded: packet |seq| is open.
  void PacketOpened(uint32_t seq);
  // BeginPacket failed: packet |seq| is lost before it started.
  void PacketNeverOpened(uint32_t seq);
  // The writer said the open packet is lost (its rest was discarded).
  void OpenPacketLost();
  // For callers writing through a TraceWriterV2 (or any encoder over this
  // ledger's RingWriter): run |call| (one call into the encoder) and report
  // it, including the loss of the open packet, which the RingWriter signals
  // in open_packets_dropped. (TraceWriterV2's packets_dropped is no signal:
  // it also moves when an earlier, finished packet is lost with a dropped
  // suffix during the call, which AfterCall() accounts for.)
  template <typename Call>
  void Step(Call&& call) {
    const uint64_t before = open_packets_dropped();
    call();
    AfterCall();
    if (open_packets_dropped() != before && open_)
      OpenPacketLost();
  }
  // Like Step() for the call that starts packet |seq| (e.g. NewTracePacket);
  // returns what |call| returns.
  template <typename Call>
  auto Open(uint32_t seq, Call&& call) {
    const uint64_t before = open_packets_dropped();
    auto result = call();
    AfterCall();
    if (open_packets_dropped() != before)
      PacketNeverOpened(seq);
    else
      PacketOpened(seq);
    return result;
  }
  // The open packet ends now (call right before EndPacket).
  void PacketFinished();

  bool packet_open() const { return open_; }
  const std::set<uint32_t>& lost() const { return lost_; }
  // Lost packets the encoder had already finished: lost with a dropped
  // relocated suffix, after the writer reported them written.
  uint64_t lost_after_finish() const { return lost_after_finish_; }
  // Finished packets not yet published (0 after a Flush that settled).
  size_t at_risk() const { return at_risk_.size(); }

 private:
  uint64_t open_packets_dropped() const {
    return writer_->stats().open_packets_dropped;
  }

  const shm_ring::RingWriter* const writer_;
  uint64_t publications_ = 0;
  uint64_t drops_ = 0;
  bool open_ = false;
  uint32_t open_seq_ = 0;
  std::vector<uint32_t> at_risk_;  // Finished, not yet published.
  std::set<uint32_t> lost_;
  uint64_t lost_after_finish_ = 0;
};

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_RING_DRAINER_TEST_LOSS_LEDGER_H_
