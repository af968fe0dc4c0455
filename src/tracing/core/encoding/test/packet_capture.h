/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Writes packets through a real TraceWriterV2 into a private test
// ring and reads them back as the service would: the grouped bytes the
// writer produced and, through the Ungrouper, standard protobuf that
// libprotobuf parses.
//
//   PacketCapture capture;
//   {
//     auto handle = capture.writer()->NewTracePacket();
//     ...
//   }
//   std::vector<std::string> grouped = capture.Drain();
//   std::string flat;
//   ASSERT_TRUE(PacketCapture::Ungroup(grouped[0], &flat));

#ifndef SRC_TRACING_CORE_ENCODING_TEST_PACKET_CAPTURE_H_
#define SRC_TRACING_CORE_ENCODING_TEST_PACKET_CAPTURE_H_

#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

#include "ringtrace/trace_writer_v2.h"
#include "src/tracing/core/shm_ring/test_ring.h"

namespace ringtrace {
namespace encoding {

class PacketCapture {
 public:
  // The default ring (16 chunks of 4 KiB) holds every packet of a test
  // without the reader running.
  explicit PacketCapture(uint32_t chunk_size = 4096, uint32_t num_chunks = 16);
  ~PacketCapture();

  shm_ring::TraceWriterV2* writer() { return writer_.get(); }

  // Finishes the open packet, flushes, and returns every packet written since
  // the previous Drain(), in order, as grouped bytes. Returns nothing (and
  // *lost_packets, when given, says how many) if the writer lost any.
  std::vector<std::string> Drain(uint64_t* lost_packets = nullptr);
  // As Drain(), but returns the whole packets read even if the writer lost
  // some (checking the losses is the caller's): for tests of what follows a
  // loss, once an earlier Drain() emptied the ring.
  std::vector<std::string> DrainWholePackets();

  // Group encoding -> standard protobuf. False on a malformed packet.
  static bool Ungroup(const std::string& grouped, std::string* flat);

 private:
  shm_ring::TestRing ring_;
  std::unique_ptr<shm_ring::TraceWriterV2> writer_;
};

}  // namespace encoding
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_ENCODING_TEST_PACKET_CAPTURE_H_
