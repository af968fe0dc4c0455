/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// SessionConfig: a consumer's perfetto.protos.TraceConfig, checked by
// ipc::ValidateTraceConfig (src/tracing/ipc/consumer_protocol.h: every
// defect is an error naming the field, unknown fields included) and reduced
// to what the service acts on, defaults filled in (docs/sessions.md). The
// service never reads the proto again afterwards; it keeps the serialized
// bytes only to write them into the trace.

#ifndef SRC_TRACING_SERVICE_TRACED_SESSION_CONFIG_H_
#define SRC_TRACING_SERVICE_TRACED_SESSION_CONFIG_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "ringtrace/status.h"
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

constexpr uint32_t kDefaultTimeoutMs = 5000;
constexpr uint32_t kDefaultFileWritePeriodMs = 5000;

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
    // TrackEventConfig's lists, as given (the producer applies the rule
    // and the disabled_tags default).
    std::vector<std::string> enabled_categories;
    std::vector<std::string> disabled_categories;
    std::vector<std::string> enabled_tags;
    std::vector<std::string> disabled_tags;
    // The whole DataSourceConfig, serialized as the consumer gave it (the
    // fields this service does not know included: a data source's own
    // config, e.g. ftrace_config, passes through to its producer unread).
    std::string config;
  };
  std::vector<Buffer> buffers;
  std::vector<DataSource> data_sources;
  uint32_t duration_ms = 0;  // 0: until stopped
  bool write_into_file = false;
  // compression_type: COMPRESSION_TYPE_DEFLATE (never with write_into_file,
  // ValidateTraceConfig refuses the two together).
  bool deflate = false;
  uint32_t file_write_period_ms = kDefaultFileWritePeriodMs;
  uint64_t max_file_size_bytes = 0;  // 0: no limit
  // 0: no periodic flush. With write_into_file it defaults to
  // file_write_period_ms.
  uint32_t flush_period_ms = 0;
  uint32_t flush_timeout_ms = kDefaultTimeoutMs;
  uint32_t data_source_stop_timeout_ms = kDefaultTimeoutMs;
  uint32_t clear_period_ms = 0;  // incremental state; 0: the SDK's default
  std::string unique_session_name;
  // The config as received (with a defaulted flush_period_ms, see above),
  // written into the trace as its TraceConfig.
  std::string serialized;

  uint64_t total_buffer_bytes() const;
};

// Whether |s| is 1..|max_size| printable ASCII characters.
bool IsPrintableName(const std::string& s, size_t max_size);

// ipc::ValidateTraceConfig, then the conversion.
base::Status MakeSessionConfig(const perfetto::protos::TraceConfig& config,
                               SessionConfig* out);

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_SESSION_CONFIG_H_
