/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Readers of untrusted protobuf bytes: a contiguous buffer
// (ContiguousReader) or the concatenation of slices (SliceReader, for a
// packet that spans chunks). Both decode varints with the one DecodeVarInt
// of ringtrace/proto_wire.h (the slice reader gathers a straddling varint's
// bytes first), never read outside their input, and report errors as
// WireError. Hot paths (one-byte varints, a value that ends in the current
// slice, an 8-byte-at-once skip of a varint) are inline.
//
// Users: the Ungrouper (both readers, through one template; its one pass
// reads with ContiguousReader), the tools that scan a trace file.
//
// Thread model: a reader is used by one thread; the bytes must not change
// while it reads them (callers copy shared memory first).

#ifndef SRC_TRACING_CORE_ENCODING_WIRE_READER_H_
#define SRC_TRACING_CORE_ENCODING_WIRE_READER_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>

#include "ringtrace/logging.h"
#include "ringtrace/proto_wire.h"

namespace ringtrace {
namespace encoding {

// A read-only view of bytes owned by someone else.
struct ConstBytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// Reads a contiguous input. Never reads outside [begin, end).
class ContiguousReader {
 public:
  ContiguousReader(const uint8_t* data, size_t size)
      : begin_(data), cur_(data), end_(data + size) {}

  uint64_t total_size() const { return static_cast<uint64_t>(end_ - begin_); }
  bool AtEnd() const { return cur_ == end_; }
  uint64_t offset() const { return static_cast<uint64_t>(cur_ - begin_); }

  WireError ReadVarInt(size_t max_len, uint64_t* value, uint32_t* len) {
    if (RT_LIKELY(cur_ != end_ && *cur_ < 0x80)) {
      *value = *cur_++;
      *len = 1;
      return WireError::kNone;
    }
    WireError e = DecodeVarInt(cur_, end_, max_len, value, len);
    if (e == WireError::kNone)
      cur_ += *len;
    return e;
  }

  // Skips a value varint (wire type 0) without decoding it.
  WireError SkipVarInt() {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    // Finds the terminating byte (high bit clear) among the next 8 with one
    // load, then checks bytes 9 and 10 (nanosecond timestamps take 9).
    if (RT_LIKELY(end_ - cur_ >= static_cast<ptrdiff_t>(kMaxVarIntSize))) {
      uint64_t word;
      memcpy(&word, cur_, 8);
      const uint64_t stops = ~word & 0x8080808080808080ull;
      if (RT_LIKELY(stops != 0)) {
        cur_ += (static_cast<uint32_t>(__builtin_ctzll(stops)) >> 3) + 1;
        return WireError::kNone;
      }
      if (cur_[8] < 0x80) {
        cur_ += 9;
        return WireError::kNone;
      }
      if (cur_[9] < 0x80) {
        cur_ += 10;
        return WireError::kNone;
      }
      return WireError::kVarIntTooLong;
    }
#endif
    uint64_t value;
    uint32_t len;
    return ReadVarInt(kMaxVarIntSize, &value, &len);
  }

  WireError Skip(uint64_t n) {
    if (n > static_cast<uint64_t>(end_ - cur_))
      return WireError::kTruncated;
    cur_ += n;
    return WireError::kNone;
  }

 private:
  const uint8_t* const begin_;
  const uint8_t* cur_;
  const uint8_t* const end_;
};

// Reads the concatenation of a list of slices (empty slices allowed). A
// varint may straddle slices. Never reads outside a slice.
class SliceReader {
 public:
  // |total| is the sum of the slice sizes (computed by the caller without
  // overflow).
  SliceReader(const ConstBytes* slices, size_t num_slices, uint64_t total)
      : slices_(slices), num_slices_(num_slices), total_(total) {
    if (num_slices_ > 0) {
      cur_ = slices_[0].data;
      end_ = cur_ + slices_[0].size;
    }
  }

  uint64_t total_size() const { return total_; }
  bool AtEnd() const { return offset_ == total_; }
  uint64_t offset() const { return offset_; }

  WireError ReadVarInt(size_t max_len, uint64_t* value, uint32_t* len) {
    if (RT_LIKELY(cur_ != end_ && *cur_ < 0x80)) {  // One byte.
      *value = *cur_;
      *len = 1;
      Advance(1);
      return WireError::kNone;
    }
    // Fast path: the varint ends inside the current slice.
    WireError e = DecodeVarInt(cur_, end_, max_len, value, len);
    if (RT_LIKELY(e != WireError::kTruncated)) {
      if (e == WireError::kNone)
        Advance(*len);
      return e;
    }
    // Slow path: the varint straddles slices. Its first bytes (at most
    // |max_len|, at most what is left) are gathered and decoded by the same
    // DecodeVarInt; then the reader moves past them.
    uint8_t buf[kMaxVarIntSize];
    const size_t want = static_cast<size_t>(std::min<uint64_t>(
        std::min(max_len, kMaxVarIntSize), total_ - offset_));
    size_t got = 0;
    size_t index = slice_index_;
    const uint8_t* p = cur_;
    const uint8_t* slice_end = end_;
    while (got < want) {
      if (p == slice_end) {
        // |want| bytes are left in total, so another slice holds them.
        RT_DCHECK(index + 1 < num_slices_);
        index++;
        p = slices_[index].data;
        slice_end = p + slices_[index].size;
        continue;
      }
      buf[got++] = *p++;
    }
    e = DecodeVarInt(buf, buf + got, max_len, value, len);
    if (e == WireError::kNone) {
      const WireError skipped = Skip(*len);  // |got| bytes are left
      RT_DCHECK(skipped == WireError::kNone);
      (void)skipped;
    }
    return e;
  }

  WireError SkipVarInt() {
    uint64_t value;
    uint32_t len;
    return ReadVarInt(kMaxVarIntSize, &value, &len);
  }

  WireError Skip(uint64_t n) {
    if (RT_LIKELY(n <= static_cast<uint64_t>(end_ - cur_))) {
      Advance(static_cast<size_t>(n));  // Stays in the current slice.
      return WireError::kNone;
    }
    if (n > total_ - offset_)
      return WireError::kTruncated;
    offset_ += n;
    // Walks forward; each iteration either finishes or moves to the next
    // slice, so the loop is bounded by the number of slices.
    while (n > static_cast<uint64_t>(end_ - cur_)) {
      n -= static_cast<uint64_t>(end_ - cur_);
      NextSlice();
    }
    cur_ += n;
    return WireError::kNone;
  }

 private:
  void Advance(size_t n) {  // |n| bytes known to be in the current slice.
    cur_ += n;
    offset_ += n;
  }

  void NextSlice() {
    slice_index_++;
    RT_CHECK(slice_index_ < num_slices_);  // Callers check the total first.
    cur_ = slices_[slice_index_].data;
    end_ = cur_ + slices_[slice_index_].size;
  }

  const ConstBytes* const slices_;
  const size_t num_slices_;
  const uint64_t total_;
  size_t slice_index_ = 0;
  const uint8_t* cur_ = nullptr;
  const uint8_t* end_ = nullptr;
  uint64_t offset_ = 0;
};

}  // namespace encoding
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_ENCODING_WIRE_READER_H_
