/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/ring_drainer/test/packet_util.h"

#include <string.h>

#include <algorithm>

#include "src/base/byte_order.h"

namespace ringtrace {
namespace ring_drainer {
namespace test {

namespace {

const uint8_t* Bytes(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

// FNV-1a.
uint32_t Checksum(const char* data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i) {
    h ^= static_cast<uint8_t>(data[i]);
    h *= 16777619u;
  }
  return h;
}

char BodyByte(uint16_t tag, uint32_t seq, uint32_t i) {
  return static_cast<char>((tag * 31u + seq * 7u + i) & 0xff);
}

}  // namespace

std::string MakeTestPacket(uint16_t tag, uint32_t seq, uint32_t body_len) {
  std::string s;
  s.reserve(kPacketOverhead + body_len);
  base::AppendU16(&s, tag);
  base::AppendU32(&s, seq);
  base::AppendU32(&s, body_len);
  for (uint32_t i = 0; i < body_len; ++i)
    s.push_back(BodyByte(tag, seq, i));
  base::AppendU32(&s, Checksum(s.data(), s.size()));
  return s;
}

bool ParseTestPacket(const std::string& data, ParsedPacket* out) {
  if (data.size() < kPacketOverhead)
    return false;
  ParsedPacket p;
  p.tag = base::GetU16(Bytes(data));
  p.seq = base::GetU32(Bytes(data) + 2);
  p.body_len = base::GetU32(Bytes(data) + 6);
  if (data.size() != kPacketOverhead + static_cast<size_t>(p.body_len))
    return false;
  for (uint32_t i = 0; i < p.body_len; ++i) {
    if (data[10 + i] != BodyByte(p.tag, p.seq, i))
      return false;
  }
  const size_t sum_off = data.size() - 4;
  if (base::GetU32(Bytes(data) + sum_off) != Checksum(data.data(), sum_off))
    return false;
  *out = p;
  return true;
}

bool WriteRingPacket(shm_ring::RingWriter* w,
                     const std::string& data,
                     const std::function<void()>& inside_fragment,
                     LossLedger* ledger,
                     uint32_t seq) {
  shm_ring::RingWriter::Span span;
  const bool began = w->BeginPacket(&span);
  if (ledger) {
    ledger->AfterCall();
    if (began)
      ledger->PacketOpened(seq);
    else
      ledger->PacketNeverOpened(seq);
  }
  if (!began)
    return false;
  // The call just made kept (true) or lost (false) the open packet.
  auto after_call = [ledger](bool kept) {
    if (!ledger)
      return;
    ledger->AfterCall();
    if (!kept)
      ledger->OpenPacketLost();
  };
  size_t off = 0;
  bool first_write_in_fragment = true;
  // Bounded: every iteration writes at least one byte or opens a new
  // fragment (which has at least one byte of room).
  while (off < data.size()) {
    const size_t room = static_cast<size_t>(span.end - span.wptr);
    if (room == 0) {
      const bool kept = w->ContinuePacket(&span);
      after_call(kept);
      if (!kept)
        return false;
      first_write_in_fragment = true;
      continue;
    }
    // Write half of what fits first, so the fragment is open with data in
    // it when |inside_fragment| runs.
    size_t n = std::min(room, data.size() - off);
    if (first_write_in_fragment && inside_fragment && n > 1)
      n /= 2;
    memcpy(span.wptr, data.data() + off, n);
    span.wptr += n;
    off += n;
    if (first_write_in_fragment && inside_fragment) {
      inside_fragment();
      // A Flush with the packet open lets the writer notice a scrape and
      // relocate the open fragment (spec 7); it may lose it.
      const bool kept = w->Flush(&span);
      after_call(kept);
      if (!kept)
        return false;
    }
    first_write_in_fragment = false;
  }
  if (ledger)
    ledger->PacketFinished();
  w->EndPacket(span.wptr);
  if (ledger)
    ledger->AfterCall();
  return true;
}

void FlushRingWriter(shm_ring::RingWriter* w, LossLedger* ledger) {
  w->Flush(nullptr);
  if (ledger)
    ledger->AfterCall();
}

std::vector<ReadBackPacket> ReadAllPackets(trace_buffer::TraceBufferV2* tb) {
  std::vector<ReadBackPacket> out;
  tb->BeginRead();
  trace_buffer::TracePacket packet;
  trace_buffer::PacketSequenceProperties props;
  uint32_t loss = 0;
  while (tb->ReadNextTracePacket(&packet, &props, &loss)) {
    ReadBackPacket p;
    p.producer_id = props.producer_id_trusted;
    p.writer_id = props.writer_id;
    p.data = packet.GetRawBytesForTesting();
    p.loss = loss;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace test
}  // namespace ring_drainer
}  // namespace ringtrace
