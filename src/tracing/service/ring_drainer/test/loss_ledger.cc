/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/test/loss_ledger.h"

#include "ringtrace/logging.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

namespace {

uint64_t Drops(const shm_ring::RingWriterStats& s) {
  return s.suffixes_dropped + s.protocol_errors;
}

}  // namespace

LossLedger::LossLedger(const shm_ring::RingWriter* writer)
    : writer_(writer),
      publications_(writer->stats().publications),
      drops_(Drops(writer->stats())) {}

void LossLedger::AfterCall() {
  const shm_ring::RingWriterStats& s = writer_->stats();
  const bool published = s.publications != publications_;
  const bool dropped = Drops(s) != drops_;
  publications_ = s.publications;
  drops_ = Drops(s);
  if (published) {
    at_risk_.clear();  // See the header: the publication came first.
    return;
  }
  if (dropped) {
    for (uint32_t seq : at_risk_) {
      RT_CHECK(lost_.insert(seq).second);
      ++lost_after_finish_;
    }
    at_risk_.clear();
  }
}

void LossLedger::PacketOpened(uint32_t seq) {
  RT_CHECK(!open_);
  open_ = true;
  open_seq_ = seq;
}

void LossLedger::PacketNeverOpened(uint32_t seq) {
  RT_CHECK(!open_);
  RT_CHECK(lost_.insert(seq).second);
}

void LossLedger::OpenPacketLost() {
  RT_CHECK(open_);
  open_ = false;
  RT_CHECK(lost_.insert(open_seq_).second);
}

void LossLedger::PacketFinished() {
  RT_CHECK(open_);
  open_ = false;
  at_risk_.push_back(open_seq_);
}

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace
