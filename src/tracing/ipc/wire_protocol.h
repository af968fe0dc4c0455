/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The producer <-> service wire protocol (docs/service.md).
//
// Transport: a Unix SOCK_SEQPACKET socket, so every message is one datagram
// with its boundaries kept by the kernel; the ring's memfd travels beside the
// HelloReply as SCM_RIGHTS ancillary data (unix_socket.h).
//
// Every message is at most kMaxMessageSize bytes (a datagram that large is
// well within the socket's send buffer); every producer -> service message
// is at most kMaxProducerMessageSize bytes, so the producer's app threads
// encode them in small stack buffers:
//
//   offset 0  uint32 magic        kMagic ("RTIP")
//   offset 4  uint32 type         MessageType
//   offset 8  uint32 payload_size the bytes after this 12-byte header
//   offset 12 payload             layout per type, below
//
// All integers are little-endian, written and read byte by byte (no struct
// overlays, no alignment assumptions). A message is valid only if it is
// EXACTLY header + payload_size bytes and the payload is exactly the size its
// type defines; anything else is malformed. Both sides treat what they
// receive as hostile: DecodeMessage() never reads outside [data, data+size)
// and reports every defect as a Status.
//
// Messages:
//   kHello         producer -> service, first and only once.
//                  u32 protocol_version, u32 requested_ring_bytes (0: the
//                  service's default), u32 requested_chunk_size (0: default),
//                  u32 name_size, then name_size bytes of name
//                  (1..kMaxProducerNameSize printable ASCII 0x20..0x7e).
//   kHelloReply    service -> producer, once, answer to kHello.
//                  u32 status (HelloStatus), u32 producer_id, u32 chunk_size,
//                  u32 num_chunks, u32 target_buffer. On kOk the datagram
//                  carries exactly one fd: the ring's memfd, sealed against
//                  shrinking and growing. On any other status: no fd, and the
//                  service closes the connection.
//   kDrainRequest  producer -> service, any number of times after the reply.
//                  "Chunks were published / a writer wants room": the
//                  service schedules a drain pass of this producer's ring.
//                  Coalescing is the producer's job; the service also
//                  rate-limits. The payload is empty, or a loss report:
//                    u32 flags        kLossReportFinal, no other bit
//                    u32 num_entries  0..kMaxLossEntriesPerMessage (0 only
//                                     with kLossReportFinal)
//                    num_entries x 36-byte entries:
//                      u16 writer_id (1..65535)
//                      u16 target_buffer (the BufferID it writes)
//                      u64 packets_dropped_before_end
//                      u64 packets_dropped_after_end
//                      u64 bytes_dropped
//                      u64 stall_timeouts
//                  Each entry holds the CUMULATIVE counters of one writer
//                  (TraceWriterV2 / RingWriter stats) at the time it was
//                  sent; a later entry for the same writer supersedes it. A
//                  producer sends entries only for writers whose counters
//                  changed since they were last sent, and on an orderly
//                  disconnect a final report (every datagram flagged
//                  kLossReportFinal) with every writer that ever lost
//                  anything, then closes. docs/service.md, "Loss reports".
//   kRegisterDataSource  producer -> service, after the reply, at most
//                  kMaxDataSourcesPerProducer times (distinct names).
//                  u32 name_size, then name_size bytes of data source name
//                  (1..kMaxDataSourceNameSize printable ASCII).
//   kStartDataSource  service -> producer: start an instance of a data
//                  source the producer registered.
//                  u32 instance_id (nonzero, unique per connection while
//                  the instance lives), u32 target_buffer (0..65535: the
//                  BufferID the instance's writers put in their chunks),
//                  u32 clear_period_ms (the incremental-state clear period;
//                  0: never), u32 name_size, name (as in
//                  kRegisterDataSource), u32 num_enabled, u32 num_disabled,
//                  u32 num_enabled_tags, u32 num_disabled_tags (the four
//                  together <= kMaxCategoryPatterns), then the entries of
//                  TrackEventConfig's enabled_categories,
//                  disabled_categories, enabled_tags and disabled_tags, in
//                  that order, each u32 size then size bytes
//                  (IsValidCategoryPattern: 1..kMaxCategoryPatternSize
//                  printable ASCII, a '*' only as the last byte), then
//                  u32 config_size and config_size bytes
//                  (0..kMaxDataSourceConfigSize): the instance's
//                  perfetto.protos.DataSourceConfig as the consumer gave
//                  it, serialized, opaque here (the data source parses its
//                  own part; docs/sessions.md, "A data source's own config").
//   kDataSourceCategories  producer -> service, after the
//                  kRegisterDataSource of the data source it names: some of
//                  the categories that data source declares (Perfetto's
//                  TrackEventDescriptor.available_categories), appended to
//                  what earlier ones declared. At most
//                  kMaxDeclaredCategoriesPerProducer categories in all the
//                  producer's messages, names distinct per data source.
//                  u32 name_size, data source name (as in
//                  kRegisterDataSource), u32 num_categories
//                  (1..kMaxCategoriesPerMessage), then per category:
//                    u32 size, name (IsValidCategoryName)
//                    u32 size, description (IsValidCategoryDescription)
//                    u32 num_tags (0..kMaxTagsPerCategory), then per tag
//                      u32 size, tag (IsValidCategoryTag)
//                  The one producer -> service message that may exceed
//                  kMaxProducerMessageSize (at most
//                  kMaxDataSourceCategoriesSize): the registering thread
//                  sends it from a heap buffer, never an app's event path.
//   kStopDataSource   service -> producer. u32 instance_id (nonzero).
//   kDataSourceStopped  producer -> service, the answer to kStopDataSource
//                  once no new packet of the instance will begin.
//                  u32 instance_id (nonzero).
//   kFlush         service -> producer. u32 flush_id (any value).
//   kFlushAck      producer -> service, the answer to kFlush once the
//                  producer's writers flushed. u32 flush_id, echoed.
//
// Anything else (unknown type, a second Hello, a DrainRequest before the
// reply, a message with an fd attached, a malformed message) is a protocol
// violation: the service drains what the ring holds and disconnects. A
// producer that receives anything but kStartDataSource, kStopDataSource or
// kFlush after the reply, or one of those with an instance id it does not
// know (or already started), disconnects.

#ifndef SRC_TRACING_IPC_WIRE_PROTOCOL_H_
#define SRC_TRACING_IPC_WIRE_PROTOCOL_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "ringtrace/status.h"

namespace ringtrace {
namespace ipc {

constexpr uint32_t kMagic = 0x50495452;  // bytes "RTIP" little-endian
constexpr uint32_t kProtocolVersion = 5;
constexpr size_t kHeaderSize = 12;
constexpr size_t kMaxProducerNameSize = 64;
constexpr size_t kMaxDataSourceNameSize = 64;
constexpr size_t kMaxDataSourcesPerProducer = 32;
constexpr size_t kMaxCategoryPatternSize = 128;
// The entries of the four lists of one StartDataSource together.
constexpr size_t kMaxCategoryPatterns = 256;
// A data source instance's serialized DataSourceConfig (the consumer
// protocol refuses a larger one).
constexpr size_t kMaxDataSourceConfigSize = 28 * 1024;
// The largest StartDataSource: 12 + 16 + 64 + 16 + 256 * (4 + 128) + 4 +
// 28672 = 62576. A message and one byte more stay within the 64 KiB a
// UnixSocket datagram may have (so a too-long one can be sent, in tests).
constexpr size_t kMaxStartDataSourceSize =
    kHeaderSize + 16 + kMaxDataSourceNameSize + 16 +
    kMaxCategoryPatterns * (4 + kMaxCategoryPatternSize) + 4 +
    kMaxDataSourceConfigSize;
constexpr size_t kMaxMessageSize = 62 * 1024;
static_assert(kMaxStartDataSourceSize <= kMaxMessageSize,
              "StartDataSource must fit a message");
// Every producer -> service message but kDataSourceCategories fits (the
// largest is a full loss report, 236 bytes).
constexpr size_t kMaxProducerMessageSize = 256;
// Declared categories (kDataSourceCategories).
constexpr size_t kMaxCategoryNameSize = kMaxCategoryPatternSize;
constexpr size_t kMaxCategoryDescriptionSize = 256;
constexpr size_t kMaxCategoryTagSize = 64;
constexpr size_t kMaxTagsPerCategory = 4;
constexpr size_t kMaxCategoriesPerMessage = 16;
// All data sources of one producer together (what the service keeps:
// at most 512 x 668 bytes of text per producer).
constexpr size_t kMaxDeclaredCategoriesPerProducer = 512;
// One category at its largest: 4 + 128 + 4 + 256 + 4 + 4 * (4 + 64) = 668.
constexpr size_t kMaxCategoryEntrySize =
    4 + kMaxCategoryNameSize + 4 + kMaxCategoryDescriptionSize + 4 +
    kMaxTagsPerCategory * (4 + kMaxCategoryTagSize);
// The largest kDataSourceCategories: 12 + 4 + 64 + 4 + 16 * 668 = 10772.
constexpr size_t kMaxDataSourceCategoriesSize =
    kHeaderSize + 4 + kMaxDataSourceNameSize + 4 +
    kMaxCategoriesPerMessage * kMaxCategoryEntrySize;
static_assert(kMaxDataSourceCategoriesSize <= kMaxMessageSize,
              "DataSourceCategories must fit a message");
// The largest datagram a producer may send (what the service receives
// into).
constexpr size_t kMaxProducerDatagramSize =
    kMaxDataSourceCategoriesSize > kMaxProducerMessageSize
        ? kMaxDataSourceCategoriesSize
        : kMaxProducerMessageSize;
// Loss report entries per DrainRequest: 12 + 8 + 6 * 36 = 236 bytes.
constexpr size_t kMaxLossEntriesPerMessage = 6;
// DrainRequest loss report flag: part of the report sent on an orderly
// disconnect (the producer sends nothing after it).
constexpr uint32_t kLossReportFinal = 1u << 0;

enum class MessageType : uint32_t {
  kHello = 1,
  kHelloReply = 2,
  kDrainRequest = 3,
  kRegisterDataSource = 4,
  kStartDataSource = 5,
  kStopDataSource = 6,
  kDataSourceStopped = 7,
  kFlush = 8,
  kFlushAck = 9,
  kDataSourceCategories = 10,
};

enum class HelloStatus : uint32_t {
  kOk = 0,
  kVersionMismatch = 1,   // protocol_version != kProtocolVersion
  kTooManyProducers = 2,  // the service's producer limit is reached
  kBadRequest = 3,        // a requested geometry the service cannot serve
  kServiceError = 4,      // the service could not create the ring
  // The peer's uid holds its share of producers or ring bytes (or all
  // rings together hold the service's total); the service logs which.
  kUserLimit = 5,
};
const char* HelloStatusToString(HelloStatus status);

struct HelloMsg {
  uint32_t protocol_version = kProtocolVersion;
  uint32_t requested_ring_bytes = 0;
  uint32_t requested_chunk_size = 0;
  std::string name;
};

struct HelloReplyMsg {
  HelloStatus status = HelloStatus::kOk;
  uint32_t producer_id = 0;
  uint32_t chunk_size = 0;
  uint32_t num_chunks = 0;
  uint32_t target_buffer = 0;
};

// The cumulative loss counters of one writer (see kDrainRequest), and the
// buffer it writes: its losses belong to the session owning that buffer.
// On the wire the first u32 holds writer_id (low 16 bits) and target_buffer
// (high 16 bits).
struct WriterLossEntry {
  uint32_t writer_id = 0;      // 1..65535
  uint32_t target_buffer = 0;  // 0..65535
  uint64_t packets_dropped_before_end = 0;
  uint64_t packets_dropped_after_end = 0;
  uint64_t bytes_dropped = 0;
  uint64_t stall_timeouts = 0;
};

struct DrainRequestMsg {
  // False: the plain, empty DrainRequest; the fields below are unused.
  bool has_loss_report = false;
  uint32_t flags = 0;
  uint32_t num_entries = 0;
  WriterLossEntry entries[kMaxLossEntriesPerMessage];
};

struct RegisterDataSourceMsg {
  std::string name;
};

struct StartDataSourceMsg {
  uint32_t instance_id = 0;
  uint32_t target_buffer = 0;
  uint32_t clear_period_ms = 0;
  std::string name;
  std::vector<std::string> enabled_categories;
  std::vector<std::string> disabled_categories;
  std::vector<std::string> enabled_tags;
  std::vector<std::string> disabled_tags;
  // The serialized DataSourceConfig (0..kMaxDataSourceConfigSize bytes;
  // any bytes: the data source parses them).
  std::string config;
};

// One declared category (Perfetto's TrackEventCategory).
struct CategoryDescriptor {
  std::string name;
  std::string description;  // may be empty
  std::vector<std::string> tags;
};

struct DataSourceCategoriesMsg {
  std::string data_source;
  std::vector<CategoryDescriptor> categories;
};

// One decoded message: |type| says which member is meaningful. The u32
// payload of kStopDataSource and kDataSourceStopped (an instance id) and of
// kFlush and kFlushAck (a flush id) is in |id|.
struct Message {
  MessageType type = MessageType::kDrainRequest;
  HelloMsg hello;
  HelloReplyMsg hello_reply;
  DrainRequestMsg drain_request;
  RegisterDataSourceMsg register_data_source;
  StartDataSourceMsg start_data_source;
  DataSourceCategoriesMsg data_source_categories;
  uint32_t id = 0;
};

// Whether |name| is a valid data source name (1..kMaxDataSourceNameSize
// printable ASCII), and |pattern| a valid category or tag entry
// (1..kMaxCategoryPatternSize printable ASCII, a '*' only as its last
// byte).
bool IsValidDataSourceName(const std::string& name);
bool IsValidCategoryPattern(const std::string& pattern);
// A declared category's name (1..kMaxCategoryNameSize printable ASCII, no
// '*': a '*' is a pattern), tag (the same, 1..kMaxCategoryTagSize) and
// description (0..kMaxCategoryDescriptionSize printable ASCII).
bool IsValidCategoryName(const std::string& name);
bool IsValidCategoryTag(const std::string& tag);
bool IsValidCategoryDescription(const std::string& description);

// Encoders. Return the number of bytes written to |buf| (at most
// kMaxMessageSize; kMaxProducerMessageSize for a producer -> service
// message), or 0 if |cap| is too small or the message is not
// encodable (a name that DecodeMessage would reject).
size_t EncodeHello(const HelloMsg& msg, uint8_t* buf, size_t cap);
size_t EncodeHelloReply(const HelloReplyMsg& msg, uint8_t* buf, size_t cap);
size_t EncodeDrainRequest(uint8_t* buf, size_t cap);
// A DrainRequest carrying a loss report (|msg.has_loss_report| is ignored).
// 0 if the report is not one DecodeMessage accepts (unknown flags, too many
// entries, none without kLossReportFinal, a writer_id outside 1..65535).
size_t EncodeLossReport(const DrainRequestMsg& msg, uint8_t* buf, size_t cap);
// 0 for an invalid name.
size_t EncodeRegisterDataSource(const RegisterDataSourceMsg& msg,
                                uint8_t* buf,
                                size_t cap);
// 0 for instance id 0, a target buffer above 65535, an invalid name or
// pattern, or more than kMaxCategoryPatterns patterns.
size_t EncodeStartDataSource(const StartDataSourceMsg& msg,
                             uint8_t* buf,
                             size_t cap);
// 0 for an invalid data source name, no categories or more than
// kMaxCategoriesPerMessage, or a category with an invalid name,
// description or tag, or more than kMaxTagsPerCategory tags. (Distinct
// names and the per-producer total are the service's to check: it sees
// every message.)
size_t EncodeDataSourceCategories(const DataSourceCategoriesMsg& msg,
                                  uint8_t* buf,
                                  size_t cap);
// 0 for instance id 0.
size_t EncodeStopDataSource(uint32_t instance_id, uint8_t* buf, size_t cap);
size_t EncodeDataSourceStopped(uint32_t instance_id, uint8_t* buf, size_t cap);
size_t EncodeFlush(uint32_t flush_id, uint8_t* buf, size_t cap);
size_t EncodeFlushAck(uint32_t flush_id, uint8_t* buf, size_t cap);

// Parses one whole datagram. On error |out| is unspecified and the Status
// says what was wrong (for the service's log; never echoed to the peer).
base::Status DecodeMessage(const uint8_t* data, size_t size, Message* out);

}  // namespace ipc
}  // namespace ringtrace

#endif  // SRC_TRACING_IPC_WIRE_PROTOCOL_H_
