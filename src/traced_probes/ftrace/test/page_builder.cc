/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/ftrace/test/page_builder.h"

#include <string.h>

#include <algorithm>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace ftrace {
namespace test {

EventFormat ParseFormatOrDie(std::string_view text, std::string_view group) {
  EventFormat format;
  base::Status s = ParseEventFormat(text, group, &format);
  if (!s.ok())
    RT_FATAL("%s", s.message().c_str());
  return format;
}

HeaderPage ParseHeaderPageOrDie(std::string_view text) {
  HeaderPage header;
  base::Status s = ParseHeaderPage(text, &header);
  if (!s.ok())
    RT_FATAL("%s", s.message().c_str());
  return header;
}

PageBuilder::PageBuilder(size_t page_size, const HeaderPage& layout)
    : page_size_(page_size), layout_(layout) {
  RT_CHECK(page_size_ >= layout_.data_offset);
}

PageBuilder& PageBuilder::SetTimestamp(uint64_t ts) {
  timestamp_ = ts;
  return *this;
}

void PageBuilder::Word(uint32_t w) {
  uint8_t b[4];
  memcpy(b, &w, 4);
  data_.insert(data_.end(), b, b + 4);
}

PageBuilder& PageBuilder::AddEvent(uint32_t time_delta,
                                   const std::vector<uint8_t>& record,
                                   bool force_length_word) {
  RT_CHECK(time_delta < (1u << 27));
  const size_t padded = (record.size() + 3) & ~size_t{3};
  RT_CHECK(padded > 0);
  if (!force_length_word && padded <= 28 * 4) {
    Word(static_cast<uint32_t>(padded / 4) | (time_delta << 5));
  } else {
    Word(time_delta << 5);  // type_len 0
    Word(static_cast<uint32_t>(padded + 4));
  }
  data_.insert(data_.end(), record.begin(), record.end());
  data_.resize(data_.size() + (padded - record.size()), 0);
  return *this;
}

PageBuilder& PageBuilder::AddTimeExtend(uint64_t delta) {
  RT_CHECK(delta < (uint64_t{1} << 59));
  Word(30u | (static_cast<uint32_t>(delta & ((1u << 27) - 1)) << 5));
  Word(static_cast<uint32_t>(delta >> 27));
  return *this;
}

PageBuilder& PageBuilder::AddTimeStamp(uint64_t ts) {
  const uint64_t low = ts & ((uint64_t{1} << 59) - 1);
  Word(31u | (static_cast<uint32_t>(low & ((1u << 27) - 1)) << 5));
  Word(static_cast<uint32_t>(low >> 27));
  return *this;
}

PageBuilder& PageBuilder::AddPadding(uint32_t total, uint32_t time_delta) {
  RT_CHECK(total >= 8 && total % 4 == 0 && time_delta != 0 &&
           time_delta < (1u << 27));
  Word(29u | (time_delta << 5));
  Word(total - 4);
  data_.resize(data_.size() + total - 8, 0);
  return *this;
}

PageBuilder& PageBuilder::AddNullPadding() {
  Word(29u);
  return *this;
}

PageBuilder& PageBuilder::AddRaw(const std::vector<uint8_t>& bytes) {
  data_.insert(data_.end(), bytes.begin(), bytes.end());
  return *this;
}

PageBuilder& PageBuilder::AddWord(uint32_t word) {
  Word(word);
  return *this;
}

PageBuilder& PageBuilder::SetLost(bool stored, uint64_t count) {
  lost_ = true;
  stored_ = stored;
  lost_count_ = count;
  return *this;
}

PageBuilder& PageBuilder::OverrideCommit(uint64_t commit) {
  override_commit_ = true;
  commit_ = commit;
  return *this;
}

bool PageBuilder::Fits(size_t bytes) const {
  return layout_.data_offset + data_.size() + bytes + layout_.commit_size <=
         page_size_;
}

std::vector<uint8_t> PageBuilder::Build() const {
  std::vector<uint8_t> page(page_size_, 0);
  RT_CHECK(layout_.data_offset + data_.size() <= page_size_);
  memcpy(page.data() + layout_.timestamp_offset, &timestamp_, 8);
  // As the kernel: local_add() of RB_MISSED_STORED (1 << 30) and of
  // RB_MISSED_EVENTS, the int (1 << 31), sign-extended into the long.
  uint64_t commit = data_.size();
  if (stored_)
    commit += uint64_t{1} << 30;
  if (lost_)
    commit += static_cast<uint64_t>(int64_t{INT32_MIN});
  if (override_commit_)
    commit = commit_;
  if (layout_.commit_size == 8) {
    memcpy(page.data() + layout_.commit_offset, &commit, 8);
  } else {
    const uint32_t c32 = static_cast<uint32_t>(commit);
    memcpy(page.data() + layout_.commit_offset, &c32, 4);
  }
  if (!data_.empty())
    memcpy(page.data() + layout_.data_offset, data_.data(), data_.size());
  if (stored_) {
    const size_t at = layout_.data_offset + data_.size();
    RT_CHECK(at + layout_.commit_size <= page_size_);
    if (layout_.commit_size == 8) {
      memcpy(page.data() + at, &lost_count_, 8);
    } else {
      const uint32_t c32 = static_cast<uint32_t>(lost_count_);
      memcpy(page.data() + at, &c32, 4);
    }
  }
  return page;
}

RecordBuilder::RecordBuilder(const EventFormat& format) : format_(format) {
  size_t size = 0;
  for (const FormatField& f : format.common_fields)
    size = std::max<size_t>(size, f.offset + f.size);
  for (const FormatField& f : format.fields)
    size = std::max<size_t>(size, f.offset + f.size);
  bytes_.assign(size, 0);
  SetInt("common_type", format.id);
}

const FormatField& RecordBuilder::Field(std::string_view name) const {
  const FormatField* f = format_.FindField(name);
  if (!f)
    RT_FATAL("format %s has no field %.*s", format_.name.c_str(),
             static_cast<int>(name.size()), name.data());
  return *f;
}

RecordBuilder& RecordBuilder::SetInt(std::string_view field, int64_t value) {
  const FormatField& f = Field(field);
  RT_CHECK(f.kind == FieldKind::kInt);
  RT_CHECK(f.offset + f.size <= bytes_.size());
  memcpy(bytes_.data() + f.offset, &value, f.size);  // little-endian
  return *this;
}

RecordBuilder& RecordBuilder::SetString(std::string_view field,
                                        std::string_view value) {
  const FormatField& f = Field(field);
  switch (f.kind) {
    case FieldKind::kFixedString: {
      RT_CHECK(f.size > 0);
      const size_t n = std::min<size_t>(value.size(), f.size - 1);
      memset(bytes_.data() + f.offset, 0, f.size);
      memcpy(bytes_.data() + f.offset, value.data(), n);
      break;
    }
    case FieldKind::kDataLoc:
    case FieldKind::kRelLoc: {
      const size_t at = bytes_.size();
      bytes_.insert(bytes_.end(), value.begin(), value.end());
      bytes_.push_back(0);
      const size_t length = value.size() + 1;
      RT_CHECK(at <= 0xffff && length <= 0xffff);
      const size_t base =
          f.kind == FieldKind::kRelLoc ? f.offset + f.size : size_t{0};
      const uint32_t loc = static_cast<uint32_t>(at - base) |
                           static_cast<uint32_t>(length) << 16;
      memcpy(bytes_.data() + f.offset, &loc, 4);
      break;
    }
    case FieldKind::kTailString:
      RT_CHECK(bytes_.size() == f.offset);
      bytes_.insert(bytes_.end(), value.begin(), value.end());
      bytes_.push_back(0);
      break;
    default:
      RT_FATAL("field %s is not a string", f.name.c_str());
  }
  return *this;
}

RecordBuilder& RecordBuilder::Resize(size_t size) {
  bytes_.resize(size, 0);
  return *this;
}

}  // namespace test
}  // namespace ftrace
}  // namespace ringtrace
