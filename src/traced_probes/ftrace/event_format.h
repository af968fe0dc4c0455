/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Parsers of the layout files tracefs publishes (docs/ftrace.md, "Formats"):
//
//  - events/<group>/<name>/format: an event's name, its numeric ID (the
//    common_type every record of it starts with) and its fields, each with
//    the offset and size it has in the raw record and whether it is signed:
//
//      name: sched_switch
//      ID: 316
//      format:
//      	field:unsigned short common_type;	offset:0; size:2;
//      signed:0;
//      	...
//      	field:char prev_comm[16];	offset:8;	size:16;
//      signed:0; 	field:__data_loc char[] name;	offset:8;	size:4;
//      signed:0;
//
//  - events/header_page: the layout of the ring buffer page header
//    (timestamp, commit, data), where commit is a long (8 bytes on 64-bit
//    kernels).
//
// The text is treated as untrusted: every number is range-checked, every
// field must lie inside 64 KiB (records are at most a page), and the counts
// of lines and fields are bounded. A malformed file is an error Status that
// names the line; nothing crashes or reads out of bounds.

#ifndef SRC_TRACED_PROBES_FTRACE_EVENT_FORMAT_H_
#define SRC_TRACED_PROBES_FTRACE_EVENT_FORMAT_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ringtrace/status.h"

namespace ringtrace {
namespace ftrace {

// How a field's bytes are read from a record.
enum class FieldKind : uint8_t {
  // A little-endian integer of 1, 2, 4 or 8 bytes (signed per |is_signed|).
  kInt,
  // char name[N] (N == size > 0): a string ending at the first NUL or at
  // the end of the array.
  kFixedString,
  // char name[] with size 0 (ftrace/print's buf): a string from |offset| to
  // the first NUL or the end of the record.
  kTailString,
  // __data_loc T[] name: a u32 whose low 16 bits are the offset of the data
  // in the record and high 16 bits its length.
  kDataLoc,
  // __rel_loc T[] name: as kDataLoc, the offset counted from the end of the
  // u32 itself.
  kRelLoc,
  // Anything else (arrays of integers, odd sizes): kept in the format, not
  // decoded.
  kOther,
};

struct FormatField {
  std::string name;  // e.g. "prev_comm"
  std::string type;  // the declaration without the name: "char[16]"
  uint32_t offset = 0;
  uint32_t size = 0;
  bool is_signed = false;
  FieldKind kind = FieldKind::kOther;
};

// Limits on what is accepted (far above what kernels publish).
constexpr uint32_t kMaxRecordSize = 64 * 1024;
constexpr size_t kMaxFormatFields = 512;
constexpr size_t kMaxFormatLines = 2048;
constexpr size_t kMaxNameLength = 256;
// common_type is a u16: IDs above it cannot be named by a record.
constexpr uint32_t kMaxEventId = 0xffff;

struct EventFormat {
  std::string group;  // the directory's (the file does not say); may be ""
  std::string name;
  uint32_t id = 0;
  // The common_* fields (common_type, common_flags, common_preempt_count,
  // common_pid, ...), then the event's own fields, in file order.
  std::vector<FormatField> common_fields;
  std::vector<FormatField> fields;

  // The field named |field_name| among the event's own fields, then the
  // common ones; null when absent.
  const FormatField* FindField(std::string_view field_name) const;
};

// Parses a format file. |group| is stored as given.
base::Status ParseEventFormat(std::string_view text,
                              std::string_view group,
                              EventFormat* out);

// The ring buffer page header. The defaults are the 64-bit kernel's.
struct HeaderPage {
  uint32_t timestamp_offset = 0;
  uint32_t timestamp_size = 8;
  uint32_t commit_offset = 8;
  uint32_t commit_size = 8;  // sizeof(long): 4 on 32-bit kernels
  uint32_t data_offset = 16;
  uint32_t data_size = 4080;  // the data area of a default page
};

// Parses events/header_page. The timestamp must be 8 bytes, commit 4 or 8,
// and the three must not overlap (data after both).
base::Status ParseHeaderPage(std::string_view text, HeaderPage* out);

// Formats by ID, for the translator. Lookup is an index into a vector.
class EventFormatTable {
 public:
  EventFormatTable();
  ~EventFormatTable();
  EventFormatTable(const EventFormatTable&) = delete;
  EventFormatTable& operator=(const EventFormatTable&) = delete;

  // Refuses an ID above kMaxEventId, an ID already present, and a format
  // without common_type.
  base::Status Add(EventFormat format);

  const EventFormat* Find(uint32_t id) const {
    return id < by_id_.size() ? by_id_[id] : nullptr;
  }
  const EventFormat* FindByName(std::string_view group,
                                std::string_view name) const;
  size_t size() const { return formats_.size(); }
  // The formats in the order they were added.
  const std::vector<std::unique_ptr<EventFormat>>& formats() const {
    return formats_;
  }

 private:
  std::vector<std::unique_ptr<EventFormat>> formats_;
  std::vector<const EventFormat*> by_id_;
};

}  // namespace ftrace
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_FTRACE_EVENT_FORMAT_H_
