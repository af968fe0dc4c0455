/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The LTTng-UST tracepoint provider of lttng_loadgen.cc (see there). Not
// part of the GN build: tools/compare-lttng compiles it with the system
// compiler against liblttng-ust-dev when LTTng is installed.
//
// One event, the same information as ringtrace_loadgen's counter sample:
// the timestamp (in LTTng's event header), the track, the event type and
// the value. About 28 bytes per event in the ring with the compact header
// and alignment, against about 30 for ringtrace's TrackEvent.

#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER ringtrace_loadgen

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng_loadgen_tp.h"

#if !defined(SRC_TOOLS_LOADGEN_LTTNG_LTTNG_LOADGEN_TP_H_) || \
    defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define SRC_TOOLS_LOADGEN_LTTNG_LTTNG_LOADGEN_TP_H_

#include <stdint.h>

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
    ringtrace_loadgen,
    counter,
    LTTNG_UST_TP_ARGS(uint64_t, track, uint8_t, type, int64_t, value),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint64_t, track, track)
                            lttng_ust_field_integer(uint8_t, type, type)
                                lttng_ust_field_integer(int64_t, value, value)))

#endif  // SRC_TOOLS_LOADGEN_LTTNG_LTTNG_LOADGEN_TP_H_

#include <lttng/tracepoint-event.h>
