/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// SessionConfig: a consumer's perfetto.protos.TraceConfig, checked field by
// field and reduced to what the service acts on (docs/sessions.md). The
// config comes from a consumer and is untrusted: ValidateTraceConfig()
// rejects every defect with a message naming the field, and the service
// never reads the proto again afterwards (it keeps the serialized bytes only
// to write them into the trace).
//
// Limits (each an error, never a silent clamp):
//   buffers                1..kMaxBuffersPerSession, size_kb 1..kMaxBufferKb
//   data_sources           at most kMaxDataSourcesPerSession; every entry
//                          has a config with a valid name (1..64 printable
//                          ASCII) and a target_buffer < buffers
//   producer_name_filter   at most kMaxProducerNameFilters entries of 1..64
//                          printable ASCII
//   track_event_config     enabled + disabled patterns at most
//                          kMaxCategoryPatterns, each 1..128 printable ASCII
//   write_into_file        file_write_period_ms 0 (5000) or >= 100
//   max_file_size_bytes    only with write_into_file
//   flush_timeout_ms,      0 (5000) or at most kMaxTimeoutMs
//   data_source_stop_timeout_ms
//   unique_session_name    at most 64 printable ASCII
//   unknown fields         an error (a field this service does not know
//                          would otherwise be ignored silently)

#ifndef SRC_TRACING_SERVICE_TRACED_SESSION_CONFIG_H_
#define SRC_TRACING_SERVICE_TRACED_SESSION_CONFIG_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "src/base/status.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace perfetto {
namespace protos {
class TraceConfig;
}  // namespace protos
}  // namespace perfetto

namespace ringtrace {
namespace traced {

// The largest trace buffer, in KiB: TraceBufferV2 holds at most 0xffff0000
// bytes (its offsets are 32-bit and it keeps the top 64 KiB free).
constexpr uint32_t kMaxBufferKb = 0xffff0000u / 1024;  // 4194240

constexpr size_t kMaxBuffersPerSession = 8;
constexpr size_t kMaxDataSourcesPerSession = 64;
constexpr size_t kMaxProducerNameFilters = 64;
constexpr size_t kMaxSessionNameSize = 64;
constexpr uint32_t kDefaultTimeoutMs = 5000;
constexpr uint32_t kMaxTimeoutMs = 300000;
constexpr uint32_t kDefaultFileWritePeriodMs = 5000;
constexpr uint32_t kMinFileWritePeriodMs = 100;

struct SessionConfig {
  struct Buffer {
    size_t size_bytes = 0;
    trace_buffer::TraceBufferV2::OverwritePolicy policy =
        trace_buffer::TraceBufferV2::OverwritePolicy::kOverwrite;
  };
  struct DataSource {
    std::string name;
    size_t target_buffer = 0;                       // index into |buffers|
    std::vector<std::string> producer_name_filter;  // empty: every producer
    std::vector<std::string> enabled_categories;
    std::vector<std::string> disabled_categories;
  };
  std::vector<Buffer> buffers;
  std::vector<DataSource> data_sources;
  uint32_t duration_ms = 0;  // 0: until stopped
  bool write_into_file = false;
  uint32_t file_write_period_ms = kDefaultFileWritePeriodMs;
  uint64_t max_file_size_bytes = 0;  // 0: no limit
  uint32_t flush_period_ms = 0;      // 0: no periodic flush
  uint32_t flush_timeout_ms = kDefaultTimeoutMs;
  uint32_t data_source_stop_timeout_ms = kDefaultTimeoutMs;
  uint32_t clear_period_ms = 0;  // incremental state; 0: the SDK's default
  std::string unique_session_name;
  // The config as received, written into the trace as its TraceConfig.
  std::string serialized;

  uint64_t total_buffer_bytes() const;
};

// Whether |s| is 1..|max_size| printable ASCII characters.
bool IsPrintableName(const std::string& s, size_t max_size);

base::Status ValidateTraceConfig(const perfetto::protos::TraceConfig& config,
                                 SessionConfig* out);

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_SESSION_CONFIG_H_
