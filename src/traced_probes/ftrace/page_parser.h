/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Parser of the kernel ring buffer pages read from
// per_cpu/cpuN/trace_pipe_raw (the kernel's layout, kernel/trace/
// ring_buffer.c; docs/ftrace.md, "Pages"):
//
//   page header (events/header_page): u64 time_stamp, then `commit`, a long
//     whose low 30 bits are the length of the data and whose bits 31 and
//     30 are flags:
//       RB_MISSED_EVENTS (1 << 31): events were lost before this page;
//       RB_MISSED_STORED (1 << 30): their count, a long, is stored right
//                                   after the data.
//     The kernel adds the flags to the long with local_add(); (1 << 31) is
//     an int, so on a 64-bit kernel adding it sign-extends into the upper
//     32 bits (a page with lost events reads 0xffffffffc0000fbc: flags,
//     length 0xfbc). Only the low 32 bits are read.
//   then the events, each a u32 header {type_len:5, time_delta:27}:
//     type_len 0      data; its length (counting this word) in the next u32,
//                     the record after it;
//     type_len 1..28  data of type_len * 4 bytes right after the header;
//     type_len 29     padding: time_delta 0 means the rest of the page,
//                     otherwise its length (counting that word) follows;
//     type_len 30     time extend: the next u32 << 27 plus time_delta is
//                     added to the time;
//     type_len 31     absolute time stamp: the next u32 << 27 plus
//                     time_delta, 59 bits, the top 5 bits taken from the
//                     running time.
//   Data events add their time_delta to the running time, which starts at
//   the page's time_stamp; padding does not.
//
// The page is untrusted: every length is checked against the page before
// use, with checked arithmetic; each step advances at least 4 bytes, so a
// page of N bytes takes at most N / 4 steps. A malformed page ends the
// parse with a PageError (what came before it stays valid); it never
// crashes, reads out of bounds or loops.

#ifndef SRC_TRACED_PROBES_FTRACE_PAGE_PARSER_H_
#define SRC_TRACED_PROBES_FTRACE_PAGE_PARSER_H_

#include <stddef.h>
#include <stdint.h>

#include "src/traced_probes/ftrace/event_format.h"

namespace ringtrace {
namespace ftrace {

// The commit word's flags (kernel/trace/ring_buffer.c).
constexpr uint64_t kMissedEvents = uint64_t{1} << 31;  // RB_MISSED_EVENTS
constexpr uint64_t kMissedStored = uint64_t{1} << 30;  // RB_MISSED_STORED

// Event header type_len values (include/linux/ring_buffer.h).
constexpr uint32_t kTypeDataMax = 28;     // RINGBUF_TYPE_DATA_TYPE_LEN_MAX
constexpr uint32_t kTypePadding = 29;     // RINGBUF_TYPE_PADDING
constexpr uint32_t kTypeTimeExtend = 30;  // RINGBUF_TYPE_TIME_EXTEND
constexpr uint32_t kTypeTimeStamp = 31;   // RINGBUF_TYPE_TIME_STAMP
constexpr uint32_t kTimeShift = 27;       // TS_SHIFT
// The 5 bits of a time an absolute time stamp does not carry (TS_MSB).
constexpr uint64_t kTimeStampMsb = uint64_t{0xf8} << 56;

enum class PageError : uint8_t {
  kNone = 0,
  // The buffer is shorter than the page header.
  kShortPage,
  // The data length, or the stored lost count after it, is past the page.
  kInvalidPageHeader,
  // Fewer than 4 bytes left for an event header.
  kShortEventHeader,
  // A padding event whose length word is missing ...
  kShortPaddingLength,
  // ... or smaller than itself or past the data.
  kInvalidPaddingLength,
  kShortTimeExtend,
  kShortTimeStamp,
  // A type_len 0 event whose length word is missing ...
  kShortDataLength,
  // ... or leaves no record ...
  kZeroDataLength,
  // ... or runs past the data; or a type_len 1..28 event past the data.
  kInvalidDataLength,
  // The time went past 2^64 (no kernel writes that).
  kTimeOverflow,
};

const char* PageErrorName(PageError error);

struct PageHeader {
  uint64_t timestamp = 0;
  // Bytes of events after the header.
  uint32_t data_length = 0;
  // Events were lost before this page (RB_MISSED_EVENTS).
  bool lost_events = false;
  // Their count was stored (RB_MISSED_STORED); then |lost_count| holds it.
  bool lost_count_stored = false;
  uint64_t lost_count = 0;
};

// Reads the header of |page| (|size| bytes, the whole buffer read) laid
// out as |layout| says (ParseHeaderPage(), or the 64-bit defaults). The
// data and the stored count must lie inside |size|; layout.data_size is not
// a limit (sub-buffers can be larger than a page).
PageError ParsePageHeader(const uint8_t* page,
                          size_t size,
                          const HeaderPage& layout,
                          PageHeader* out);

// One data event: its time and its record (common_type first). |data|
// points into the page.
struct RawEvent {
  uint64_t timestamp = 0;
  const uint8_t* data = nullptr;
  uint32_t size = 0;
};

// Walks the events of a page whose header parsed:
//
//   PageHeader header;
//   if (ParsePageHeader(page, size, layout, &header) == PageError::kNone) {
//     PageEventIterator it(page, layout, header);
//     RawEvent event;
//     while (it.Next(&event)) ...
//     if (it.error() != PageError::kNone) ...  // the rest was corrupt
//   }
class PageEventIterator {
 public:
  // |page| must hold layout.data_offset + header.data_length bytes (as
  // ParsePageHeader() checked).
  PageEventIterator(const uint8_t* page,
                    const HeaderPage& layout,
                    const PageHeader& header);

  // The next data event; false at the end of the data or on an error.
  bool Next(RawEvent* event);

  PageError error() const { return error_; }
  // The running time: of the last event returned, or where the parse
  // stopped.
  uint64_t timestamp() const { return ts_; }
  // Offset into the page where the parse stopped on an error.
  size_t error_offset() const { return static_cast<size_t>(pos_ - page_); }

 private:
  bool Fail(PageError error) {
    error_ = error;
    done_ = true;
    return false;
  }

  const uint8_t* page_;
  const uint8_t* pos_;
  const uint8_t* end_;
  uint64_t ts_;
  PageError error_ = PageError::kNone;
  bool done_ = false;
};

}  // namespace ftrace
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_FTRACE_PAGE_PARSER_H_
