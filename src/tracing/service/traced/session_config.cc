/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/session_config.h"

#include "protos/perfetto/config/trace_config.pb.h"
#include "src/tracing/ipc/consumer_protocol.h"

namespace ringtrace {
namespace traced {

namespace {

using perfetto::protos::TraceConfig;
using trace_buffer::TraceBufferV2;

uint32_t OrDefault(uint32_t v, uint32_t def) {
  return v == 0 ? def : v;
}

}  // namespace

uint64_t SessionConfig::total_buffer_bytes() const {
  uint64_t total = 0;
  for (const Buffer& b : buffers)
    total += b.size_bytes;
  return total;
}

bool IsPrintableName(const std::string& s, size_t max_size) {
  if (s.empty() || s.size() > max_size)
    return false;
  for (char c : s) {
    if (c < 0x20 || c > 0x7e)
      return false;
  }
  return true;
}

base::Status MakeSessionConfig(const TraceConfig& config, SessionConfig* out) {
  *out = SessionConfig();
  base::Status status = ipc::ValidateTraceConfig(config);
  if (!status.ok())
    return status;
  for (const TraceConfig::BufferConfig& b : config.buffers()) {
    SessionConfig::Buffer buffer;
    buffer.size_bytes = size_t{b.size_kb()} * 1024;
    buffer.policy = b.fill_policy() == TraceConfig::BufferConfig::DISCARD
                        ? TraceBufferV2::OverwritePolicy::kDiscard
                        : TraceBufferV2::OverwritePolicy::kOverwrite;
    out->buffers.push_back(buffer);
  }
  for (const TraceConfig::DataSource& ds : config.data_sources()) {
    SessionConfig::DataSource d;
    d.name = ds.config().name();
    d.target_buffer = ds.config().target_buffer();
    d.producer_name_filter.assign(ds.producer_name_filter().begin(),
                                  ds.producer_name_filter().end());
    const perfetto::protos::TrackEventConfig& te =
        ds.config().track_event_config();
    d.enabled_categories.assign(te.enabled_categories().begin(),
                                te.enabled_categories().end());
    d.disabled_categories.assign(te.disabled_categories().begin(),
                                 te.disabled_categories().end());
    d.enabled_tags.assign(te.enabled_tags().begin(), te.enabled_tags().end());
    d.disabled_tags.assign(te.disabled_tags().begin(),
                           te.disabled_tags().end());
    // ValidateTraceConfig bounded it by ipc::kMaxDataSourceConfigSize.
    if (!ds.config().SerializeToString(&d.config))
      return base::ErrStatus("config: cannot serialize a data source's config");
    out->data_sources.push_back(std::move(d));
  }
  out->duration_ms = config.duration_ms();
  out->write_into_file = config.write_into_file();
  out->deflate = config.compression_type() ==
                 perfetto::protos::TraceConfig::COMPRESSION_TYPE_DEFLATE;
  out->file_write_period_ms =
      OrDefault(config.file_write_period_ms(), kDefaultFileWritePeriodMs);
  out->max_file_size_bytes = config.max_file_size_bytes();
  out->flush_period_ms = config.flush_period_ms();
  // A streamed trace without periodic flushes keeps what writers hold in
  // their chunks out of every file write until the stop (trace_processor
  // flags such a trace: config_write_into_file_no_flush). The default: a
  // flush per file write, recorded in the TraceConfig the trace carries.
  TraceConfig applied;
  const TraceConfig* recorded = &config;
  if (out->write_into_file && out->flush_period_ms == 0) {
    out->flush_period_ms = out->file_write_period_ms;
    applied = config;
    applied.set_flush_period_ms(out->flush_period_ms);
    recorded = &applied;
  }
  out->flush_timeout_ms =
      OrDefault(config.flush_timeout_ms(), kDefaultTimeoutMs);
  out->data_source_stop_timeout_ms =
      OrDefault(config.data_source_stop_timeout_ms(), kDefaultTimeoutMs);
  out->clear_period_ms = config.incremental_state_config().clear_period_ms();
  out->unique_session_name = config.unique_session_name();
  if (!recorded->SerializeToString(&out->serialized))
    return base::ErrStatus("config: cannot serialize it");
  return base::OkStatus();
}

}  // namespace traced
}  // namespace ringtrace
