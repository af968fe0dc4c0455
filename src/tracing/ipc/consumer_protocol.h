/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The consumer protocol's framing and validation (docs/sessions.md,
// "Consumer protocol"). A consumer (the `ringtrace` CLI, ConsumerClient)
// and ringtraced exchange protobuf messages of
// protos/ringtrace/ipc/consumer_port.proto over a SOCK_SEQPACKET socket,
// one message per datagram:
//
//   offset 0  uint32 magic        kConsumerMagic ("RTCP")
//   offset 4  uint32 type         ConsumerMessageType (1 request, 2 response)
//   offset 8  uint32 payload_size the bytes after this 12-byte header
//   offset 12 payload             a serialized ConsumerRequest/Response
//
// Integers are little-endian. A datagram is valid only if it is EXACTLY
// header + payload_size bytes, at most kMaxConsumerMessageSize in all.
// EnableTracing and CloneSession carry exactly one fd (SCM_RIGHTS, the file
// the trace goes to); every other message carries none.
//
// Both sides treat what they receive as hostile. DecodeConsumerRequest()
// checks the framing, parses, and then checks the request's meaning: one
// request set, a nonzero request_id, no field this build does not know, a
// nonzero session_id where one is needed, the fd rule above, and for
// EnableTracing ValidateTraceConfig(). DecodeConsumerResponse() checks what
// a client relies on (request ids; every string valid UTF-8 without control
// characters, so a hostile service cannot drive the user's terminal). Every
// defect is a Status whose message names the field at fault
// ("buffers[1].size_kb: 0 is outside 1..4194240"); nothing here crashes,
// whatever the bytes.
//
// This library links the full libprotobuf (reflection finds unknown fields
// and walks strings); the producer-side //src/tracing/ipc:ipc that apps link
// does not depend on it.
//
// Thread model: free functions without state, safe from any thread.

#ifndef SRC_TRACING_IPC_CONSUMER_PROTOCOL_H_
#define SRC_TRACING_IPC_CONSUMER_PROTOCOL_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "ringtrace/status.h"
#include "src/tracing/ipc/wire_protocol.h"

namespace perfetto {
namespace protos {
class TraceConfig;
}  // namespace protos
}  // namespace perfetto

namespace ringtrace {
namespace protos {
class ConsumerRequest;
class ConsumerResponse;
}  // namespace protos

namespace ipc {

constexpr uint32_t kConsumerMagic = 0x50435452;  // bytes "RTCP" little-endian
constexpr size_t kConsumerHeaderSize = 12;
constexpr size_t kMaxConsumerMessageSize = 64 * 1024;
constexpr size_t kMaxConsumerPayloadSize =
    kMaxConsumerMessageSize - kConsumerHeaderSize;

enum class ConsumerMessageType : uint32_t {
  kRequest = 1,
  kResponse = 2,
};

// ---- TraceConfig limits (ValidateTraceConfig) -----------------------------
constexpr size_t kMaxBuffersPerSession = 8;
// TraceBufferV2's largest buffer, 0xffff0000 bytes, in KiB.
constexpr uint32_t kMaxBufferSizeKb = 4194240;
constexpr size_t kMaxDataSourcesPerConfig = 64;
// kMaxDataSourceNameSize, kMaxCategoryPatterns (the enabled and disabled
// category and tag entries of one data source, all four lists together) and
// kMaxCategoryPatternSize are the producer protocol's (wire_protocol.h): a
// validated config always encodes as StartDataSource. An entry is a name or
// a pattern with one trailing '*'; a '*' anywhere else is an error.
constexpr size_t kMaxProducerNameFilters = 64;
constexpr size_t kMaxProducerNameFilterSize = 64;
constexpr size_t kMaxUniqueSessionNameSize = 64;
// file_write_period_ms, flush_period_ms and
// incremental_state_config.clear_period_ms: 0 (the default) or at least this.
constexpr uint32_t kMinPeriodMs = 100;
constexpr uint64_t kMaxDurationMs = 7ull * 24 * 3600 * 1000;
// flush_timeout_ms and data_source_stop_timeout_ms.
constexpr uint32_t kMaxTimeoutMs = 10 * 60 * 1000;

// Checks |config| against the rules of docs/sessions.md ("Consumer
// protocol", "Validation"): the ringtraced service runs it on every
// EnableTracing, the CLI before it sends one. Ok, or the first defect found,
// its message starting with the field's path inside the config.
base::Status ValidateTraceConfig(const perfetto::protos::TraceConfig& config);

// Whether the datagram of |request| must carry an fd (EnableTracing,
// CloneSession).
bool ConsumerRequestNeedsFd(const protos::ConsumerRequest& request);

// Serializes |message| behind a header into |out| (replacing its content).
// Fails if the result would exceed kMaxConsumerMessageSize (a service's
// ServiceState with very many producers, say); |out| is then empty.
base::Status EncodeConsumerRequest(const protos::ConsumerRequest& message,
                                   std::vector<uint8_t>* out);
base::Status EncodeConsumerResponse(const protos::ConsumerResponse& message,
                                    std::vector<uint8_t>* out);

// Decodes and validates one received datagram of |size| bytes; |has_fd|:
// whether it carried an fd. On error |out| holds no meaning.
base::Status DecodeConsumerRequest(const uint8_t* data,
                                   size_t size,
                                   bool has_fd,
                                   protos::ConsumerRequest* out);
// Responses never carry fds: a datagram with one is refused by the caller
// (ConsumerClient closes it). Checked: framing; request_id 0 exactly when
// tracing_ended is set; ok present; an error message when ok is false;
// every string field valid UTF-8 without control characters (C0, DEL, C1).
// Unknown fields are accepted (a newer service may add some).
base::Status DecodeConsumerResponse(const uint8_t* data,
                                    size_t size,
                                    protos::ConsumerResponse* out);

// Checks that |fd| can receive a trace: a regular file opened for writing.
// The service runs it on the fd of EnableTracing/CloneSession, the CLI on
// its --out file before sending it.
base::Status CheckTraceFileFd(int fd);

// A detached session's key (DetachRequest, AttachRequest): 1..
// kMaxDetachKeySize bytes of [A-Za-z0-9._-]. The error names |where|, not
// the key.
constexpr size_t kMaxDetachKeySize = 64;
base::Status CheckDetachKey(const char* where, const std::string& key);

}  // namespace ipc
}  // namespace ringtrace

#endif  // SRC_TRACING_IPC_CONSUMER_PROTOCOL_H_
