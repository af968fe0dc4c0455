/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/session_config.h"

#include "protos/perfetto/config/trace_config.pb.h"

namespace ringtrace {
namespace traced {

namespace {

using perfetto::protos::TraceConfig;
using trace_buffer::TraceBufferV2;

// Kept in step with src/tracing/ipc/wire_protocol.h (StartDataSource must
// encode every validated data source).
constexpr size_t kMaxNameSize = 64;
constexpr size_t kMaxPatternSize = 128;
constexpr size_t kMaxPatterns = 256;

base::Status CheckUnknown(const google::protobuf::Message& m,
                          const std::string& where) {
  if (!m.GetReflection()->GetUnknownFields(m).empty()) {
    return base::ErrStatus(
        "%s: unknown field(s) (this service does not know "
        "them and will not ignore them)",
        where.c_str());
  }
  return base::OkStatus();
}

base::Status CheckTimeout(uint32_t v, const char* field, uint32_t* out) {
  if (v > kMaxTimeoutMs)
    return base::ErrStatus("%s must be at most %u (got %u)", field,
                           kMaxTimeoutMs, v);
  *out = v == 0 ? kDefaultTimeoutMs : v;
  return base::OkStatus();
}

base::Status ValidateBuffers(const TraceConfig& config, SessionConfig* out) {
  const int n = config.buffers_size();
  if (n == 0)
    return base::ErrStatus("buffers: at least one buffer is required");
  if (static_cast<size_t>(n) > kMaxBuffersPerSession) {
    return base::ErrStatus("buffers: at most %zu per session (got %d)",
                           kMaxBuffersPerSession, n);
  }
  for (int i = 0; i < n; ++i) {
    const TraceConfig::BufferConfig& b = config.buffers(i);
    base::Status status = CheckUnknown(b, "buffers[" + std::to_string(i) + "]");
    if (!status.ok())
      return status;
    if (b.size_kb() == 0 || b.size_kb() > kMaxBufferKb) {
      return base::ErrStatus("buffers[%d].size_kb must be in [1, %u] (got %u)",
                             i, kMaxBufferKb, b.size_kb());
    }
    SessionConfig::Buffer buffer;
    buffer.size_bytes = size_t{b.size_kb()} * 1024;
    buffer.policy = b.fill_policy() == TraceConfig::BufferConfig::DISCARD
                        ? TraceBufferV2::OverwritePolicy::kDiscard
                        : TraceBufferV2::OverwritePolicy::kOverwrite;
    out->buffers.push_back(buffer);
  }
  return base::OkStatus();
}

base::Status ValidateDataSource(const TraceConfig::DataSource& ds,
                                int i,
                                size_t num_buffers,
                                SessionConfig::DataSource* out) {
  const std::string where = "data_sources[" + std::to_string(i) + "]";
  base::Status status = CheckUnknown(ds, where);
  if (!status.ok())
    return status;
  if (!ds.has_config())
    return base::ErrStatus("%s.config is missing", where.c_str());
  const perfetto::protos::DataSourceConfig& c = ds.config();
  status = CheckUnknown(c, where + ".config");
  if (!status.ok())
    return status;
  if (!IsPrintableName(c.name(), kMaxNameSize)) {
    return base::ErrStatus(
        "%s.config.name must be 1..%zu printable ASCII characters",
        where.c_str(), kMaxNameSize);
  }
  if (c.target_buffer() >= num_buffers) {
    return base::ErrStatus(
        "%s.config.target_buffer is %u, but the config has %zu buffers",
        where.c_str(), c.target_buffer(), num_buffers);
  }
  out->name = c.name();
  out->target_buffer = c.target_buffer();
  if (static_cast<size_t>(ds.producer_name_filter_size()) >
      kMaxProducerNameFilters) {
    return base::ErrStatus("%s.producer_name_filter: at most %zu entries",
                           where.c_str(), kMaxProducerNameFilters);
  }
  for (const std::string& f : ds.producer_name_filter()) {
    if (!IsPrintableName(f, kMaxNameSize)) {
      return base::ErrStatus(
          "%s.producer_name_filter: entries must be 1..%zu printable ASCII "
          "characters",
          where.c_str(), kMaxNameSize);
    }
    out->producer_name_filter.push_back(f);
  }
  if (!c.has_track_event_config())
    return base::OkStatus();
  const perfetto::protos::TrackEventConfig& te = c.track_event_config();
  status = CheckUnknown(te, where + ".config.track_event_config");
  if (!status.ok())
    return status;
  if (static_cast<size_t>(te.enabled_categories_size()) +
          static_cast<size_t>(te.disabled_categories_size()) >
      kMaxPatterns) {
    return base::ErrStatus(
        "%s.config.track_event_config: at most %zu category patterns in all",
        where.c_str(), kMaxPatterns);
  }
  for (int k = 0; k < 2; ++k) {
    const auto& list =
        k == 0 ? te.enabled_categories() : te.disabled_categories();
    for (const std::string& p : list) {
      if (!IsPrintableName(p, kMaxPatternSize)) {
        return base::ErrStatus(
            "%s.config.track_event_config.%s_categories: patterns must be "
            "1..%zu printable ASCII characters",
            where.c_str(), k == 0 ? "enabled" : "disabled", kMaxPatternSize);
      }
      (k == 0 ? out->enabled_categories : out->disabled_categories)
          .push_back(p);
    }
  }
  return base::OkStatus();
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

base::Status ValidateTraceConfig(const TraceConfig& config,
                                 SessionConfig* out) {
  *out = SessionConfig();
  base::Status status = CheckUnknown(config, "TraceConfig");
  if (!status.ok())
    return status;
  status = ValidateBuffers(config, out);
  if (!status.ok())
    return status;
  if (static_cast<size_t>(config.data_sources_size()) >
      kMaxDataSourcesPerSession) {
    return base::ErrStatus("data_sources: at most %zu per session (got %d)",
                           kMaxDataSourcesPerSession,
                           config.data_sources_size());
  }
  for (int i = 0; i < config.data_sources_size(); ++i) {
    SessionConfig::DataSource ds;
    status =
        ValidateDataSource(config.data_sources(i), i, out->buffers.size(), &ds);
    if (!status.ok())
      return status;
    out->data_sources.push_back(std::move(ds));
  }
  out->duration_ms = config.duration_ms();
  out->write_into_file = config.write_into_file();
  if (config.has_file_write_period_ms() && !out->write_into_file)
    return base::ErrStatus("file_write_period_ms needs write_into_file");
  if (config.file_write_period_ms() != 0) {
    if (config.file_write_period_ms() < kMinFileWritePeriodMs) {
      return base::ErrStatus("file_write_period_ms must be 0 or >= %u (got %u)",
                             kMinFileWritePeriodMs,
                             config.file_write_period_ms());
    }
    out->file_write_period_ms = config.file_write_period_ms();
  }
  if (config.max_file_size_bytes() != 0 && !out->write_into_file)
    return base::ErrStatus("max_file_size_bytes needs write_into_file");
  out->max_file_size_bytes = config.max_file_size_bytes();
  out->flush_period_ms = config.flush_period_ms();
  if (out->flush_period_ms != 0 && out->flush_period_ms < 100) {
    return base::ErrStatus("flush_period_ms must be 0 or >= 100 (got %u)",
                           out->flush_period_ms);
  }
  status = CheckTimeout(config.flush_timeout_ms(), "flush_timeout_ms",
                        &out->flush_timeout_ms);
  if (!status.ok())
    return status;
  status = CheckTimeout(config.data_source_stop_timeout_ms(),
                        "data_source_stop_timeout_ms",
                        &out->data_source_stop_timeout_ms);
  if (!status.ok())
    return status;
  if (config.has_incremental_state_config()) {
    status = CheckUnknown(config.incremental_state_config(),
                          "incremental_state_config");
    if (!status.ok())
      return status;
    out->clear_period_ms = config.incremental_state_config().clear_period_ms();
  }
  if (config.has_unique_session_name()) {
    if (!IsPrintableName(config.unique_session_name(), kMaxSessionNameSize)) {
      return base::ErrStatus(
          "unique_session_name must be 1..%zu printable ASCII characters",
          kMaxSessionNameSize);
    }
    out->unique_session_name = config.unique_session_name();
  }
  if (!config.SerializeToString(&out->serialized))
    return base::ErrStatus("TraceConfig: cannot serialize it");
  return base::OkStatus();
}

}  // namespace traced
}  // namespace ringtrace
