/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Builds ring buffer pages and event records the way the kernel
// lays them out (src/traced_probes/ftrace/page_parser.h has the format),
// written independently of the parser so that tests compare the two:
//
//   EventFormat format = ParseFormatOrDie(kSchedSwitchFormat, "sched");
//   std::vector<uint8_t> record = RecordBuilder(format)
//       .SetInt("common_pid", 7).SetString("prev_comm", "a").Build();
//   std::vector<uint8_t> page = PageBuilder()
//       .SetTimestamp(1000).AddEvent(5, record).Build();

#ifndef SRC_TRACED_PROBES_FTRACE_TEST_PAGE_BUILDER_H_
#define SRC_TRACED_PROBES_FTRACE_TEST_PAGE_BUILDER_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <string_view>
#include <vector>

#include "src/traced_probes/ftrace/event_format.h"

namespace ringtrace {
namespace ftrace {
namespace test {

// ParseEventFormat() that aborts on an error (the texts are the test's).
EventFormat ParseFormatOrDie(std::string_view text, std::string_view group);
// ParseHeaderPage() that aborts on an error.
HeaderPage ParseHeaderPageOrDie(std::string_view text);

class PageBuilder {
 public:
  // A page of |page_size| bytes whose header is laid out as |layout|.
  explicit PageBuilder(size_t page_size = 4096,
                       const HeaderPage& layout = HeaderPage());

  PageBuilder& SetTimestamp(uint64_t ts);
  // A data event. As the kernel: type_len = size / 4 for records up to 112
  // bytes, otherwise type_len 0 and a length word; |force_length_word|
  // picks the second form for any size. The record is padded to 4 bytes.
  PageBuilder& AddEvent(uint32_t time_delta,
                        const std::vector<uint8_t>& record,
                        bool force_length_word = false);
  // A time extend of |delta| (split into 27 low bits and the rest).
  PageBuilder& AddTimeExtend(uint64_t delta);
  // An absolute time stamp (its low 59 bits are stored).
  PageBuilder& AddTimeStamp(uint64_t ts);
  // A discarded event: padding of |total| bytes (>= 8, a multiple of 4)
  // with time_delta |time_delta| (non-zero).
  PageBuilder& AddPadding(uint32_t total, uint32_t time_delta = 1);
  // Padding with time_delta 0: the rest of the page.
  PageBuilder& AddNullPadding();
  // Raw bytes in the data area (for corrupt pages).
  PageBuilder& AddRaw(const std::vector<uint8_t>& bytes);
  PageBuilder& AddWord(uint32_t word);
  // Events were lost before this page; |stored| also writes |count| after
  // the data (RB_MISSED_STORED). The commit word gets the flags the way
  // the kernel adds them (bit 31 sign-extended on a 64-bit layout).
  PageBuilder& SetLost(bool stored, uint64_t count);
  // Replaces the commit word Build() writes.
  PageBuilder& OverrideCommit(uint64_t commit);

  // The whole page: header, data, the stored count, zeros.
  std::vector<uint8_t> Build() const;

  size_t data_size() const { return data_.size(); }
  // Whether |bytes| more fit (leaving room for a stored lost count).
  bool Fits(size_t bytes) const;

 private:
  void Word(uint32_t w);

  size_t page_size_;
  HeaderPage layout_;
  uint64_t timestamp_ = 0;
  std::vector<uint8_t> data_;
  bool lost_ = false;
  bool stored_ = false;
  uint64_t lost_count_ = 0;
  bool override_commit_ = false;
  uint64_t commit_ = 0;
};

// A record of |format|: common_type set to its ID, every other byte zero
// until set. Strings: a char[N] is copied with a NUL (truncated to N - 1),
// a __data_loc / __rel_loc string is appended after the fixed fields with
// its NUL, a tail string (char buf[]) is appended the same way; aborts on a
// field the format does not have.
class RecordBuilder {
 public:
  explicit RecordBuilder(const EventFormat& format);

  RecordBuilder& SetInt(std::string_view field, int64_t value);
  RecordBuilder& SetString(std::string_view field, std::string_view value);
  // Truncates (or extends with zeros) the record to |size| bytes.
  RecordBuilder& Resize(size_t size);

  std::vector<uint8_t> Build() const { return bytes_; }

 private:
  const FormatField& Field(std::string_view name) const;

  const EventFormat& format_;
  std::vector<uint8_t> bytes_;
};

}  // namespace test
}  // namespace ftrace
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_FTRACE_TEST_PAGE_BUILDER_H_
