/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The identifiers shared by the ring ABI, the producer API, the ring drainer
// and the trace buffer. One definition each; every component uses these.
//
//  - ProducerID (16 bits): the service's name for one connected producer.
//    The service hands out 1..65535 and reuses an ID only once no data of
//    its previous owner is left in the trace buffer (see
//    src/tracing/service/traced/service_core.h); 0 is never assigned. The
//    IPC wire carries it in a 32-bit field (HelloReply.producer_id) for
//    room, but a value above 65535 is not a ProducerID: readers of the wire
//    reject it rather than truncate it.
//  - WriterID (16 bits): a writer of one producer, the low 16 bits of a
//    data-bearing state word (docs/ring-protocol.md 3.2).
//  - BufferID (16 bits): a target trace buffer, bytes 4-5 of a format-00
//    chunk (docs/ring-protocol.md 3.1).
//  - ChunkID (32 bits): the sequence number of a chunk within one
//    {ProducerID, WriterID} sequence, assigned by the service and compared
//    modulo 2^32 (see ChunkIdLess() in
//    src/tracing/service/trace_buffer_v2/trace_buffer_v2_types.h).

#ifndef INCLUDE_RINGTRACE_IDS_H_
#define INCLUDE_RINGTRACE_IDS_H_

#include <stdint.h>

namespace ringtrace {

using ProducerID = uint16_t;
using WriterID = uint16_t;
using BufferID = uint16_t;
using ChunkID = uint32_t;

// The largest ProducerID the service assigns (and the wire may carry).
constexpr uint32_t kMaxProducerID = 0xffff;

}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_IDS_H_
