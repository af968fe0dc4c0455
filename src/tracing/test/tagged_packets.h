/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Tagged test packets for the end-to-end tests: TracePacket.for_testing
// with str = tag + index, written through a TraceWriterV2 and counted in a
// trace file the service wrote.

#ifndef SRC_TRACING_TEST_TAGGED_PACKETS_H_
#define SRC_TRACING_TEST_TAGGED_PACKETS_H_

#include <stdint.h>

#include <string>

#include "ringtrace/trace_writer_v2.h"

namespace ringtrace {
namespace test {

// Writes |n| packets "<tag>0" .. "<tag>n-1" on |w|, then flushes it.
void WriteTagged(shm_ring::TraceWriterV2* w,
                 const std::string& tag,
                 uint32_t n);

// How many for_testing packets of this process (trusted_pid) in the trace
// file at |path| start with |tag|. Fails the test if the file cannot be read
// or parsed.
uint64_t CountTagged(const std::string& path, const std::string& tag);

}  // namespace test
}  // namespace ringtrace

#endif  // SRC_TRACING_TEST_TAGGED_PACKETS_H_
