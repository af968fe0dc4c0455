/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/trace_buffer_v2_sink.h"

namespace ringtrace {
namespace traced {

TraceBufferV2Sink::~TraceBufferV2Sink() = default;

}  // namespace traced
}  // namespace ringtrace
