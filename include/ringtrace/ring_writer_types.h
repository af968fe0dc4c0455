/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The ring writer's vocabulary that the public API names: what a writer does
// when the ring is full (ProducerOptions::buffer_exhausted_policy), when it
// publishes, the options of a writer over a ring (TraceWriterV2's
// constructor) and the span the encoder writes into. The ring writer itself
// (src/tracing/core/shm_ring/ring_writer.h, RingWriter and
// RingWriterDelegate) is internal; docs/ring-protocol.md is its spec.

#ifndef INCLUDE_RINGTRACE_RING_WRITER_TYPES_H_
#define INCLUDE_RINGTRACE_RING_WRITER_TYPES_H_

#include <stdint.h>

#include <string>

#include "ringtrace/ids.h"

namespace ringtrace {
namespace shm_ring {

class RingWriterDelegate;  // src/tracing/core/shm_ring/ring_writer.h

// What the writer does when it cannot get a chunk.
enum class BufferExhaustedPolicy : uint8_t {
  // Record the loss and drop the packet (or its rest) at once. Default.
  kDrop,
  // On Full, wait for read_pos to move (ring_wait.h), at most
  // RingWriterOptions::stall_timeout_ms per chunk acquisition; on timeout
  // record the loss and drop. Every later Full stalls again.
  kStall,
  // Like kStall, but after one timeout the writer stops stalling: later Full
  // results drop at once until the writer gets a chunk again.
  kStallThenDrop,
};

// The policies' names on command lines and in summaries: "drop", "stall",
// "stall_then_drop".
const char* BufferExhaustedPolicyName(BufferExhaustedPolicy policy);
// Sets |*policy| to the policy named |name|; false (|*policy| untouched) for
// any other string.
bool ParseBufferExhaustedPolicy(const std::string& name,
                                BufferExhaustedPolicy* policy);

// When the writer publishes (ring_writer.h, the class comment).
enum class Publication : uint8_t {
  // EndPacket() publishes the packet. Default; what every producer uses.
  kPerPacket,
  // EndPacket() does not publish; the chunk is published when retired or on
  // Flush(). Ended packets are lost, uncounted, if the process dies (or the
  // trace stops) before that. Opt-in, for benchmarks and for callers that
  // flush on their own schedule and accept that risk.
  kPerChunkRisksLossOnCrash,
};

// The options of one writer over a ring (RingWriter::Options,
// TraceWriterV2::Options). Apps that use the producer library never fill
// them: Producer::NewTraceWriter() does.
struct RingWriterOptions {
  // From the ring's WriterIdAllocator: unique for the ring's whole life.
  WriterID writer_id = 0;
  BufferID target_buffer = 0;
  BufferExhaustedPolicy policy = BufferExhaustedPolicy::kDrop;
  Publication publication = Publication::kPerPacket;
  // Failed claims (burned positions) one acquisition attempt may spend
  // before it ends as NoChunkAvailable. kDrop then drops; kStall (and
  // kStallThenDrop before its first timeout) waits for read_pos to move,
  // like on Full, and tries again, within the same stall deadline.
  uint32_t claim_budget = 4;
  // Relocations one packet may go through before its suffix is dropped (a
  // replacement can be scraped at n = 0 again and again). A livelock guard:
  // under kDrop the next scrape drops the suffix; under kStall (and
  // kStallThenDrop before its first timeout) relocation goes on until
  // stall_timeout_ms after the bound was reached, then the suffix is
  // dropped and a stall timeout counted.
  uint32_t max_relocations_per_packet = 3;
  // Lost write_pos CAS races tolerated per acquisition attempt (lock-free,
  // not wait-free; the bound keeps a hostile or broken ring from spinning
  // us forever). Exceeding it counts as NoChunkAvailable (see
  // claim_budget for what the policies do then).
  uint32_t max_reserve_races = 1024;
  uint32_t stall_timeout_ms = 1000;
  RingWriterDelegate* delegate = nullptr;  // not owned; may be null
};

// Where the encoder writes: [wptr, end). |wptr| advances as it writes.
struct RingWriterSpan {
  uint8_t* wptr = nullptr;
  uint8_t* end = nullptr;
};

}  // namespace shm_ring
}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_RING_WRITER_TYPES_H_
