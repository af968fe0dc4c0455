/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/ftrace/page_parser.h"

#include <string.h>

#include "src/base/checked_math.h"

namespace ringtrace {
namespace ftrace {
namespace {

// The pages are in the kernel's byte order, which is ours. The event
// header's bit-fields {type_len:5, time_delta:27} put type_len in the low
// bits only on little-endian machines.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the event header layout below is the little-endian one");

constexpr size_t kEventHeaderSize = 4;  // RB_EVNT_HDR_SIZE

inline uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}

// A long of |size| (4 or 8) bytes.
inline uint64_t LoadLong(const uint8_t* p, uint32_t size) {
  return size == 8 ? Load64(p) : Load32(p);
}

}  // namespace

const char* PageErrorName(PageError error) {
  switch (error) {
    case PageError::kNone:
      return "none";
    case PageError::kShortPage:
      return "short page";
    case PageError::kInvalidPageHeader:
      return "invalid page header";
    case PageError::kShortEventHeader:
      return "short event header";
    case PageError::kShortPaddingLength:
      return "short padding length";
    case PageError::kInvalidPaddingLength:
      return "invalid padding length";
    case PageError::kShortTimeExtend:
      return "short time extend";
    case PageError::kShortTimeStamp:
      return "short time stamp";
    case PageError::kShortDataLength:
      return "short data length";
    case PageError::kZeroDataLength:
      return "zero data length";
    case PageError::kInvalidDataLength:
      return "invalid data length";
    case PageError::kTimeOverflow:
      return "time overflow";
  }
  return "unknown";
}

PageError ParsePageHeader(const uint8_t* page,
                          size_t size,
                          const HeaderPage& layout,
                          PageHeader* out) {
  if (layout.commit_size != 4 && layout.commit_size != 8)
    return PageError::kInvalidPageHeader;
  if (!base::RangeInBounds(layout.timestamp_offset, sizeof(uint64_t), size) ||
      !base::RangeInBounds(layout.commit_offset, layout.commit_size, size) ||
      layout.data_offset > size)
    return PageError::kShortPage;
  PageHeader header;
  header.timestamp = Load64(page + layout.timestamp_offset);
  // The low 32 bits: above them a 64-bit kernel leaves the sign extension
  // of RB_MISSED_EVENTS (see the header comment).
  const uint32_t commit = static_cast<uint32_t>(
      LoadLong(page + layout.commit_offset, layout.commit_size));
  header.lost_events = (commit & kMissedEvents) != 0;
  header.lost_count_stored = (commit & kMissedStored) != 0;
  const uint64_t length = commit & ~(kMissedEvents | kMissedStored);
  const size_t room = size - layout.data_offset;
  if (length > room)
    return PageError::kInvalidPageHeader;
  header.data_length = static_cast<uint32_t>(length);
  if (header.lost_count_stored) {
    // The kernel stores the count only along with RB_MISSED_EVENTS, and
    // only where it fits.
    if (!header.lost_events ||
        !base::RangeInBounds(layout.data_offset + header.data_length,
                             layout.commit_size, size))
      return PageError::kInvalidPageHeader;
    header.lost_count = LoadLong(page + layout.data_offset + header.data_length,
                                 layout.commit_size);
  }
  *out = header;
  return PageError::kNone;
}

PageEventIterator::PageEventIterator(const uint8_t* page,
                                     const HeaderPage& layout,
                                     const PageHeader& header)
    : page_(page),
      pos_(page + layout.data_offset),
      end_(page + layout.data_offset + header.data_length),
      ts_(header.timestamp) {}

bool PageEventIterator::Next(RawEvent* event) {
  // Each pass consumes at least kEventHeaderSize bytes or ends the parse.
  while (!done_) {
    const size_t left = static_cast<size_t>(end_ - pos_);
    if (left == 0) {
      done_ = true;
      return false;
    }
    if (left < kEventHeaderSize)
      return Fail(PageError::kShortEventHeader);
    const uint32_t word = Load32(pos_);
    const uint32_t type_len = word & 0x1f;
    const uint32_t time_delta = word >> 5;
    switch (type_len) {
      case kTypePadding: {
        if (time_delta == 0) {
          // The rest of the page is padding.
          done_ = true;
          return false;
        }
        if (left < kEventHeaderSize + 4)
          return Fail(PageError::kShortPaddingLength);
        // The length counts its own word: a padding event is >= 8 bytes.
        const uint64_t length = Load32(pos_ + kEventHeaderSize);
        const uint64_t total = length + kEventHeaderSize;
        if (length < 4 || total > left)
          return Fail(PageError::kInvalidPaddingLength);
        pos_ += total;
        continue;  // the kernel's reader does not add its time_delta
      }
      case kTypeTimeExtend: {
        if (left < kEventHeaderSize + 4)
          return Fail(PageError::kShortTimeExtend);
        const uint64_t extend =
            (uint64_t{Load32(pos_ + kEventHeaderSize)} << kTimeShift) +
            time_delta;
        if (!base::CheckedAdd(ts_, extend, &ts_))
          return Fail(PageError::kTimeOverflow);
        pos_ += kEventHeaderSize + 4;
        continue;
      }
      case kTypeTimeStamp: {
        if (left < kEventHeaderSize + 4)
          return Fail(PageError::kShortTimeStamp);
        // 59 bits; the top 5 come from the running time, which may have
        // carried into them since (the kernel's rb_fix_abs_ts()).
        uint64_t abs =
            (uint64_t{Load32(pos_ + kEventHeaderSize)} << kTimeShift) +
            time_delta;
        if (ts_ & kTimeStampMsb) {
          abs |= ts_ & kTimeStampMsb;
          if (abs < ts_ && !base::CheckedAdd(abs, uint64_t{1} << 59, &abs))
            return Fail(PageError::kTimeOverflow);
        }
        ts_ = abs;
        pos_ += kEventHeaderSize + 4;
        continue;
      }
      default:
        break;
    }
    // A data event.
    const uint8_t* record;
    uint64_t record_size;
    uint64_t total;
    if (type_len == 0) {
      if (left < kEventHeaderSize + 4)
        return Fail(PageError::kShortDataLength);
      // The length counts its own word; the record follows it.
      const uint64_t length = Load32(pos_ + kEventHeaderSize);
      if (length <= 4)
        return Fail(PageError::kZeroDataLength);
      total = length + kEventHeaderSize;
      if (total > left)
        return Fail(PageError::kInvalidDataLength);
      record = pos_ + kEventHeaderSize + 4;
      record_size = length - 4;
    } else {
      // 1 .. kTypeDataMax.
      record_size = uint64_t{type_len} * 4;
      total = record_size + kEventHeaderSize;
      if (total > left)
        return Fail(PageError::kInvalidDataLength);
      record = pos_ + kEventHeaderSize;
    }
    if (!base::CheckedAdd(ts_, uint64_t{time_delta}, &ts_))
      return Fail(PageError::kTimeOverflow);
    pos_ += total;
    event->timestamp = ts_;
    event->data = record;
    event->size = static_cast<uint32_t>(record_size);
    return true;
  }
  return false;
}

}  // namespace ftrace
}  // namespace ringtrace
