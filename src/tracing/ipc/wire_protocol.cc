/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/ipc/wire_protocol.h"

#include <string.h>

#include "src/base/byte_order.h"

namespace ringtrace {
namespace ipc {
namespace {

using base::GetU32;
using base::GetU64;
using base::PutU32;
using base::PutU64;

// Payload sizes fixed by the layout in the header.
constexpr size_t kHelloFixedSize = 16;      // 4 x u32 before the name
constexpr size_t kHelloReplySize = 20;      // 5 x u32
constexpr size_t kLossReportFixedSize = 8;  // flags, num_entries
// u16 writer_id, u16 target_buffer, 4 x u64.
constexpr size_t kLossEntrySize = 36;

bool IsValidLossReportHeader(uint32_t flags, uint32_t num_entries) {
  if ((flags & ~kLossReportFinal) != 0)
    return false;
  if (num_entries > kMaxLossEntriesPerMessage)
    return false;
  return num_entries > 0 || (flags & kLossReportFinal) != 0;
}

bool IsValidReportedWriterId(uint32_t writer_id) {
  return writer_id >= 1 && writer_id <= 0xffff;
}

// 1..|max_size| bytes of printable ASCII (0x20..0x7e).
bool IsPrintable(const uint8_t* text, size_t size, size_t max_size) {
  if (size == 0 || size > max_size)
    return false;
  for (size_t i = 0; i < size; i++) {
    if (text[i] < 0x20 || text[i] > 0x7e)
      return false;
  }
  return true;
}

bool IsValidName(const uint8_t* name, size_t size) {
  return IsPrintable(name, size, kMaxProducerNameSize);
}

const uint8_t* StringBytes(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

// Payload sizes of the data source messages.
constexpr size_t kIdPayloadSize = 4;  // one u32
// instance_id, target_buffer, clear_period_ms, name_size.
constexpr size_t kStartFixedSize = 16;
constexpr size_t kMaxBufferId = 0xffff;

static_assert(kHeaderSize + kHelloFixedSize + kMaxProducerNameSize <=
                  kMaxProducerMessageSize,
              "Hello fits a producer message");
static_assert(kHeaderSize + kLossReportFixedSize +
                      kLossEntrySize * kMaxLossEntriesPerMessage <=
                  kMaxProducerMessageSize,
              "a loss report fits a producer message");
static_assert(kHeaderSize + 4 + kMaxDataSourceNameSize <=
                  kMaxProducerMessageSize,
              "RegisterDataSource fits a producer message");
// The four list sizes after the name.
constexpr size_t kStartCountsSize = 16;
static_assert(kHeaderSize + kStartFixedSize + kMaxDataSourceNameSize +
                      kStartCountsSize +
                      kMaxCategoryPatterns * (4 + kMaxCategoryPatternSize) + 4 +
                      kMaxDataSourceConfigSize ==
                  kMaxStartDataSourceSize,
              "kMaxStartDataSourceSize matches the layout");

// Appends a u32 size and the bytes of |s| at |*p|.
void PutSizedString(uint8_t** p, const std::string& s) {
  PutU32(*p, static_cast<uint32_t>(s.size()));
  memcpy(*p + 4, s.data(), s.size());
  *p += 4 + s.size();
}

// Writes the header for a payload of |payload_size| bytes; returns the
// message size, or 0 if it does not fit in |cap|.
size_t PutHeader(MessageType type,
                 size_t payload_size,
                 uint8_t* buf,
                 size_t cap) {
  const size_t total = kHeaderSize + payload_size;
  if (total > kMaxMessageSize || total > cap)
    return 0;
  PutU32(buf, kMagic);
  PutU32(buf + 4, static_cast<uint32_t>(type));
  PutU32(buf + 8, static_cast<uint32_t>(payload_size));
  return total;
}

}  // namespace

const char* HelloStatusToString(HelloStatus status) {
  switch (status) {
    case HelloStatus::kOk:
      return "ok";
    case HelloStatus::kVersionMismatch:
      return "protocol version mismatch";
    case HelloStatus::kTooManyProducers:
      return "too many producers";
    case HelloStatus::kBadRequest:
      return "bad request";
    case HelloStatus::kServiceError:
      return "service error";
    case HelloStatus::kUserLimit:
      return "this user's share of producers or ring memory is in use "
             "(ringtraced's log names the limit)";
  }
  return "unknown status";
}

size_t EncodeHello(const HelloMsg& msg, uint8_t* buf, size_t cap) {
  const auto* name = reinterpret_cast<const uint8_t*>(msg.name.data());
  if (!IsValidName(name, msg.name.size()))
    return 0;
  const size_t total = PutHeader(MessageType::kHello,
                                 kHelloFixedSize + msg.name.size(), buf, cap);
  if (total == 0)
    return 0;
  uint8_t* p = buf + kHeaderSize;
  PutU32(p, msg.protocol_version);
  PutU32(p + 4, msg.requested_ring_bytes);
  PutU32(p + 8, msg.requested_chunk_size);
  PutU32(p + 12, static_cast<uint32_t>(msg.name.size()));
  memcpy(p + kHelloFixedSize, name, msg.name.size());
  return total;
}

size_t EncodeHelloReply(const HelloReplyMsg& msg, uint8_t* buf, size_t cap) {
  const size_t total =
      PutHeader(MessageType::kHelloReply, kHelloReplySize, buf, cap);
  if (total == 0)
    return 0;
  uint8_t* p = buf + kHeaderSize;
  PutU32(p, static_cast<uint32_t>(msg.status));
  PutU32(p + 4, msg.producer_id);
  PutU32(p + 8, msg.chunk_size);
  PutU32(p + 12, msg.num_chunks);
  PutU32(p + 16, msg.target_buffer);
  return total;
}

size_t EncodeDrainRequest(uint8_t* buf, size_t cap) {
  return PutHeader(MessageType::kDrainRequest, 0, buf, cap);
}

size_t EncodeLossReport(const DrainRequestMsg& msg, uint8_t* buf, size_t cap) {
  if (!IsValidLossReportHeader(msg.flags, msg.num_entries))
    return 0;
  for (uint32_t i = 0; i < msg.num_entries; i++) {
    if (!IsValidReportedWriterId(msg.entries[i].writer_id) ||
        msg.entries[i].target_buffer > kMaxBufferId) {
      return 0;
    }
  }
  const size_t total = PutHeader(
      MessageType::kDrainRequest,
      kLossReportFixedSize + kLossEntrySize * msg.num_entries, buf, cap);
  if (total == 0)
    return 0;
  uint8_t* p = buf + kHeaderSize;
  PutU32(p, msg.flags);
  PutU32(p + 4, msg.num_entries);
  p += kLossReportFixedSize;
  for (uint32_t i = 0; i < msg.num_entries; i++, p += kLossEntrySize) {
    const WriterLossEntry& e = msg.entries[i];
    PutU32(p, e.writer_id | e.target_buffer << 16);
    PutU64(p + 4, e.packets_dropped_before_end);
    PutU64(p + 12, e.packets_dropped_after_end);
    PutU64(p + 20, e.bytes_dropped);
    PutU64(p + 28, e.stall_timeouts);
  }
  return total;
}

bool IsValidDataSourceName(const std::string& name) {
  return IsPrintable(StringBytes(name), name.size(), kMaxDataSourceNameSize);
}

bool IsValidCategoryPattern(const std::string& pattern) {
  if (!IsPrintable(StringBytes(pattern), pattern.size(),
                   kMaxCategoryPatternSize)) {
    return false;
  }
  const size_t star = pattern.find('*');
  return star == std::string::npos || star + 1 == pattern.size();
}

namespace {

// No '*' in |s| (declared names and tags are never patterns).
bool HasNoStar(const std::string& s) {
  return s.find('*') == std::string::npos;
}

}  // namespace

bool IsValidCategoryName(const std::string& name) {
  return IsPrintable(StringBytes(name), name.size(), kMaxCategoryNameSize) &&
         HasNoStar(name);
}

bool IsValidCategoryTag(const std::string& tag) {
  return IsPrintable(StringBytes(tag), tag.size(), kMaxCategoryTagSize) &&
         HasNoStar(tag);
}

bool IsValidCategoryDescription(const std::string& description) {
  return description.empty() ||
         IsPrintable(StringBytes(description), description.size(),
                     kMaxCategoryDescriptionSize);
}

size_t EncodeRegisterDataSource(const RegisterDataSourceMsg& msg,
                                uint8_t* buf,
                                size_t cap) {
  if (!IsValidDataSourceName(msg.name))
    return 0;
  const size_t total = PutHeader(MessageType::kRegisterDataSource,
                                 4 + msg.name.size(), buf, cap);
  if (total == 0)
    return 0;
  uint8_t* p = buf + kHeaderSize;
  PutSizedString(&p, msg.name);
  return total;
}

namespace {

// The four lists of a StartDataSource, in their wire order.
std::vector<const std::vector<std::string>*> StartLists(
    const StartDataSourceMsg& msg) {
  return {&msg.enabled_categories, &msg.disabled_categories, &msg.enabled_tags,
          &msg.disabled_tags};
}

}  // namespace

size_t EncodeStartDataSource(const StartDataSourceMsg& msg,
                             uint8_t* buf,
                             size_t cap) {
  if (msg.instance_id == 0 || msg.target_buffer > kMaxBufferId ||
      !IsValidDataSourceName(msg.name)) {
    return 0;
  }
  const std::vector<const std::vector<std::string>*> lists = StartLists(msg);
  size_t entries = 0;
  for (const std::vector<std::string>* list : lists) {
    // Each step compares before it adds: no overflow.
    if (list->size() > kMaxCategoryPatterns - entries)
      return 0;
    entries += list->size();
  }
  if (msg.config.size() > kMaxDataSourceConfigSize)
    return 0;
  size_t payload = kStartFixedSize + msg.name.size() + kStartCountsSize;
  for (const std::vector<std::string>* list : lists) {
    for (const std::string& pattern : *list) {
      if (!IsValidCategoryPattern(pattern))
        return 0;
      payload += 4 + pattern.size();  // bounded: at most 256 x 132 bytes
    }
  }
  payload += 4 + msg.config.size();  // bounded by kMaxStartDataSourceSize
  const size_t total =
      PutHeader(MessageType::kStartDataSource, payload, buf, cap);
  if (total == 0)
    return 0;
  uint8_t* p = buf + kHeaderSize;
  PutU32(p, msg.instance_id);
  PutU32(p + 4, msg.target_buffer);
  PutU32(p + 8, msg.clear_period_ms);
  p += 12;
  PutSizedString(&p, msg.name);
  for (const std::vector<std::string>* list : lists) {
    PutU32(p, static_cast<uint32_t>(list->size()));
    p += 4;
  }
  for (const std::vector<std::string>* list : lists) {
    for (const std::string& pattern : *list)
      PutSizedString(&p, pattern);
  }
  PutSizedString(&p, msg.config);  // any bytes; may be empty
  return total;
}

size_t EncodeDataSourceCategories(const DataSourceCategoriesMsg& msg,
                                  uint8_t* buf,
                                  size_t cap) {
  if (!IsValidDataSourceName(msg.data_source) || msg.categories.empty() ||
      msg.categories.size() > kMaxCategoriesPerMessage) {
    return 0;
  }
  size_t payload = 4 + msg.data_source.size() + 4;
  for (const CategoryDescriptor& c : msg.categories) {
    if (!IsValidCategoryName(c.name) ||
        !IsValidCategoryDescription(c.description) ||
        c.tags.size() > kMaxTagsPerCategory) {
      return 0;
    }
    payload += 4 + c.name.size() + 4 + c.description.size() + 4;
    for (const std::string& tag : c.tags) {
      if (!IsValidCategoryTag(tag))
        return 0;
      payload += 4 + tag.size();
    }
  }
  // Bounded by kMaxDataSourceCategoriesSize: every part was checked.
  const size_t total =
      PutHeader(MessageType::kDataSourceCategories, payload, buf, cap);
  if (total == 0)
    return 0;
  uint8_t* p = buf + kHeaderSize;
  PutSizedString(&p, msg.data_source);
  PutU32(p, static_cast<uint32_t>(msg.categories.size()));
  p += 4;
  for (const CategoryDescriptor& c : msg.categories) {
    PutSizedString(&p, c.name);
    PutSizedString(&p, c.description);
    PutU32(p, static_cast<uint32_t>(c.tags.size()));
    p += 4;
    for (const std::string& tag : c.tags)
      PutSizedString(&p, tag);
  }
  return total;
}

namespace {

size_t EncodeId(MessageType type, uint32_t id, uint8_t* buf, size_t cap) {
  const size_t total = PutHeader(type, kIdPayloadSize, buf, cap);
  if (total == 0)
    return 0;
  PutU32(buf + kHeaderSize, id);
  return total;
}

}  // namespace

size_t EncodeStopDataSource(uint32_t instance_id, uint8_t* buf, size_t cap) {
  if (instance_id == 0)
    return 0;
  return EncodeId(MessageType::kStopDataSource, instance_id, buf, cap);
}

size_t EncodeDataSourceStopped(uint32_t instance_id, uint8_t* buf, size_t cap) {
  if (instance_id == 0)
    return 0;
  return EncodeId(MessageType::kDataSourceStopped, instance_id, buf, cap);
}

size_t EncodeFlush(uint32_t flush_id, uint8_t* buf, size_t cap) {
  return EncodeId(MessageType::kFlush, flush_id, buf, cap);
}

size_t EncodeFlushAck(uint32_t flush_id, uint8_t* buf, size_t cap) {
  return EncodeId(MessageType::kFlushAck, flush_id, buf, cap);
}

namespace {

// Reads a u32 size and that many printable bytes (at most |max_size|) from
// [*p, end) into |out|, advancing |*p|. False if they do not fit or are
// not printable.
bool GetSizedString(const uint8_t** p,
                    const uint8_t* end,
                    size_t max_size,
                    std::string* out) {
  if (end - *p < 4)
    return false;
  const uint32_t size = GetU32(*p);
  // Checked before any pointer arithmetic with |size|.
  if (size > max_size || static_cast<size_t>(end - *p - 4) < size)
    return false;
  if (!IsPrintable(*p + 4, size, max_size))
    return false;
  out->assign(reinterpret_cast<const char*>(*p + 4), size);
  *p += 4 + size;
  return true;
}

base::Status DecodeRegisterDataSource(const uint8_t* p,
                                      uint32_t payload_size,
                                      RegisterDataSourceMsg* out) {
  const uint8_t* end = p + payload_size;
  if (!GetSizedString(&p, end, kMaxDataSourceNameSize, &out->name))
    return base::ErrStatus(
        "RegisterDataSource name is empty, too long, unprintable or does "
        "not match the payload size");
  if (p != end)
    return base::ErrStatus("RegisterDataSource has %zu trailing bytes",
                           static_cast<size_t>(end - p));
  return base::OkStatus();
}

base::Status DecodeStartDataSource(const uint8_t* p,
                                   uint32_t payload_size,
                                   StartDataSourceMsg* out) {
  const uint8_t* end = p + payload_size;
  if (payload_size < 12)
    return base::ErrStatus("StartDataSource payload of %u bytes is too short",
                           payload_size);
  out->instance_id = GetU32(p);
  out->target_buffer = GetU32(p + 4);
  out->clear_period_ms = GetU32(p + 8);
  p += 12;
  if (out->instance_id == 0)
    return base::ErrStatus("StartDataSource with instance id 0");
  if (out->target_buffer > kMaxBufferId)
    return base::ErrStatus("StartDataSource target buffer %u is not a BufferID",
                           out->target_buffer);
  if (!GetSizedString(&p, end, kMaxDataSourceNameSize, &out->name))
    return base::ErrStatus("StartDataSource name is malformed");
  if (static_cast<size_t>(end - p) < kStartCountsSize)
    return base::ErrStatus("StartDataSource without its four list sizes");
  std::vector<std::string>* const lists[] = {
      &out->enabled_categories, &out->disabled_categories, &out->enabled_tags,
      &out->disabled_tags};
  uint32_t counts[4];
  size_t entries = 0;
  for (size_t i = 0; i < 4; i++, p += 4) {
    counts[i] = GetU32(p);
    // Compared before it is added: no overflow.
    if (counts[i] > kMaxCategoryPatterns - entries) {
      return base::ErrStatus(
          "StartDataSource with more than %zu category and tag patterns",
          kMaxCategoryPatterns);
    }
    entries += counts[i];
  }
  for (size_t i = 0; i < 4; i++) {
    lists[i]->assign(counts[i], std::string());
    for (std::string& pattern : *lists[i]) {
      if (!GetSizedString(&p, end, kMaxCategoryPatternSize, &pattern) ||
          !IsValidCategoryPattern(pattern)) {
        return base::ErrStatus("StartDataSource category pattern is malformed");
      }
    }
  }
  if (end - p < 4)
    return base::ErrStatus("StartDataSource without its config size");
  const uint32_t config_size = GetU32(p);
  p += 4;
  if (config_size > kMaxDataSourceConfigSize ||
      config_size > static_cast<size_t>(end - p)) {
    return base::ErrStatus(
        "StartDataSource config of %u bytes is over %zu or past the payload",
        config_size, kMaxDataSourceConfigSize);
  }
  out->config.assign(reinterpret_cast<const char*>(p), config_size);
  p += config_size;
  if (p != end)
    return base::ErrStatus("StartDataSource has %zu trailing bytes",
                           static_cast<size_t>(end - p));
  return base::OkStatus();
}

// Reads a u32 size and that many bytes of printable text (0..|max_size|:
// unlike GetSizedString, empty is allowed) into |out|, advancing |*p|.
bool GetSizedText(const uint8_t** p,
                  const uint8_t* end,
                  size_t max_size,
                  std::string* out) {
  if (end - *p < 4)
    return false;
  if (GetU32(*p) == 0) {
    out->clear();
    *p += 4;
    return true;
  }
  return GetSizedString(p, end, max_size, out);
}

// One category of a DataSourceCategories message.
bool GetCategory(const uint8_t** p,
                 const uint8_t* end,
                 CategoryDescriptor* out) {
  if (!GetSizedString(p, end, kMaxCategoryNameSize, &out->name) ||
      !IsValidCategoryName(out->name) ||
      !GetSizedText(p, end, kMaxCategoryDescriptionSize, &out->description) ||
      end - *p < 4) {
    return false;
  }
  const uint32_t num_tags = GetU32(*p);
  *p += 4;
  if (num_tags > kMaxTagsPerCategory)
    return false;
  out->tags.assign(num_tags, std::string());
  for (std::string& tag : out->tags) {
    if (!GetSizedString(p, end, kMaxCategoryTagSize, &tag) ||
        !IsValidCategoryTag(tag)) {
      return false;
    }
  }
  return true;
}

base::Status DecodeDataSourceCategories(const uint8_t* p,
                                        uint32_t payload_size,
                                        DataSourceCategoriesMsg* out) {
  if (payload_size > kMaxDataSourceCategoriesSize - kHeaderSize) {
    return base::ErrStatus("DataSourceCategories of %u bytes exceeds %zu",
                           payload_size,
                           kMaxDataSourceCategoriesSize - kHeaderSize);
  }
  const uint8_t* end = p + payload_size;
  if (!GetSizedString(&p, end, kMaxDataSourceNameSize, &out->data_source))
    return base::ErrStatus(
        "DataSourceCategories data source name is malformed");
  if (end - p < 4)
    return base::ErrStatus("DataSourceCategories without a category count");
  const uint32_t num_categories = GetU32(p);
  p += 4;
  if (num_categories == 0 || num_categories > kMaxCategoriesPerMessage) {
    return base::ErrStatus("DataSourceCategories with %u categories, 1..%zu",
                           num_categories, kMaxCategoriesPerMessage);
  }
  out->categories.assign(num_categories, CategoryDescriptor());
  for (uint32_t i = 0; i < num_categories; i++) {
    if (!GetCategory(&p, end, &out->categories[i])) {
      return base::ErrStatus(
          "DataSourceCategories category %u is malformed (name, description "
          "or tags: size, bytes, '*', count)",
          i);
    }
  }
  if (p != end)
    return base::ErrStatus("DataSourceCategories has %zu trailing bytes",
                           static_cast<size_t>(end - p));
  return base::OkStatus();
}

// |p| holds |payload_size| (> 0) bytes of a DrainRequest payload.
base::Status DecodeLossReport(const uint8_t* p,
                              uint32_t payload_size,
                              DrainRequestMsg* out) {
  if (payload_size < kLossReportFixedSize)
    return base::ErrStatus("DrainRequest payload of %u bytes is too short",
                           payload_size);
  const uint32_t flags = GetU32(p);
  const uint32_t num_entries = GetU32(p + 4);
  if (!IsValidLossReportHeader(flags, num_entries)) {
    return base::ErrStatus("loss report with flags 0x%x and %u entries", flags,
                           num_entries);
  }
  // num_entries <= kMaxLossEntriesPerMessage: the product cannot overflow.
  if (payload_size != kLossReportFixedSize + kLossEntrySize * num_entries) {
    return base::ErrStatus("loss report of %u entries in %u bytes", num_entries,
                           payload_size);
  }
  out->has_loss_report = true;
  out->flags = flags;
  out->num_entries = num_entries;
  p += kLossReportFixedSize;
  for (uint32_t i = 0; i < num_entries; i++, p += kLossEntrySize) {
    WriterLossEntry& e = out->entries[i];
    const uint32_t ids = GetU32(p);
    e.writer_id = ids & 0xffff;
    e.target_buffer = ids >> 16;
    if (!IsValidReportedWriterId(e.writer_id))
      return base::ErrStatus("loss report for writer id %u", e.writer_id);
    e.packets_dropped_before_end = GetU64(p + 4);
    e.packets_dropped_after_end = GetU64(p + 12);
    e.bytes_dropped = GetU64(p + 20);
    e.stall_timeouts = GetU64(p + 28);
  }
  return base::OkStatus();
}

}  // namespace

base::Status DecodeMessage(const uint8_t* data, size_t size, Message* out) {
  if (size < kHeaderSize)
    return base::ErrStatus("message of %zu bytes is shorter than a header",
                           size);
  if (size > kMaxMessageSize)
    return base::ErrStatus("message of %zu bytes exceeds %zu", size,
                           kMaxMessageSize);
  if (GetU32(data) != kMagic)
    return base::ErrStatus("bad magic 0x%08x", GetU32(data));
  const uint32_t type = GetU32(data + 4);
  const uint32_t payload_size = GetU32(data + 8);
  // size <= kMaxMessageSize, so this subtraction and comparison are exact.
  if (payload_size != size - kHeaderSize)
    return base::ErrStatus("payload size %u does not match the %zu bytes sent",
                           payload_size, size - kHeaderSize);
  const uint8_t* p = data + kHeaderSize;
  switch (type) {
    case static_cast<uint32_t>(MessageType::kHello): {
      if (payload_size < kHelloFixedSize)
        return base::ErrStatus("Hello payload of %u bytes is too short",
                               payload_size);
      const uint32_t name_size = GetU32(p + 12);
      if (name_size != payload_size - kHelloFixedSize)
        return base::ErrStatus("Hello name size %u does not match", name_size);
      if (!IsValidName(p + kHelloFixedSize, name_size))
        return base::ErrStatus("Hello name is empty, too long or unprintable");
      out->type = MessageType::kHello;
      out->hello.protocol_version = GetU32(p);
      out->hello.requested_ring_bytes = GetU32(p + 4);
      out->hello.requested_chunk_size = GetU32(p + 8);
      out->hello.name.assign(reinterpret_cast<const char*>(p + kHelloFixedSize),
                             name_size);
      return base::OkStatus();
    }
    case static_cast<uint32_t>(MessageType::kHelloReply): {
      if (payload_size != kHelloReplySize)
        return base::ErrStatus("HelloReply payload of %u bytes, expected %zu",
                               payload_size, kHelloReplySize);
      const uint32_t status = GetU32(p);
      if (status > static_cast<uint32_t>(HelloStatus::kUserLimit))
        return base::ErrStatus("HelloReply with unknown status %u", status);
      out->type = MessageType::kHelloReply;
      out->hello_reply.status = static_cast<HelloStatus>(status);
      out->hello_reply.producer_id = GetU32(p + 4);
      out->hello_reply.chunk_size = GetU32(p + 8);
      out->hello_reply.num_chunks = GetU32(p + 12);
      out->hello_reply.target_buffer = GetU32(p + 16);
      return base::OkStatus();
    }
    case static_cast<uint32_t>(MessageType::kDrainRequest): {
      out->drain_request = DrainRequestMsg();
      if (payload_size != 0) {
        const base::Status s =
            DecodeLossReport(p, payload_size, &out->drain_request);
        if (!s.ok())
          return s;
      }
      out->type = MessageType::kDrainRequest;
      return base::OkStatus();
    }
    case static_cast<uint32_t>(MessageType::kRegisterDataSource): {
      const base::Status s =
          DecodeRegisterDataSource(p, payload_size, &out->register_data_source);
      if (!s.ok())
        return s;
      out->type = MessageType::kRegisterDataSource;
      return base::OkStatus();
    }
    case static_cast<uint32_t>(MessageType::kStartDataSource): {
      const base::Status s =
          DecodeStartDataSource(p, payload_size, &out->start_data_source);
      if (!s.ok())
        return s;
      out->type = MessageType::kStartDataSource;
      return base::OkStatus();
    }
    case static_cast<uint32_t>(MessageType::kDataSourceCategories): {
      const base::Status s = DecodeDataSourceCategories(
          p, payload_size, &out->data_source_categories);
      if (!s.ok())
        return s;
      out->type = MessageType::kDataSourceCategories;
      return base::OkStatus();
    }
    case static_cast<uint32_t>(MessageType::kStopDataSource):
    case static_cast<uint32_t>(MessageType::kDataSourceStopped):
    case static_cast<uint32_t>(MessageType::kFlush):
    case static_cast<uint32_t>(MessageType::kFlushAck): {
      if (payload_size != kIdPayloadSize)
        return base::ErrStatus(
            "message type %u: payload of %u bytes, "
            "expected %zu",
            type, payload_size, kIdPayloadSize);
      const uint32_t id = GetU32(p);
      const bool is_instance =
          type == static_cast<uint32_t>(MessageType::kStopDataSource) ||
          type == static_cast<uint32_t>(MessageType::kDataSourceStopped);
      if (is_instance && id == 0)
        return base::ErrStatus("message type %u with instance id 0", type);
      out->type = static_cast<MessageType>(type);
      out->id = id;
      return base::OkStatus();
    }
  }
  return base::ErrStatus("unknown message type %u", type);
}

}  // namespace ipc
}  // namespace ringtrace
