/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Writes one TracePacket whose ftrace_events bundle the caller
// fills, through a real TraceWriterV2 and the service's Ungrouper, and
// returns it as libprotobuf parsed it: what a trace file would hold.
//
//   perfetto::protos::FtraceEventBundle bundle;
//   ASSERT_TRUE(CaptureBundle([&](FtraceEventBundleWriter* b) {
//     translator.WriteBundle(0, pages, n, 4096, b);
//   }, &bundle));

#ifndef SRC_TRACED_PROBES_FTRACE_TEST_BUNDLE_CAPTURE_H_
#define SRC_TRACED_PROBES_FTRACE_TEST_BUNDLE_CAPTURE_H_

#include <stdint.h>

#include <functional>

#include "protos/perfetto/trace/ftrace/ftrace_event_bundle.pb.h"
#include "protos/perfetto/trace/ftrace/ftrace_event_bundle.rtzero.h"
#include "protos/perfetto/trace/ftrace/ftrace_stats.pb.h"
#include "protos/perfetto/trace/ftrace/ftrace_stats.rtzero.h"

namespace ringtrace {
namespace ftrace {
namespace test {

using FtraceEventBundleWriter = perfetto::protos::rtzero::FtraceEventBundle;
using FtraceStatsWriter = perfetto::protos::rtzero::FtraceStats;

// False (with a gtest failure) if the packet was lost or does not parse.
// |ring_chunks| chunks of 4 KiB hold the packet.
bool CaptureBundle(const std::function<void(FtraceEventBundleWriter*)>& fill,
                   perfetto::protos::FtraceEventBundle* out,
                   uint32_t ring_chunks = 64);
bool CaptureStats(const std::function<void(FtraceStatsWriter*)>& fill,
                  perfetto::protos::FtraceStats* out);

}  // namespace test
}  // namespace ftrace
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_FTRACE_TEST_BUNDLE_CAPTURE_H_
