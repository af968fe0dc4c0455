/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/ipc/consumer_protocol.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "protos/perfetto/config/trace_config.pb.h"
#include "protos/ringtrace/ipc/consumer_port.pb.h"
#include "src/base/scoped_fd.h"
#include "src/base/test/temp_dir.h"

namespace ringtrace {
namespace ipc {
namespace {

using perfetto::protos::TraceConfig;
using protos::ConsumerRequest;
using protos::ConsumerResponse;

TraceConfig ValidConfig() {
  TraceConfig config;
  config.add_buffers()->set_size_kb(1024);
  config.add_data_sources()->mutable_config()->set_name("track_event");
  return config;
}

// "ok", or the error message of ValidateTraceConfig().
std::string Check(const TraceConfig& config) {
  const base::Status s = ValidateTraceConfig(config);
  return s.ok() ? "ok" : s.message();
}

std::vector<uint8_t> Frame(uint32_t magic,
                           uint32_t type,
                           uint32_t payload_size,
                           const std::string& payload) {
  std::vector<uint8_t> out(12 + payload.size());
  const uint32_t words[3] = {magic, type, payload_size};
  for (size_t w = 0; w < 3; w++) {
    for (size_t b = 0; b < 4; b++)
      out[w * 4 + b] = static_cast<uint8_t>(words[w] >> (8 * b));
  }
  memcpy(out.data() + 12, payload.data(), payload.size());
  return out;
}

std::vector<uint8_t> RequestFrame(const std::string& payload) {
  return Frame(kConsumerMagic, 1, static_cast<uint32_t>(payload.size()),
               payload);
}

std::vector<uint8_t> ResponseFrame(const std::string& payload) {
  return Frame(kConsumerMagic, 2, static_cast<uint32_t>(payload.size()),
               payload);
}

std::string DecodeRequest(const std::vector<uint8_t>& datagram,
                          bool has_fd = false,
                          ConsumerRequest* out = nullptr) {
  ConsumerRequest scratch;
  const base::Status s = DecodeConsumerRequest(datagram.data(), datagram.size(),
                                               has_fd, out ? out : &scratch);
  return s.ok() ? "ok" : s.message();
}

std::string DecodeRequest(const ConsumerRequest& req, bool has_fd = false) {
  return DecodeRequest(RequestFrame(req.SerializeAsString()), has_fd);
}

std::string DecodeResponse(const ConsumerResponse& resp,
                           ConsumerResponse* out = nullptr) {
  const std::vector<uint8_t> datagram = ResponseFrame(resp.SerializeAsString());
  ConsumerResponse scratch;
  const base::Status s = DecodeConsumerResponse(
      datagram.data(), datagram.size(), out ? out : &scratch);
  return s.ok() ? "ok" : s.message();
}

// ---- ValidateTraceConfig ---------------------------------------------------

TEST(ConsumerProtocolTest, ValidConfigsPass) {
  EXPECT_EQ(Check(ValidConfig()), "ok");

  // Every limit at its edge.
  TraceConfig config;
  for (size_t i = 0; i < kMaxBuffersPerSession; i++) {
    auto* b = config.add_buffers();
    b->set_size_kb(i == 0 ? 1 : kMaxBufferSizeKb);
    b->set_fill_policy(i % 3 == 0   ? TraceConfig::BufferConfig::UNSPECIFIED
                       : i % 3 == 1 ? TraceConfig::BufferConfig::RING_BUFFER
                                    : TraceConfig::BufferConfig::DISCARD);
  }
  for (size_t i = 0; i < kMaxDataSourcesPerConfig; i++) {
    auto* ds = config.add_data_sources();
    ds->mutable_config()->set_name(std::string(kMaxDataSourceNameSize, 'n'));
    ds->mutable_config()->set_target_buffer(kMaxBuffersPerSession - 1);
    if (i == 0) {
      auto* te = ds->mutable_config()->mutable_track_event_config();
      for (size_t j = 0; j < kMaxCategoryPatterns / 4; j++) {
        te->add_enabled_categories(std::string(kMaxCategoryPatternSize, 'e'));
        te->add_disabled_categories("d ~*");
        te->add_enabled_tags(std::string(kMaxCategoryPatternSize - 1, 't') +
                             "*");
        te->add_disabled_tags("debug");
      }
      for (size_t j = 0; j < kMaxProducerNameFilters; j++)
        ds->add_producer_name_filter(
            std::string(kMaxProducerNameFilterSize, 'p'));
    }
  }
  config.set_duration_ms(static_cast<uint32_t>(kMaxDurationMs));
  config.set_write_into_file(true);
  config.set_file_write_period_ms(kMinPeriodMs);
  config.set_max_file_size_bytes(1);
  config.set_flush_period_ms(kMinPeriodMs);
  config.set_flush_timeout_ms(kMaxTimeoutMs);
  config.set_data_source_stop_timeout_ms(kMaxTimeoutMs);
  config.mutable_incremental_state_config()->set_clear_period_ms(kMinPeriodMs);
  config.set_unique_session_name(std::string(kMaxUniqueSessionNameSize, 'u'));
  EXPECT_EQ(Check(config), "ok");

  // Zero periods mean the defaults.
  TraceConfig zeros = ValidConfig();
  zeros.set_write_into_file(true);
  zeros.set_file_write_period_ms(0);
  zeros.set_flush_period_ms(0);
  zeros.mutable_incremental_state_config()->set_clear_period_ms(0);
  zeros.set_unique_session_name("");
  EXPECT_EQ(Check(zeros), "ok");
}

TEST(ConsumerProtocolTest, BufferRules) {
  TraceConfig config = ValidConfig();
  config.clear_buffers();
  EXPECT_EQ(Check(config), "buffers: 0 entries, expected 1..8");

  config = ValidConfig();
  for (int i = 0; i < 8; i++)
    config.add_buffers()->set_size_kb(4);
  EXPECT_EQ(Check(config), "buffers: 9 entries, expected 1..8");

  config = ValidConfig();
  config.add_buffers();  // size_kb unset reads 0
  EXPECT_EQ(Check(config), "buffers[1].size_kb: 0 is outside 1..4194240");

  config = ValidConfig();
  config.mutable_buffers(0)->set_size_kb(kMaxBufferSizeKb + 1);
  EXPECT_EQ(Check(config), "buffers[0].size_kb: 4194241 is outside 1..4194240");
}

TEST(ConsumerProtocolTest, DataSourceRules) {
  TraceConfig config = ValidConfig();
  config.clear_data_sources();
  EXPECT_EQ(Check(config), "data_sources: 0 entries, expected 1..64");

  config = ValidConfig();
  for (int i = 0; i < 64; i++)
    config.add_data_sources()->mutable_config()->set_name("x");
  EXPECT_EQ(Check(config), "data_sources: 65 entries, expected 1..64");

  config = ValidConfig();
  config.add_data_sources();
  EXPECT_EQ(Check(config), "data_sources[1].config: missing");

  config = ValidConfig();
  config.mutable_data_sources(0)->mutable_config()->clear_name();
  EXPECT_EQ(Check(config), "data_sources[0].config.name: empty");

  config = ValidConfig();
  config.mutable_data_sources(0)->mutable_config()->set_name(
      std::string(65, 'n'));
  EXPECT_EQ(Check(config), "data_sources[0].config.name: 65 bytes, at most 64");

  config = ValidConfig();
  config.mutable_data_sources(0)->mutable_config()->set_name("track\x1b[0m");
  EXPECT_EQ(Check(config),
            "data_sources[0].config.name: byte 0x1b at offset 5 is not "
            "printable ASCII");
  config.mutable_data_sources(0)->mutable_config()->set_name("caf\xc3\xa9");
  EXPECT_EQ(Check(config),
            "data_sources[0].config.name: byte 0xc3 at offset 3 is not "
            "printable ASCII");

  config = ValidConfig();
  config.add_buffers()->set_size_kb(4);
  config.mutable_data_sources(0)->mutable_config()->set_target_buffer(2);
  EXPECT_EQ(Check(config),
            "data_sources[0].config.target_buffer: 2 is outside 0..1 (the "
            "buffers entries)");
  config.mutable_data_sources(0)->mutable_config()->set_target_buffer(1);
  EXPECT_EQ(Check(config), "ok");
}

TEST(ConsumerProtocolTest, CategoryRules) {
  TraceConfig config = ValidConfig();
  auto* te = config.mutable_data_sources(0)
                 ->mutable_config()
                 ->mutable_track_event_config();
  for (int i = 0; i < 200; i++)
    te->add_enabled_categories("a");
  for (int i = 0; i < 27; i++)
    te->add_disabled_categories("b");
  for (int i = 0; i < 20; i++)
    te->add_enabled_tags("t");
  for (int i = 0; i < 9; i++)
    te->add_disabled_tags("u");
  EXPECT_EQ(Check(config), "ok");  // 256 in the four lists
  te->add_disabled_tags("u");
  EXPECT_EQ(Check(config),
            "data_sources[0].config.track_event_config: 257 category and tag "
            "patterns in all, at most 256");

  config = ValidConfig();
  te = config.mutable_data_sources(0)
           ->mutable_config()
           ->mutable_track_event_config();
  te->add_enabled_categories("gfx");
  te->add_enabled_categories("");
  EXPECT_EQ(Check(config),
            "data_sources[0].config.track_event_config.enabled_categories[1]: "
            "empty");
  te->set_enabled_categories(1, std::string(129, 'c'));
  EXPECT_EQ(Check(config),
            "data_sources[0].config.track_event_config.enabled_categories[1]: "
            "129 bytes, at most 128");
  te->set_enabled_categories(1, "ok*");
  te->add_disabled_categories(std::string("a\0b", 3));
  EXPECT_EQ(Check(config),
            "data_sources[0].config.track_event_config.disabled_categories[0]:"
            " byte 0x00 at offset 1 is not printable ASCII");

  // Tags follow the same rules; a '*' only ends a pattern.
  config = ValidConfig();
  te = config.mutable_data_sources(0)
           ->mutable_config()
           ->mutable_track_event_config();
  te->add_enabled_categories("*");
  te->add_disabled_categories("gfx.*");
  te->add_enabled_tags("slow");
  te->add_disabled_tags("de*");
  EXPECT_EQ(Check(config), "ok");
  te->add_enabled_tags("");
  EXPECT_EQ(Check(config),
            "data_sources[0].config.track_event_config.enabled_tags[1]: empty");
  te->set_enabled_tags(1, std::string(129, 't'));
  EXPECT_EQ(Check(config),
            "data_sources[0].config.track_event_config.enabled_tags[1]: 129 "
            "bytes, at most 128");
  te->set_enabled_tags(1, "debug");
  te->add_disabled_tags("a*b");
  EXPECT_EQ(Check(config),
            "data_sources[0].config.track_event_config.disabled_tags[1]: "
            "'a*b': a '*' may only end a pattern (a prefix match)");
  te->set_disabled_tags(1, "ab");
  te->add_enabled_categories("**");
  EXPECT_EQ(Check(config),
            "data_sources[0].config.track_event_config.enabled_categories[1]: "
            "'**': a '*' may only end a pattern (a prefix match)");
  te->set_enabled_categories(1, "*gfx");
  EXPECT_EQ(Check(config),
            "data_sources[0].config.track_event_config.enabled_categories[1]: "
            "'*gfx': a '*' may only end a pattern (a prefix match)");
}

TEST(ConsumerProtocolTest, ProducerNameFilterRules) {
  TraceConfig config = ValidConfig();
  auto* ds = config.mutable_data_sources(0);
  for (int i = 0; i < 65; i++)
    ds->add_producer_name_filter("app");
  EXPECT_EQ(Check(config),
            "data_sources[0].producer_name_filter: 65 entries, expected 0..64");

  config = ValidConfig();
  ds = config.mutable_data_sources(0);
  ds->add_producer_name_filter("app");
  ds->add_producer_name_filter("");
  EXPECT_EQ(Check(config), "data_sources[0].producer_name_filter[1]: empty");
  ds->set_producer_name_filter(1, std::string(65, 'p'));
  EXPECT_EQ(Check(config),
            "data_sources[0].producer_name_filter[1]: 65 bytes, at most 64");
  ds->set_producer_name_filter(1, "a\tb");
  EXPECT_EQ(Check(config),
            "data_sources[0].producer_name_filter[1]: byte 0x09 at offset 1 "
            "is not printable ASCII");
}

TEST(ConsumerProtocolTest, TimeRules) {
  TraceConfig config = ValidConfig();
  config.set_duration_ms(static_cast<uint32_t>(kMaxDurationMs + 1));
  EXPECT_EQ(Check(config), "duration_ms: 604800001 is outside 0..604800000");

  config = ValidConfig();
  config.set_write_into_file(true);
  config.set_file_write_period_ms(99);
  EXPECT_EQ(Check(config),
            "file_write_period_ms: 99 is below 100 (0 means 5000)");

  config = ValidConfig();
  config.set_flush_period_ms(1);
  EXPECT_EQ(Check(config),
            "flush_period_ms: 1 is below 100 (0 means no periodic flush)");

  config = ValidConfig();
  config.mutable_incremental_state_config()->set_clear_period_ms(50);
  EXPECT_EQ(Check(config),
            "incremental_state_config.clear_period_ms: 50 is below 100 (0 "
            "means the producer's default)");

  config = ValidConfig();
  config.set_flush_timeout_ms(kMaxTimeoutMs + 1);
  EXPECT_EQ(Check(config), "flush_timeout_ms: 600001 is outside 0..600000");

  config = ValidConfig();
  config.set_data_source_stop_timeout_ms(0xffffffffu);
  EXPECT_EQ(Check(config),
            "data_source_stop_timeout_ms: 4294967295 is outside 0..600000");
}

TEST(ConsumerProtocolTest, WriteIntoFileRules) {
  TraceConfig config = ValidConfig();
  config.set_file_write_period_ms(1000);
  EXPECT_EQ(Check(config), "file_write_period_ms: set without write_into_file");
  config.set_write_into_file(true);
  EXPECT_EQ(Check(config), "ok");

  config = ValidConfig();
  config.set_max_file_size_bytes(1 << 20);
  EXPECT_EQ(Check(config), "max_file_size_bytes: set without write_into_file");
  config.set_write_into_file(true);
  EXPECT_EQ(Check(config), "ok");
}

TEST(ConsumerProtocolTest, CompressionTypeRules) {
  TraceConfig config = ValidConfig();
  config.set_compression_type(TraceConfig::COMPRESSION_TYPE_UNSPECIFIED);
  EXPECT_EQ(Check(config), "ok");
  config.set_compression_type(TraceConfig::COMPRESSION_TYPE_DEFLATE);
  EXPECT_EQ(Check(config), "ok");
  // A streamed file is not compressed: refused, not ignored.
  config.set_write_into_file(true);
  EXPECT_EQ(Check(config),
            "compression_type: COMPRESSION_TYPE_DEFLATE with write_into_file "
            "is not supported (a streamed file is not compressed; drop one "
            "of the two)");
  config.set_compression_type(TraceConfig::COMPRESSION_TYPE_UNSPECIFIED);
  EXPECT_EQ(Check(config), "ok");

  // A value outside CompressionType (Perfetto's zstd is not in it), as it
  // arrives on the wire.
  config = ValidConfig();
  config.mutable_unknown_fields()->AddVarint(
      TraceConfig::kCompressionTypeFieldNumber, 2);
  TraceConfig parsed;
  ASSERT_TRUE(parsed.ParseFromString(config.SerializeAsString()));
  EXPECT_FALSE(parsed.has_compression_type());
  EXPECT_EQ(Check(parsed),
            "compression_type: 2 is not a CompressionType value");
}

TEST(ConsumerProtocolTest, UniqueSessionNameRules) {
  TraceConfig config = ValidConfig();
  config.set_unique_session_name(std::string(65, 'u'));
  EXPECT_EQ(Check(config), "unique_session_name: 65 bytes, at most 64");
  config.set_unique_session_name("boot\n");
  EXPECT_EQ(Check(config),
            "unique_session_name: byte 0x0a at offset 4 is not printable "
            "ASCII");
}

// Fields this build does not know are errors, never silently ignored: a
// config that means more than the service would do is refused.
TEST(ConsumerProtocolTest, UnknownConfigFieldsAreErrors) {
  TraceConfig config = ValidConfig();
  config.mutable_unknown_fields()->AddVarint(99, 1);
  EXPECT_EQ(Check(config),
            "config: unknown field 99 (not understood by this version of "
            "ringtrace)");

  // Through the wire, as the service sees them: a DataSourceConfig field
  // below 100 is the service's and must be known.
  config = ValidConfig();
  config.mutable_data_sources(0)
      ->mutable_config()
      ->mutable_unknown_fields()
      ->AddVarint(99, 1);
  TraceConfig parsed;
  ASSERT_TRUE(parsed.ParseFromString(config.SerializeAsString()));
  EXPECT_EQ(Check(parsed),
            "data_sources[0].config: unknown field 99 (not understood by "
            "this version of ringtrace)");

  // An enum value outside FillPolicy.
  config = ValidConfig();
  config.mutable_buffers(0)->mutable_unknown_fields()->AddVarint(4, 7);
  ASSERT_TRUE(parsed.ParseFromString(config.SerializeAsString()));
  EXPECT_FALSE(parsed.buffers(0).has_fill_policy());
  EXPECT_EQ(Check(parsed),
            "buffers[0].fill_policy: 7 is not a FillPolicy value");

  // A known field with the wrong wire type.
  config = ValidConfig();
  config.clear_buffers();
  TraceConfig::BufferConfig* buffer = config.add_buffers();
  buffer->mutable_unknown_fields()->AddLengthDelimited(1, "x");
  ASSERT_TRUE(parsed.ParseFromString(config.SerializeAsString()));
  EXPECT_EQ(Check(parsed), "buffers[0].size_kb: wrong wire type");
}

// The probes' configs (ftrace_config 100, process_stats_config 103,
// sys_stats_config 104, docs/probes.md) are fields this build knows: checked
// like any other, so a counter outside their enums, or an FtraceConfig
// field newer than this build, is refused by name rather than passed on.
TEST(ConsumerProtocolTest, ProbesConfigsAreCheckedAsKnownFields) {
  TraceConfig config = ValidConfig();
  perfetto::protos::DataSourceConfig* ds =
      config.mutable_data_sources(0)->mutable_config();
  ds->mutable_ftrace_config()->add_ftrace_events("sched/sched_switch");
  ds->mutable_ftrace_config()->mutable_compact_sched()->set_enabled(true);
  ds->mutable_process_stats_config()->set_proc_stats_poll_ms(100);
  ds->mutable_sys_stats_config()->add_meminfo_counters(
      perfetto::protos::MEMINFO_MEM_TOTAL);
  EXPECT_EQ(Check(config), "ok");
  ds->mutable_sys_stats_config()->mutable_unknown_fields()->AddVarint(
      perfetto::protos::SysStatsConfig::kMeminfoCountersFieldNumber, 999);
  TraceConfig parsed;
  ASSERT_TRUE(parsed.ParseFromString(config.SerializeAsString()));
  EXPECT_EQ(Check(parsed),
            "data_sources[0].config.sys_stats_config.meminfo_counters: 999 "
            "is not a MeminfoCounters value");

  config = ValidConfig();
  ds = config.mutable_data_sources(0)->mutable_config();
  // 2: Perfetto's FtraceConfig.atrace_categories, not in this build.
  ds->mutable_ftrace_config()->mutable_unknown_fields()->AddLengthDelimited(
      2, "gfx");
  ASSERT_TRUE(parsed.ParseFromString(config.SerializeAsString()));
  EXPECT_EQ(Check(parsed),
            "data_sources[0].config.ftrace_config: unknown field 2 (not "
            "understood by this version of ringtrace)");
}

// A DataSourceConfig field numbered 100 or more that this build does not
// know is the data source's own config: accepted, and kept in the bytes
// the producer receives (SessionConfig::DataSource::config). Only there:
// the same number elsewhere is still an error, and the whole config is
// bounded.
TEST(ConsumerProtocolTest, DataSourceOwnFieldsPassThrough) {
  TraceConfig config = ValidConfig();
  perfetto::protos::DataSourceConfig* ds =
      config.mutable_data_sources(0)->mutable_config();
  // 106: Perfetto's android_power_config, which this build does not have.
  ds->mutable_unknown_fields()->AddLengthDelimited(106, "power-like");
  ds->mutable_unknown_fields()->AddVarint(5000, 42);
  TraceConfig parsed;
  ASSERT_TRUE(parsed.ParseFromString(config.SerializeAsString()));
  EXPECT_EQ(Check(parsed), "ok");
  const std::string bytes = parsed.data_sources(0).config().SerializeAsString();
  EXPECT_NE(bytes.find("power-like"), std::string::npos);

  config = ValidConfig();
  config.mutable_buffers(0)->mutable_unknown_fields()->AddVarint(5000, 1);
  ASSERT_TRUE(parsed.ParseFromString(config.SerializeAsString()));
  EXPECT_EQ(Check(parsed),
            "buffers[0]: unknown field 5000 (not understood by this version "
            "of ringtrace)");

  // A pass-through field before a refused one: the refused one is named.
  config = ValidConfig();
  ds = config.mutable_data_sources(0)->mutable_config();
  ds->mutable_unknown_fields()->AddVarint(200, 1);
  ds->mutable_unknown_fields()->AddVarint(50, 1);
  ASSERT_TRUE(parsed.ParseFromString(config.SerializeAsString()));
  EXPECT_EQ(Check(parsed),
            "data_sources[0].config: unknown field 50 (not understood by "
            "this version of ringtrace)");

  // A known field of the data source's own range with the wrong wire type
  // is still an error.
  config = ValidConfig();
  config.mutable_data_sources(0)
      ->mutable_config()
      ->mutable_unknown_fields()
      ->AddVarint(113, 1);  // track_event_config is a message
  ASSERT_TRUE(parsed.ParseFromString(config.SerializeAsString()));
  EXPECT_EQ(Check(parsed),
            "data_sources[0].config.track_event_config: wrong wire type");

  // At most kMaxDataSourceConfigSize bytes serialized.
  config = ValidConfig();
  ds = config.mutable_data_sources(0)->mutable_config();
  const size_t fixed = ds->ByteSizeLong();
  // Tag (2 bytes for 1000) and a 3-byte length: fill to exactly the limit.
  ds->mutable_unknown_fields()->AddLengthDelimited(
      1000, std::string(ipc::kMaxDataSourceConfigSize - fixed - 5, 'x'));
  ASSERT_EQ(ds->ByteSizeLong(), ipc::kMaxDataSourceConfigSize);
  ASSERT_TRUE(parsed.ParseFromString(config.SerializeAsString()));
  EXPECT_EQ(Check(parsed), "ok");
  ds->mutable_unknown_fields()->AddVarint(1001, 1);
  ASSERT_TRUE(parsed.ParseFromString(config.SerializeAsString()));
  EXPECT_NE(Check(parsed).find("over the 28672 a data source's config may "
                               "have"),
            std::string::npos)
      << Check(parsed);
}

// ---- Requests
// ----------------------------------------------------------------

ConsumerRequest EnableRequest() {
  ConsumerRequest req;
  req.set_request_id(1);
  *req.mutable_enable_tracing()->mutable_config() = ValidConfig();
  return req;
}

TEST(ConsumerProtocolTest, RequestRoundTrip) {
  ConsumerRequest req = EnableRequest();
  req.set_request_id(0xfedcba9876543210ull);
  std::vector<uint8_t> datagram;
  ASSERT_TRUE(EncodeConsumerRequest(req, &datagram).ok());
  ASSERT_EQ(datagram.size(), 12 + req.ByteSizeLong());
  // "RTCP", type 1, payload size, little-endian.
  EXPECT_EQ(std::string(datagram.begin(), datagram.begin() + 8),
            std::string("RTCP\x01\0\0\0", 8));
  ConsumerRequest got;
  EXPECT_EQ(DecodeRequest(datagram, /*has_fd=*/true, &got), "ok");
  EXPECT_EQ(got.SerializeAsString(), req.SerializeAsString());

  ConsumerRequest query;
  query.set_request_id(7);
  query.mutable_query_service_state();
  EXPECT_EQ(DecodeRequest(query), "ok");
}

TEST(ConsumerProtocolTest, FramingDefects) {
  const std::string payload = EnableRequest().SerializeAsString();
  const uint32_t size = static_cast<uint32_t>(payload.size());

  std::vector<uint8_t> datagram = RequestFrame(payload);
  datagram.resize(11);
  EXPECT_EQ(DecodeRequest(datagram, true),
            "datagram of 11 bytes, shorter than the 12-byte header");

  EXPECT_EQ(DecodeRequest(Frame(0x50495452, 1, size, payload), true),
            "bad magic 0x50495452 (not a ringtrace consumer protocol "
            "message)");
  EXPECT_EQ(DecodeRequest(Frame(kConsumerMagic, 2, size, payload), true),
            "message type 2, expected 1 (request)");
  EXPECT_EQ(DecodeRequest(Frame(kConsumerMagic, 1, size + 1, payload), true),
            "payload_size " + std::to_string(size + 1) + ", but " +
                std::to_string(size) + " bytes follow the header");
  EXPECT_EQ(DecodeRequest(Frame(kConsumerMagic, 1, 0xffffffffu, payload), true),
            "payload_size 4294967295, but " + std::to_string(size) +
                " bytes follow the header");

  const std::string big(kMaxConsumerPayloadSize + 1, '\0');
  EXPECT_EQ(DecodeRequest(RequestFrame(big)),
            "datagram of 65537 bytes, longer than 65536");

  // A length-delimited field running past the end.
  EXPECT_EQ(DecodeRequest(RequestFrame(std::string("\x12\x05\x0a", 3))),
            "ConsumerRequest: malformed protobuf payload");
  // An empty payload parses (every field absent) and fails the checks.
  EXPECT_EQ(DecodeRequest(RequestFrame("")), "request_id: missing or 0");

  // Every prefix of a valid datagram is refused, never misread.
  std::vector<uint8_t> good = RequestFrame(payload);
  for (size_t n = 0; n < good.size(); n++) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + n);
    EXPECT_NE(DecodeRequest(cut, true), "ok") << n;
  }
  EXPECT_EQ(DecodeRequest(good, true), "ok");
}

TEST(ConsumerProtocolTest, ExactlyOneRequest) {
  ConsumerRequest req;
  req.set_request_id(1);
  EXPECT_EQ(DecodeRequest(req),
            "no request set (exactly one of enable_tracing, disable_tracing, "
            "flush, get_trace_stats, clone_session, query_service_state, "
            "detach, attach)");

  // Two requests in one payload: protobuf would keep the last one only.
  ConsumerRequest a;
  a.set_request_id(1);
  a.mutable_disable_tracing()->set_session_id(3);
  ConsumerRequest b;
  b.mutable_flush()->set_session_id(3);
  EXPECT_EQ(DecodeRequest(
                RequestFrame(a.SerializeAsString() + b.SerializeAsString())),
            "disable_tracing and flush: more than one request in one message");
  ConsumerRequest c;
  c.mutable_disable_tracing()->set_session_id(4);
  EXPECT_EQ(DecodeRequest(
                RequestFrame(a.SerializeAsString() + c.SerializeAsString())),
            "disable_tracing: given twice in one message");
}

TEST(ConsumerProtocolTest, RequestFieldRules) {
  ConsumerRequest req = EnableRequest();
  req.clear_request_id();
  EXPECT_EQ(DecodeRequest(req, true), "request_id: missing or 0");

  req = EnableRequest();
  req.mutable_enable_tracing()->clear_config();
  EXPECT_EQ(DecodeRequest(req, true), "enable_tracing.config: missing");

  // ValidateTraceConfig's messages come through unchanged.
  req = EnableRequest();
  req.mutable_enable_tracing()
      ->mutable_config()
      ->mutable_buffers(0)
      ->set_size_kb(0);
  EXPECT_EQ(DecodeRequest(req, true),
            "buffers[0].size_kb: 0 is outside 1..4194240");
  req = EnableRequest();
  req.mutable_enable_tracing()
      ->mutable_config()
      ->mutable_unknown_fields()
      ->AddVarint(500, 1);
  EXPECT_EQ(DecodeRequest(req, true),
            "config: unknown field 500 (not understood by this version of "
            "ringtrace)");

  ConsumerRequest r;
  r.set_request_id(2);
  r.mutable_disable_tracing();
  EXPECT_EQ(DecodeRequest(r), "disable_tracing.session_id: missing or 0");
  r.mutable_flush();
  EXPECT_EQ(DecodeRequest(r), "flush.session_id: missing or 0");
  r.mutable_flush()->set_session_id(1);
  r.mutable_flush()->set_timeout_ms(kMaxTimeoutMs + 1);
  EXPECT_EQ(DecodeRequest(r), "flush.timeout_ms: 600001 is outside 0..600000");
  r.mutable_flush()->set_timeout_ms(kMaxTimeoutMs);
  EXPECT_EQ(DecodeRequest(r), "ok");
  r.mutable_get_trace_stats();
  EXPECT_EQ(DecodeRequest(r), "get_trace_stats.session_id: missing or 0");
  r.mutable_clone_session();
  EXPECT_EQ(DecodeRequest(r, true), "clone_session.session_id: missing or 0");
  r.mutable_detach()->set_key("k");
  EXPECT_EQ(DecodeRequest(r), "detach.session_id: missing or 0");
  r.mutable_detach()->set_session_id(3);
  EXPECT_EQ(DecodeRequest(r), "ok");
  r.mutable_detach()->set_key("");
  EXPECT_EQ(DecodeRequest(r), "detach.key: 0 bytes, expected 1..64");
  r.mutable_detach()->set_key("a/b");
  EXPECT_EQ(DecodeRequest(r), "detach.key: a byte outside [A-Za-z0-9._-]");
  r.mutable_attach();
  EXPECT_EQ(DecodeRequest(r), "attach.key: 0 bytes, expected 1..64");
  r.mutable_attach()->set_key(std::string(64, 'Z'));
  EXPECT_EQ(DecodeRequest(r), "ok");
  r.mutable_attach()->set_key("\x1b[2J");
  EXPECT_EQ(DecodeRequest(r), "attach.key: a byte outside [A-Za-z0-9._-]");

  // Unknown fields outside the config: a newer consumer's request.
  r.Clear();
  r.set_request_id(2);
  r.mutable_query_service_state();
  r.mutable_unknown_fields()->AddVarint(20, 1);
  EXPECT_EQ(DecodeRequest(r),
            "request: unknown field 20 (not understood by this version of "
            "ringtrace)");
  r.Clear();
  r.set_request_id(2);
  r.mutable_flush()->set_session_id(1);
  r.mutable_flush()->mutable_unknown_fields()->AddVarint(3, 1);
  EXPECT_EQ(DecodeRequest(r),
            "flush: unknown field 3 (not understood by this version of "
            "ringtrace)");
}

TEST(ConsumerProtocolTest, FdRules) {
  ConsumerRequest req = EnableRequest();
  EXPECT_TRUE(ConsumerRequestNeedsFd(req));
  EXPECT_EQ(DecodeRequest(req, false),
            "enable_tracing: the message carries no fd (the trace file)");
  req.Clear();
  req.set_request_id(3);
  req.mutable_clone_session()->set_session_id(9);
  EXPECT_TRUE(ConsumerRequestNeedsFd(req));
  EXPECT_EQ(DecodeRequest(req, false),
            "clone_session: the message carries no fd (the trace file)");
  EXPECT_EQ(DecodeRequest(req, true), "ok");
  req.mutable_disable_tracing()->set_session_id(9);
  EXPECT_FALSE(ConsumerRequestNeedsFd(req));
  EXPECT_EQ(DecodeRequest(req, true),
            "disable_tracing: the message carries an fd, none expected");
  EXPECT_EQ(DecodeRequest(req, false), "ok");
}

TEST(ConsumerProtocolTest, EncodeRefusesWhatDoesNotFit) {
  ConsumerResponse resp;
  resp.set_request_id(1);
  resp.set_ok(true);
  resp.set_trace_stats(std::string(kMaxConsumerPayloadSize, 's'));
  std::vector<uint8_t> datagram = {1, 2, 3};
  const base::Status s = EncodeConsumerResponse(resp, &datagram);
  EXPECT_EQ(s.message(),
            "ConsumerResponse of " + std::to_string(resp.ByteSizeLong()) +
                " bytes does not fit one datagram (at most 65524)");
  EXPECT_TRUE(datagram.empty());

  // The largest that fits is a datagram of exactly 64 KiB.
  size_t len = kMaxConsumerPayloadSize;
  do {
    resp.set_trace_stats(std::string(--len, 's'));
  } while (resp.ByteSizeLong() > kMaxConsumerPayloadSize);
  ASSERT_EQ(resp.ByteSizeLong(), kMaxConsumerPayloadSize);
  ASSERT_TRUE(EncodeConsumerResponse(resp, &datagram).ok());
  EXPECT_EQ(datagram.size(), kMaxConsumerMessageSize);
  ConsumerResponse got;
  ASSERT_TRUE(
      DecodeConsumerResponse(datagram.data(), datagram.size(), &got).ok());
  EXPECT_EQ(got.trace_stats(), resp.trace_stats());
}

// ---- Responses
// ---------------------------------------------------------------

TEST(ConsumerProtocolTest, ResponseRules) {
  ConsumerResponse resp;
  resp.set_request_id(5);
  resp.set_ok(true);
  resp.set_session_id(12);
  ConsumerResponse got;
  EXPECT_EQ(DecodeResponse(resp, &got), "ok");
  EXPECT_EQ(got.session_id(), 12u);

  // A request's framing is not a response's.
  std::vector<uint8_t> as_request = RequestFrame(resp.SerializeAsString());
  EXPECT_EQ(DecodeConsumerResponse(as_request.data(), as_request.size(), &got)
                .message(),
            "message type 1, expected 2 (response)");

  ConsumerResponse r = resp;
  r.clear_ok();
  EXPECT_EQ(DecodeResponse(r), "ok: missing");

  r = resp;
  r.set_ok(false);
  EXPECT_EQ(DecodeResponse(r), "error: missing on a failed response");
  r.set_error("unknown session_id 12");
  EXPECT_EQ(DecodeResponse(r), "ok");

  r = resp;
  r.set_request_id(0);
  EXPECT_EQ(DecodeResponse(r),
            "request_id: 0 on a response that is not a tracing_ended event");

  ConsumerResponse event;
  event.set_ok(true);
  event.set_tracing_ended(true);
  event.set_session_id(3);
  event.mutable_summary()->set_packets_written(10);
  EXPECT_EQ(DecodeResponse(event), "ok");
  event.set_request_id(4);
  EXPECT_EQ(DecodeResponse(event),
            "request_id: 4 on a tracing_ended event, 0 expected");
  event.set_request_id(0);
  event.clear_session_id();
  EXPECT_EQ(DecodeResponse(event),
            "session_id: missing on a tracing_ended event");

  // Unknown fields: a newer service; accepted.
  r = resp;
  r.mutable_unknown_fields()->AddVarint(40, 1);
  EXPECT_EQ(DecodeResponse(r), "ok");
}

// A hostile service cannot drive the user's terminal through any string:
// each is valid UTF-8 without C0, DEL or C1 control characters.
TEST(ConsumerProtocolTest, ResponseStringsArePrintableUtf8) {
  ConsumerResponse resp;
  resp.set_request_id(5);
  resp.set_ok(false);
  resp.set_error("bad\x1b]0;owned\x07");
  EXPECT_EQ(DecodeResponse(resp),
            "error: control character U+001B at offset 3");
  resp.set_error("fine");

  auto* state = resp.mutable_service_state();
  state->add_producers()->set_name("app");
  auto* p = state->add_producers();
  p->set_name("app2");
  p->add_data_sources("track_event");
  p->add_data_sources("x\x7f");
  EXPECT_EQ(DecodeResponse(resp),
            "service_state.producers[1].data_sources[1]: control character "
            "U+007F at offset 1");
  p->set_data_sources(1, "ok");
  state->add_sessions()->set_unique_name(std::string("a\0", 2));
  EXPECT_EQ(DecodeResponse(resp),
            "service_state.sessions[0].unique_name: control character U+0000 "
            "at offset 1");
  state->mutable_sessions(0)->set_unique_name("boot");
  state->mutable_sessions(0)->set_state("started\r");
  EXPECT_EQ(DecodeResponse(resp),
            "service_state.sessions[0].state: control character U+000D at "
            "offset 7");
  state->mutable_sessions(0)->set_state("started");

  // C1 controls (U+009B is CSI on many terminals), in UTF-8 and raw.
  resp.set_error(
      "caf\xc3\xa9 \xc2\x9b"
      "2J");
  EXPECT_EQ(DecodeResponse(resp),
            "error: control character U+009B at offset 6");
  const char* invalid[][2] = {
      {"raw \x9b", "error: invalid UTF-8 at offset 4"},
      {"cut \xe2\x82", "error: invalid UTF-8 at offset 4"},
      {"overlong \xc0\xaf", "error: invalid UTF-8 at offset 9"},
      {"surrogate \xed\xa0\x80", "error: invalid UTF-8 at offset 10"},
      {"big \xf4\x90\x80\x80", "error: invalid UTF-8 at offset 4"},
      {"bad lead \xff", "error: invalid UTF-8 at offset 9"},
      {"\xe2\x82\xac \xf0\x9f\x98\x80 \xe2x",
       "error: invalid UTF-8 at offset 9"},
  };
  for (const auto& c : invalid) {
    resp.set_error(c[0]);
    EXPECT_EQ(DecodeResponse(resp), c[1]) << c[0];
  }
  // Printable text of any script passes.
  resp.set_error("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0");
  EXPECT_EQ(DecodeResponse(resp), "ok");

  // Bytes fields are binary: anything goes.
  resp.set_trace_stats(std::string("\x00\x1b\x7f\xff", 4));
  EXPECT_EQ(DecodeResponse(resp), "ok");
}

TEST(ConsumerProtocolTest, CheckTraceFileFd) {
  base::TempDir dir;
  const std::string path = dir.File("trace");
  base::ScopedFd rw(open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600));
  ASSERT_TRUE(rw.valid());
  EXPECT_TRUE(CheckTraceFileFd(rw.get()).ok());
  base::ScopedFd wo(open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  EXPECT_TRUE(CheckTraceFileFd(wo.get()).ok());
  base::ScopedFd ro(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  EXPECT_EQ(CheckTraceFileFd(ro.get()).message(),
            "trace file: not open for writing");
  base::ScopedFd d(open(dir.path().c_str(), O_RDONLY | O_CLOEXEC));
  EXPECT_EQ(CheckTraceFileFd(d.get()).message(),
            "trace file: not a regular file");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  base::ScopedFd r(fds[0]), w(fds[1]);
  EXPECT_EQ(CheckTraceFileFd(w.get()).message(),
            "trace file: not a regular file");
  EXPECT_EQ(CheckTraceFileFd(-1).message(), "trace file: not an open fd");
}

}  // namespace
}  // namespace ipc
}  // namespace ringtrace
