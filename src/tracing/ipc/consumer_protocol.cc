/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/ipc/consumer_protocol.h"

#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include <string>
#include <utility>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/unknown_field_set.h>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/ringtrace/ipc/consumer_port.pb.h"
#include "src/base/byte_order.h"

namespace ringtrace {
namespace ipc {
namespace {

using base::GetU32;
using base::PutU32;
using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;
using perfetto::protos::TraceConfig;

std::string Join(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}

std::string Index(const std::string& path, int i) {
  return path + "[" + std::to_string(i) + "]";
}

// ---- Generic checks by reflection -----------------------------------------

// DataSourceConfig fields numbered this or more are a data source's own
// config (Perfetto numbers ftrace_config 100, process_stats_config 103,
// track_event_config 113): the service passes the whole DataSourceConfig
// to the producer, which parses its part, so a number this build does not
// know there is not an error (docs/sessions.md, "A data source's own
// config").
constexpr int kFirstDataSourceOwnField = 100;

// |f|, unknown in |msg|, is a data source's own field passed through.
bool PassesThrough(const Message& msg, const UnknownField& f) {
  return msg.GetDescriptor() ==
             perfetto::protos::DataSourceConfig::descriptor() &&
         f.number() >= kFirstDataSourceOwnField &&
         msg.GetDescriptor()->FindFieldByNumber(f.number()) == nullptr;
}

// The first field of |msg| or below it that this build does not know, as an
// error naming its path (|root| names |msg| itself in the message). A known
// field number lands among the unknown fields too when its value cannot be
// taken: an enum value outside the enum, or the wrong wire type. Does not
// descend into messages of type |stop_at| (checked elsewhere with paths of
// their own).
base::Status CheckNoUnknownFields(const Message& msg,
                                  const std::string& path,
                                  const char* root,
                                  const Descriptor* stop_at) {
  const Reflection* reflection = msg.GetReflection();
  const UnknownFieldSet& unknown = reflection->GetUnknownFields(msg);
  for (int u = 0; u < unknown.field_count(); u++) {
    const UnknownField& f = unknown.field(u);
    if (PassesThrough(msg, f))
      continue;
    const FieldDescriptor* known =
        msg.GetDescriptor()->FindFieldByNumber(f.number());
    if (!known) {
      return base::ErrStatus(
          "%s: unknown field %d (not understood by this "
          "version of ringtrace)",
          path.empty() ? root : path.c_str(), f.number());
    }
    const std::string where = Join(path, known->name());
    if (known->enum_type() && f.type() == UnknownField::TYPE_VARINT) {
      return base::ErrStatus("%s: %" PRIu64 " is not a %s value", where.c_str(),
                             f.varint(), known->enum_type()->name().c_str());
    }
    return base::ErrStatus("%s: wrong wire type", where.c_str());
  }
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(msg, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE ||
        field->message_type() == stop_at) {
      continue;
    }
    const std::string where = Join(path, field->name());
    if (!field->is_repeated()) {
      base::Status s = CheckNoUnknownFields(reflection->GetMessage(msg, field),
                                            where, root, stop_at);
      if (!s.ok())
        return s;
      continue;
    }
    const int n = reflection->FieldSize(msg, field);
    for (int i = 0; i < n; i++) {
      base::Status s =
          CheckNoUnknownFields(reflection->GetRepeatedMessage(msg, field, i),
                               Index(where, i), root, stop_at);
      if (!s.ok())
        return s;
    }
  }
  return base::OkStatus();
}

// The length of the UTF-8 sequence at |p| (|n| bytes available) and its
// code point; 0 if it is not a valid, shortest-form sequence of a scalar
// value.
size_t DecodeUtf8(const uint8_t* p, size_t n, uint32_t* cp) {
  const uint8_t c = p[0];
  size_t len;
  uint32_t min;
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  if ((c & 0xe0) == 0xc0) {
    len = 2;
    min = 0x80;
    *cp = c & 0x1fu;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3;
    min = 0x800;
    *cp = c & 0x0fu;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4;
    min = 0x10000;
    *cp = c & 0x07u;
  } else {
    return 0;
  }
  if (n < len)
    return 0;
  for (size_t k = 1; k < len; k++) {
    if ((p[k] & 0xc0) != 0x80)
      return 0;
    *cp = (*cp << 6) | (p[k] & 0x3fu);
  }
  if (*cp < min || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
    return 0;
  return len;
}

// |value| is valid UTF-8 without C0 or C1 control characters (nor DEL):
// safe to print on a terminal.
base::Status CheckPrintableUtf8(const std::string& where,
                                const std::string& value) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(value.data());
  for (size_t i = 0; i < value.size();) {
    uint32_t cp = 0;
    const size_t len = DecodeUtf8(p + i, value.size() - i, &cp);
    if (len == 0) {
      return base::ErrStatus("%s: invalid UTF-8 at offset %zu", where.c_str(),
                             i);
    }
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
      return base::ErrStatus("%s: control character U+%04X at offset %zu",
                             where.c_str(), cp, i);
    }
    i += len;
  }
  return base::OkStatus();
}

// Every string field (not bytes) of |msg| and below it passes
// CheckPrintableUtf8.
base::Status CheckStrings(const Message& msg, const std::string& path) {
  const Reflection* reflection = msg.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(msg, &fields);
  for (const FieldDescriptor* field : fields) {
    const std::string where = Join(path, field->name());
    const bool repeated = field->is_repeated();
    const int n = repeated ? reflection->FieldSize(msg, field) : 1;
    for (int i = 0; i < n; i++) {
      const std::string item = repeated ? Index(where, i) : where;
      base::Status s;
      if (field->type() == FieldDescriptor::TYPE_STRING) {
        std::string scratch;
        const std::string& value =
            repeated ? reflection->GetRepeatedStringReference(msg, field, i,
                                                              &scratch)
                     : reflection->GetStringReference(msg, field, &scratch);
        s = CheckPrintableUtf8(item, value);
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        s = CheckStrings(repeated
                             ? reflection->GetRepeatedMessage(msg, field, i)
                             : reflection->GetMessage(msg, field),
                         item);
      }
      if (!s.ok())
        return s;
    }
  }
  return base::OkStatus();
}

// ---- TraceConfig rules -----------------------------------------------------

// |value| is |min_size|..|max_size| bytes of printable ASCII (0x20..0x7e).
base::Status CheckPrintable(const std::string& where,
                            const std::string& value,
                            size_t min_size,
                            size_t max_size) {
  if (value.size() < min_size)
    return base::ErrStatus("%s: empty", where.c_str());
  if (value.size() > max_size) {
    return base::ErrStatus("%s: %zu bytes, at most %zu", where.c_str(),
                           value.size(), max_size);
  }
  for (size_t i = 0; i < value.size(); i++) {
    const uint8_t c = static_cast<uint8_t>(value[i]);
    if (c < 0x20 || c > 0x7e) {
      return base::ErrStatus(
          "%s: byte 0x%02x at offset %zu is not printable ASCII", where.c_str(),
          c, i);
    }
  }
  return base::OkStatus();
}

base::Status CheckCount(const std::string& where,
                        int count,
                        size_t min,
                        size_t max) {
  if (count < 0 || static_cast<size_t>(count) < min ||
      static_cast<size_t>(count) > max) {
    return base::ErrStatus("%s: %d entries, expected %zu..%zu", where.c_str(),
                           count, min, max);
  }
  return base::OkStatus();
}

// A period in ms: 0 (|zero_means|) or at least kMinPeriodMs.
base::Status CheckPeriod(const char* where,
                         uint32_t value,
                         const char* zero_means) {
  if (value != 0 && value < kMinPeriodMs) {
    return base::ErrStatus("%s: %u is below %u (0 means %s)", where, value,
                           kMinPeriodMs, zero_means);
  }
  return base::OkStatus();
}

base::Status CheckTimeout(const char* where, uint32_t value) {
  if (value > kMaxTimeoutMs) {
    return base::ErrStatus("%s: %u is outside 0..%u", where, value,
                           kMaxTimeoutMs);
  }
  return base::OkStatus();
}

base::Status CheckBuffers(const TraceConfig& config) {
  base::Status s =
      CheckCount("buffers", config.buffers_size(), 1, kMaxBuffersPerSession);
  if (!s.ok())
    return s;
  for (int i = 0; i < config.buffers_size(); i++) {
    const uint32_t size_kb = config.buffers(i).size_kb();
    if (size_kb < 1 || size_kb > kMaxBufferSizeKb) {
      return base::ErrStatus("buffers[%d].size_kb: %u is outside 1..%u", i,
                             size_kb, kMaxBufferSizeKb);
    }
    // fill_policy: every value the enum has is valid (UNSPECIFIED means
    // RING_BUFFER); one it has not is caught as an unknown field.
  }
  return base::OkStatus();
}

// One list of TrackEventConfig entries: each a name or a pattern (one
// trailing '*'), printable, 1..kMaxCategoryPatternSize bytes.
base::Status CheckPatternList(
    const std::string& where,
    const google::protobuf::RepeatedPtrField<std::string>& entries) {
  for (int j = 0; j < entries.size(); j++) {
    const std::string item = Index(where, j);
    base::Status s =
        CheckPrintable(item, entries.Get(j), 1, kMaxCategoryPatternSize);
    if (!s.ok())
      return s;
    const size_t star = entries.Get(j).find('*');
    if (star != std::string::npos && star + 1 != entries.Get(j).size()) {
      return base::ErrStatus(
          "%s: '%s': a '*' may only end a pattern (a prefix match)",
          item.c_str(), entries.Get(j).c_str());
    }
  }
  return base::OkStatus();
}

base::Status CheckCategories(const std::string& path,
                             const perfetto::protos::TrackEventConfig& te) {
  // Each size is below INT_MAX: the sum of four cannot overflow a size_t.
  const size_t total = static_cast<size_t>(te.enabled_categories_size()) +
                       static_cast<size_t>(te.disabled_categories_size()) +
                       static_cast<size_t>(te.enabled_tags_size()) +
                       static_cast<size_t>(te.disabled_tags_size());
  if (total > kMaxCategoryPatterns) {
    return base::ErrStatus(
        "%s: %zu category and tag patterns in all, at most %zu", path.c_str(),
        total, kMaxCategoryPatterns);
  }
  const std::pair<const char*,
                  const google::protobuf::RepeatedPtrField<std::string>*>
      lists[] = {{".enabled_categories", &te.enabled_categories()},
                 {".disabled_categories", &te.disabled_categories()},
                 {".enabled_tags", &te.enabled_tags()},
                 {".disabled_tags", &te.disabled_tags()}};
  for (const auto& [field, entries] : lists) {
    base::Status s = CheckPatternList(path + field, *entries);
    if (!s.ok())
      return s;
  }
  return base::OkStatus();
}

base::Status CheckDataSource(const TraceConfig& config, int i) {
  const TraceConfig::DataSource& ds = config.data_sources(i);
  const std::string path = Index("data_sources", i);
  if (!ds.has_config())
    return base::ErrStatus("%s.config: missing", path.c_str());
  const perfetto::protos::DataSourceConfig& dsc = ds.config();
  base::Status s = CheckPrintable(path + ".config.name", dsc.name(), 1,
                                  kMaxDataSourceNameSize);
  if (!s.ok())
    return s;
  if (dsc.target_buffer() >= static_cast<uint32_t>(config.buffers_size())) {
    return base::ErrStatus(
        "%s.config.target_buffer: %u is outside 0..%d (the buffers entries)",
        path.c_str(), dsc.target_buffer(), config.buffers_size() - 1);
  }
  // The producer receives it whole (ipc::StartDataSourceMsg::config).
  if (dsc.ByteSizeLong() > kMaxDataSourceConfigSize) {
    return base::ErrStatus(
        "%s.config: %zu bytes serialized, over the %zu a data source's config "
        "may have",
        path.c_str(), dsc.ByteSizeLong(), kMaxDataSourceConfigSize);
  }
  if (dsc.has_track_event_config()) {
    s = CheckCategories(path + ".config.track_event_config",
                        dsc.track_event_config());
    if (!s.ok())
      return s;
  }
  s = CheckCount(path + ".producer_name_filter", ds.producer_name_filter_size(),
                 0, kMaxProducerNameFilters);
  if (!s.ok())
    return s;
  for (int j = 0; j < ds.producer_name_filter_size(); j++) {
    s = CheckPrintable(Index(path + ".producer_name_filter", j),
                       ds.producer_name_filter(j), 1,
                       kMaxProducerNameFilterSize);
    if (!s.ok())
      return s;
  }
  return base::OkStatus();
}

base::Status CheckTimes(const TraceConfig& config) {
  if (config.duration_ms() > kMaxDurationMs) {
    return base::ErrStatus("duration_ms: %u is outside 0..%" PRIu64,
                           config.duration_ms(), kMaxDurationMs);
  }
  base::Status s = CheckPeriod("file_write_period_ms",
                               config.file_write_period_ms(), "5000");
  if (!s.ok())
    return s;
  s = CheckPeriod("flush_period_ms", config.flush_period_ms(),
                  "no periodic flush");
  if (!s.ok())
    return s;
  s = CheckPeriod("incremental_state_config.clear_period_ms",
                  config.incremental_state_config().clear_period_ms(),
                  "the producer's default");
  if (!s.ok())
    return s;
  s = CheckTimeout("flush_timeout_ms", config.flush_timeout_ms());
  if (!s.ok())
    return s;
  return CheckTimeout("data_source_stop_timeout_ms",
                      config.data_source_stop_timeout_ms());
}

// compression_type: DEFLATE compresses the file a session's end (or a
// clone) writes in one go. A streamed file (write_into_file) is written in
// periodic pieces, each of which must stay readable when the service dies
// after it; it is not compressed, and asking for both is refused rather
// than quietly writing an uncompressed file.
base::Status CheckCompression(const TraceConfig& config) {
  switch (config.compression_type()) {
    case TraceConfig::COMPRESSION_TYPE_UNSPECIFIED:
      return base::OkStatus();
    case TraceConfig::COMPRESSION_TYPE_DEFLATE:
      if (config.write_into_file()) {
        return base::ErrStatus(
            "compression_type: COMPRESSION_TYPE_DEFLATE with write_into_file "
            "is not supported (a streamed file is not compressed; drop one "
            "of the two)");
      }
      return base::OkStatus();
  }
  return base::ErrStatus("compression_type: %d is not a CompressionType value",
                         static_cast<int>(config.compression_type()));
}

// ---- Framing ---------------------------------------------------------------

base::Status Encode(const Message& message,
                    ConsumerMessageType type,
                    std::vector<uint8_t>* out) {
  out->clear();
  const size_t payload = message.ByteSizeLong();
  if (payload > kMaxConsumerPayloadSize) {
    return base::ErrStatus(
        "%s of %zu bytes does not fit one datagram (at most %zu)",
        message.GetDescriptor()->name().c_str(), payload,
        kMaxConsumerPayloadSize);
  }
  out->resize(kConsumerHeaderSize + payload);
  PutU32(out->data(), kConsumerMagic);
  PutU32(out->data() + 4, static_cast<uint32_t>(type));
  PutU32(out->data() + 8, static_cast<uint32_t>(payload));
  if (payload > 0 &&
      !message.SerializeToArray(out->data() + kConsumerHeaderSize,
                                static_cast<int>(payload))) {
    out->clear();
    return base::ErrStatus("cannot serialize %s",
                           message.GetDescriptor()->name().c_str());
  }
  return base::OkStatus();
}

// Checks the header of |data| and parses its payload into |out|.
base::Status DecodeFrame(const uint8_t* data,
                         size_t size,
                         ConsumerMessageType type,
                         Message* out) {
  out->Clear();
  if (size < kConsumerHeaderSize) {
    return base::ErrStatus(
        "datagram of %zu bytes, shorter than the %zu-byte "
        "header",
        size, kConsumerHeaderSize);
  }
  if (size > kMaxConsumerMessageSize) {
    return base::ErrStatus("datagram of %zu bytes, longer than %zu", size,
                           kMaxConsumerMessageSize);
  }
  const uint32_t magic = GetU32(data);
  if (magic != kConsumerMagic) {
    return base::ErrStatus(
        "bad magic 0x%08x (not a ringtrace consumer protocol message)", magic);
  }
  const uint32_t got_type = GetU32(data + 4);
  if (got_type != static_cast<uint32_t>(type)) {
    return base::ErrStatus(
        "message type %u, expected %u (%s)", got_type,
        static_cast<uint32_t>(type),
        type == ConsumerMessageType::kRequest ? "request" : "response");
  }
  const uint32_t payload_size = GetU32(data + 8);
  if (payload_size != size - kConsumerHeaderSize) {
    return base::ErrStatus("payload_size %u, but %zu bytes follow the header",
                           payload_size, size - kConsumerHeaderSize);
  }
  if (!out->ParseFromArray(data + kConsumerHeaderSize,
                           static_cast<int>(payload_size))) {
    out->Clear();
    return base::ErrStatus("%s: malformed protobuf payload",
                           out->GetDescriptor()->name().c_str());
  }
  return base::OkStatus();
}

// Fields of the request oneof seen on the wire: protobuf keeps only the last
// of several, so "exactly one request" is checked on the raw payload.
base::Status CheckSingleRequest(const uint8_t* payload, size_t size) {
  UnknownFieldSet raw;
  if (!raw.ParseFromArray(payload, static_cast<int>(size)))
    return base::ErrStatus("ConsumerRequest: malformed protobuf payload");
  const Descriptor* d = protos::ConsumerRequest::descriptor();
  const google::protobuf::OneofDescriptor* oneof =
      d->FindOneofByName("request");
  const FieldDescriptor* first = nullptr;
  for (int i = 0; i < raw.field_count(); i++) {
    const FieldDescriptor* f = d->FindFieldByNumber(raw.field(i).number());
    if (!f || f->containing_oneof() != oneof)
      continue;
    if (first && first != f) {
      return base::ErrStatus("%s and %s: more than one request in one message",
                             first->name().c_str(), f->name().c_str());
    }
    if (first) {
      return base::ErrStatus("%s: given twice in one message",
                             f->name().c_str());
    }
    first = f;
  }
  return base::OkStatus();
}

}  // namespace

base::Status CheckDetachKey(const char* where, const std::string& key) {
  if (key.empty() || key.size() > kMaxDetachKeySize) {
    return base::ErrStatus("%s: %zu bytes, expected 1..%zu", where, key.size(),
                           kMaxDetachKeySize);
  }
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) {
      return base::ErrStatus("%s: a byte outside [A-Za-z0-9._-]", where);
    }
  }
  return base::OkStatus();
}

namespace {

// The session_id of the requests that name a session.
base::Status CheckSessionId(const char* request, uint64_t session_id) {
  if (session_id == 0)
    return base::ErrStatus("%s.session_id: missing or 0", request);
  return base::OkStatus();
}

base::Status CheckRequestFields(const protos::ConsumerRequest& req) {
  using R = protos::ConsumerRequest;
  switch (req.request_case()) {
    case R::kEnableTracing:
      if (!req.enable_tracing().has_config())
        return base::ErrStatus("enable_tracing.config: missing");
      return ValidateTraceConfig(req.enable_tracing().config());
    case R::kDisableTracing:
      return CheckSessionId("disable_tracing",
                            req.disable_tracing().session_id());
    case R::kFlush: {
      base::Status s = CheckSessionId("flush", req.flush().session_id());
      if (!s.ok())
        return s;
      return CheckTimeout("flush.timeout_ms", req.flush().timeout_ms());
    }
    case R::kGetTraceStats:
      return CheckSessionId("get_trace_stats",
                            req.get_trace_stats().session_id());
    case R::kCloneSession:
      return CheckSessionId("clone_session", req.clone_session().session_id());
    case R::kQueryServiceState:
      return base::OkStatus();
    case R::kDetach: {
      base::Status s = CheckSessionId("detach", req.detach().session_id());
      if (!s.ok())
        return s;
      return CheckDetachKey("detach.key", req.detach().key());
    }
    case R::kAttach:
      return CheckDetachKey("attach.key", req.attach().key());
    case R::REQUEST_NOT_SET:
      break;
  }
  return base::ErrStatus(
      "no request set (exactly one of enable_tracing, disable_tracing, "
      "flush, get_trace_stats, clone_session, query_service_state, detach, "
      "attach)");
}

const char* RequestName(const protos::ConsumerRequest& req) {
  const FieldDescriptor* f =
      protos::ConsumerRequest::descriptor()->FindFieldByNumber(
          static_cast<int>(req.request_case()));
  return f ? f->name().c_str() : "request";
}

}  // namespace

base::Status ValidateTraceConfig(const TraceConfig& config) {
  base::Status s = CheckNoUnknownFields(config, "", "config", nullptr);
  if (!s.ok())
    return s;
  s = CheckBuffers(config);
  if (!s.ok())
    return s;
  s = CheckCount("data_sources", config.data_sources_size(), 1,
                 kMaxDataSourcesPerConfig);
  if (!s.ok())
    return s;
  for (int i = 0; i < config.data_sources_size(); i++) {
    s = CheckDataSource(config, i);
    if (!s.ok())
      return s;
  }
  s = CheckTimes(config);
  if (!s.ok())
    return s;
  if (!config.write_into_file()) {
    if (config.file_write_period_ms() != 0)
      return base::ErrStatus(
          "file_write_period_ms: set without write_into_file");
    if (config.max_file_size_bytes() != 0)
      return base::ErrStatus(
          "max_file_size_bytes: set without write_into_file");
  }
  s = CheckCompression(config);
  if (!s.ok())
    return s;
  if (!config.unique_session_name().empty()) {
    return CheckPrintable("unique_session_name", config.unique_session_name(),
                          1, kMaxUniqueSessionNameSize);
  }
  return base::OkStatus();
}

bool ConsumerRequestNeedsFd(const protos::ConsumerRequest& request) {
  return request.request_case() == protos::ConsumerRequest::kEnableTracing ||
         request.request_case() == protos::ConsumerRequest::kCloneSession;
}

base::Status EncodeConsumerRequest(const protos::ConsumerRequest& message,
                                   std::vector<uint8_t>* out) {
  return Encode(message, ConsumerMessageType::kRequest, out);
}

base::Status EncodeConsumerResponse(const protos::ConsumerResponse& message,
                                    std::vector<uint8_t>* out) {
  return Encode(message, ConsumerMessageType::kResponse, out);
}

base::Status DecodeConsumerRequest(const uint8_t* data,
                                   size_t size,
                                   bool has_fd,
                                   protos::ConsumerRequest* out) {
  base::Status s = DecodeFrame(data, size, ConsumerMessageType::kRequest, out);
  if (!s.ok())
    return s;
  s = CheckSingleRequest(data + kConsumerHeaderSize,
                         size - kConsumerHeaderSize);
  if (!s.ok())
    return s;
  // The config's own unknown fields are reported by ValidateTraceConfig(),
  // with paths inside the config.
  s = CheckNoUnknownFields(*out, "", "request", TraceConfig::descriptor());
  if (!s.ok())
    return s;
  if (out->request_id() == 0)
    return base::ErrStatus("request_id: missing or 0");
  s = CheckRequestFields(*out);
  if (!s.ok())
    return s;
  const bool needs_fd = ConsumerRequestNeedsFd(*out);
  if (needs_fd && !has_fd) {
    return base::ErrStatus("%s: the message carries no fd (the trace file)",
                           RequestName(*out));
  }
  if (!needs_fd && has_fd) {
    return base::ErrStatus("%s: the message carries an fd, none expected",
                           RequestName(*out));
  }
  return base::OkStatus();
}

base::Status DecodeConsumerResponse(const uint8_t* data,
                                    size_t size,
                                    protos::ConsumerResponse* out) {
  base::Status s = DecodeFrame(data, size, ConsumerMessageType::kResponse, out);
  if (!s.ok())
    return s;
  s = CheckStrings(*out, "");
  if (!s.ok())
    return s;
  if (!out->has_ok())
    return base::ErrStatus("ok: missing");
  if (out->tracing_ended()) {
    if (out->request_id() != 0) {
      return base::ErrStatus("request_id: %" PRIu64
                             " on a tracing_ended event, 0 expected",
                             out->request_id());
    }
    if (out->session_id() == 0)
      return base::ErrStatus("session_id: missing on a tracing_ended event");
  } else if (out->request_id() == 0) {
    return base::ErrStatus(
        "request_id: 0 on a response that is not a tracing_ended event");
  }
  if (!out->ok() && out->error().empty())
    return base::ErrStatus("error: missing on a failed response");
  return base::OkStatus();
}

base::Status CheckTraceFileFd(int fd) {
  struct stat st = {};
  if (fd < 0 || fstat(fd, &st) != 0)
    return base::ErrStatus("trace file: not an open fd");
  if (!S_ISREG(st.st_mode))
    return base::ErrStatus("trace file: not a regular file");
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
    return base::ErrStatus("trace file: not open for writing");
  return base::OkStatus();
}

}  // namespace ipc
}  // namespace ringtrace
