/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/encoding/ungrouper.h"

#include <string.h>

#include <algorithm>
#include <utility>

#include "ringtrace/logging.h"
#include "ringtrace/proto_wire.h"
#include "src/base/checked_math.h"
#include "src/base/short_copy.h"
#include "src/tracing/core/encoding/wire_reader.h"

namespace ringtrace {
namespace ungrouper {

namespace {

using encoding::kWireEndGroup;
using encoding::kWireFixed32;
using encoding::kWireFixed64;
using encoding::kWireLengthDelimited;
using encoding::kWireStartGroup;
using encoding::kWireVarInt;

// A value varint has at most 10 bytes (64 bits / 7, rounded up); a tag is a
// 32-bit varint and has at most 5.
constexpr size_t kMaxVarIntLen = encoding::kMaxVarIntSize;
constexpr size_t kMaxTagLen = encoding::kMaxTagSize;

constexpr size_t kMinOutputCapacity = 256;

// The one pass handles packets whose groups nest at most this deep.
constexpr size_t kOnePassMaxDepth = 8;
static_assert(Ungrouper::kIntoExtraRoom >= kOnePassMaxDepth &&
                  Ungrouper::kIntoExtraRoom >= PacketShapes::kMaxGroups,
              "UngroupInto's room must hold the open groups' length bytes");

using encoding::ContiguousReader;
using encoding::EncodeVarInt;
using encoding::SliceReader;
using encoding::VarIntSize;
using encoding::WireError;

// The readers' errors are the first of the Ungrouper's, value for value.
constexpr UngroupError FromWire(WireError e) {
  return static_cast<UngroupError>(e);
}
static_assert(FromWire(WireError::kNone) == UngroupError::kNone &&
                  FromWire(WireError::kTruncated) == UngroupError::kTruncated &&
                  FromWire(WireError::kVarIntTooLong) ==
                      UngroupError::kVarIntTooLong,
              "WireError and UngroupError disagree");

using base::CopyShort;

// Copies consecutive byte ranges out of a list of slices.
class SliceCopier {
 public:
  SliceCopier(const ConstBytes* slices, size_t num_slices)
      : slices_(slices), num_slices_(num_slices) {}

  // Copies the next |n| bytes to |dst|; returns the end of the copy.
  uint8_t* CopyTo(uint64_t n, uint8_t* dst) {
    while (n > 0) {
      RT_CHECK(index_ < num_slices_);  // The measuring pass saw these bytes.
      const ConstBytes& s = slices_[index_];
      const uint64_t avail = s.size - pos_;
      const size_t chunk = static_cast<size_t>(std::min(avail, n));
      if (chunk > 0) {
        CopyShort(dst, s.data + pos_, chunk);
        dst += chunk;
        pos_ += chunk;
        n -= chunk;
      }
      if (pos_ == s.size) {
        index_++;
        pos_ = 0;
      }
    }
    return dst;
  }

  void SkipBytes(uint64_t n) {
    while (n > 0) {
      RT_CHECK(index_ < num_slices_);
      const ConstBytes& s = slices_[index_];
      const uint64_t step = std::min<uint64_t>(s.size - pos_, n);
      pos_ += static_cast<size_t>(step);
      n -= step;
      if (pos_ == s.size) {
        index_++;
        pos_ = 0;
      }
    }
  }

 private:
  const ConstBytes* const slices_;
  const size_t num_slices_;
  size_t index_ = 0;
  size_t pos_ = 0;
};

// Copies a range of a contiguous input.
class ContiguousCopier {
 public:
  explicit ContiguousCopier(const uint8_t* data) : cur_(data) {}
  uint8_t* CopyTo(uint64_t n, uint8_t* dst) {
    CopyShort(dst, cur_, static_cast<size_t>(n));
    cur_ += n;
    return dst + n;
  }
  void SkipBytes(uint64_t n) { cur_ += n; }

 private:
  const uint8_t* cur_;
};

// The emitting pass: applies |edits| to the input read through |copier|,
// writing |out_size| bytes to |dst|.
template <typename Copier>
void Emit(const Ungrouper::Edit* edits,
          size_t num_edits,
          uint64_t in_size,
          Copier* copier,
          uint8_t* dst,
          uint64_t out_size) {
  uint8_t* w = dst;
  uint64_t pos = 0;
  for (size_t i = 0; i < num_edits; i++) {
    const Ungrouper::Edit& e = edits[i];
    w = copier->CopyTo(e.offset - pos, w);
    copier->SkipBytes(e.skip);
    if (e.field != 0) {
      const uint64_t tag =
          (static_cast<uint64_t>(e.field) << 3) | kWireLengthDelimited;
      w = EncodeVarInt(tag, w);
      w = EncodeVarInt(e.content_size, w);
    }
    pos = e.offset + e.skip;
  }
  w = copier->CopyTo(in_size - pos, w);
  // Our invariant: the measuring pass computed the exact output size.
  RT_CHECK(static_cast<uint64_t>(w - dst) == out_size);
}

// Skips the value of a non-group field of wire type |wire| (the measuring
// pass's step for everything but groups). kBadWireType for 6 and 7.
template <typename Reader>
inline UngroupError SkipScalarField(Reader* r, uint32_t wire) {
  switch (wire) {
    case kWireVarInt:
      return FromWire(r->SkipVarInt());
    case kWireFixed64:
      return FromWire(r->Skip(8));
    case kWireFixed32:
      return FromWire(r->Skip(4));
    case kWireLengthDelimited: {
      uint64_t value;
      uint32_t len;
      const WireError e = r->ReadVarInt(kMaxVarIntLen, &value, &len);
      return FromWire(RT_LIKELY(e == WireError::kNone) ? r->Skip(value) : e);
    }
    default:  // 6 and 7.
      return UngroupError::kBadWireType;
  }
}

// (converted group size) - (raw group size) of a group of |field| whose
// converted content is |content| bytes, given the raw start and end tag
// lengths and the children's accumulated |child_delta|. All terms are
// bounded by the input size, so int64 arithmetic cannot overflow.
inline int64_t GroupDelta(uint32_t field,
                          uint64_t content,
                          int64_t child_delta,
                          uint32_t start_tag_len,
                          uint32_t end_tag_len) {
  const uint64_t new_tag =
      (static_cast<uint64_t>(field) << 3) | kWireLengthDelimited;
  return static_cast<int64_t>(VarIntSize(new_tag) + VarIntSize(content)) +
         child_delta - static_cast<int64_t>(start_tag_len + end_tag_len);
}

}  // namespace

const char* UngroupErrorName(UngroupError e) {
  switch (e) {
    case UngroupError::kNone:
      return "ok";
    case UngroupError::kTruncated:
      return "truncated field";
    case UngroupError::kVarIntTooLong:
      return "varint too long";
    case UngroupError::kBadWireType:
      return "bad wire type";
    case UngroupError::kFieldZero:
      return "field number 0";
    case UngroupError::kUnmatchedEnd:
      return "end-group without start-group";
    case UngroupError::kMismatchedEnd:
      return "end-group field differs from start-group field";
    case UngroupError::kUnterminated:
      return "unterminated group";
    case UngroupError::kTooDeep:
      return "groups nested too deep";
  }
  return "unknown";
}

Ungrouper::Ungrouper() = default;
Ungrouper::~Ungrouper() = default;

void Ungrouper::AppendEdit(Edit** edits,
                           size_t* num_edits,
                           size_t* capacity,
                           uint64_t offset,
                           uint32_t field,
                           uint32_t skip) {
  if (RT_UNLIKELY(*num_edits == *capacity)) {
    *edits = GrowEdits(*num_edits);
    *capacity = edits_capacity_;
  }
  Edit& edit = (*edits)[(*num_edits)++];
  edit.offset = offset;
  edit.content_size = 0;
  edit.field = field;
  edit.skip = skip;
}

// The measuring pass. On success returns kNone with *out_size the size of the
// converted packet and edits_ filled in input order (empty: no group). On
// error *err_off is the input offset the error is reported at.
template <typename Reader>
UngroupError Ungrouper::Measure(Reader* r,
                                uint64_t* out_size,
                                uint64_t* err_off) {
  // An open group. |delta| accumulates (converted - raw) sizes of the
  // group's already closed child groups.
  struct Frame {
    uint64_t content_start;
    int64_t delta;
    size_t edit_index;
    uint32_t field;
    uint32_t start_tag_len;
  };
  Frame stack[kMaxGroupDepth];
  size_t depth = 0;
  int64_t top_delta = 0;
  Edit* edits = edits_.get();
  size_t num_edits = 0;
  size_t capacity = edits_capacity_;
  num_edits_ = 0;
  fields_.Clear();

  while (!r->AtEnd()) {
    const uint64_t tag_off = r->offset();
    *err_off = tag_off;
    uint64_t tag;
    uint32_t tag_len;
    const WireError e = r->ReadVarInt(kMaxTagLen, &tag, &tag_len);
    if (RT_UNLIKELY(e != WireError::kNone))
      return FromWire(e);
    if (RT_UNLIKELY(tag > 0xffffffffu))
      return UngroupError::kVarIntTooLong;
    const uint32_t field = static_cast<uint32_t>(tag >> 3);
    if (RT_UNLIKELY(field == 0))
      return UngroupError::kFieldZero;
    if (depth == 0)
      fields_.Add(field);
    switch (static_cast<uint32_t>(tag) & 7) {
      case kWireStartGroup:
        if (RT_UNLIKELY(depth == kMaxGroupDepth))
          return UngroupError::kTooDeep;
        stack[depth++] = Frame{r->offset(), 0, num_edits, field, tag_len};
        // content_size is set at the end tag.
        AppendEdit(&edits, &num_edits, &capacity, tag_off, field, tag_len);
        break;
      case kWireEndGroup: {
        if (RT_UNLIKELY(depth == 0))
          return UngroupError::kUnmatchedEnd;
        const Frame& f = stack[depth - 1];
        if (RT_UNLIKELY(f.field != field))
          return UngroupError::kMismatchedEnd;
        const uint64_t raw_content = tag_off - f.content_start;
        // Non-negative: the children's converted sizes are >= 0.
        const uint64_t content = raw_content + static_cast<uint64_t>(f.delta);
        edits[f.edit_index].content_size = content;
        // field 0: an end edit, the tag is dropped.
        AppendEdit(&edits, &num_edits, &capacity, tag_off, 0, tag_len);
        const int64_t group_delta =
            GroupDelta(field, content, f.delta, f.start_tag_len, tag_len);
        depth--;
        if (depth > 0)
          stack[depth - 1].delta += group_delta;
        else
          top_delta += group_delta;
        break;
      }
      default: {
        const UngroupError skipped =
            SkipScalarField(r, static_cast<uint32_t>(tag) & 7);
        if (RT_UNLIKELY(skipped != UngroupError::kNone))
          return skipped;
        break;
      }
    }
  }
  if (depth > 0) {
    *err_off = edits[stack[depth - 1].edit_index].offset;
    return UngroupError::kUnterminated;
  }
  num_edits_ = num_edits;
  *out_size =
      static_cast<uint64_t>(static_cast<int64_t>(r->total_size()) + top_delta);
  return UngroupError::kNone;
}

bool Ungrouper::OnePass(const uint8_t* in,
                        size_t size,
                        uint8_t* dst,
                        size_t dst_room,
                        size_t* out_size,
                        bool* groups) {
  // The open groups: where each one's length byte goes, and its field.
  uint8_t* len_slot[kOnePassMaxDepth];
  uint32_t open_field[kOnePassMaxDepth];
  size_t depth = 0;
  ContiguousReader r(in, size);
  const uint8_t* run = in;  // The first input byte not yet copied.
  // |dst|, or out_ reserved at the first group: |out_room| bytes.
  uint8_t* out = dst;
  size_t out_room = dst_room;
  uint8_t* w = dst;
  size_t moved = 0;  // Content bytes moved to make room for longer lengths.
  size_t extra_total = 0;  // Length bytes added by those moves.
  TopLevelFields fields;
  bool any_group = false;
  // Room. Each start tag writes at most its own length plus one byte, each
  // end tag nothing, and a move adds its extra length bytes, so
  //   w - out <= (run - in) + depth + extra_total
  //           <= size + kOnePassMaxDepth + extra_total,
  // and a move is allowed only while that stays within out_room.
  while (!r.AtEnd()) {
    const uint8_t* const tag_at = in + r.offset();
    uint64_t tag;
    uint32_t tag_len;
    if (RT_UNLIKELY(r.ReadVarInt(kMaxTagLen, &tag, &tag_len) !=
                        WireError::kNone ||
                    tag > 0xffffffffu)) {
      return false;
    }
    const uint32_t field = static_cast<uint32_t>(tag >> 3);
    if (RT_UNLIKELY(field == 0))
      return false;
    if (depth == 0)
      fields.Add(field);
    const uint32_t wire = static_cast<uint32_t>(tag) & 7;
    if (wire == kWireStartGroup) {
      // Deeper nesting is rare, and its large groups would each move their
      // content: the two passes handle it in linear time.
      if (RT_UNLIKELY(depth == kOnePassMaxDepth))
        return false;
      if (!out) {  // Nothing is written before the first group.
        out_room = size + size / 8 + kOnePassMaxDepth;
        out = ReserveOutput(out_room);
        w = out;
      }
      const size_t n = static_cast<size_t>(tag_at - run);
      CopyShort(w, run, n);
      w = EncodeVarInt(
          (static_cast<uint64_t>(field) << 3) | kWireLengthDelimited, w + n);
      len_slot[depth] = w++;  // Filled in at the end tag.
      open_field[depth++] = field;
      run = tag_at + tag_len;
      any_group = true;
    } else if (wire == kWireEndGroup) {
      if (RT_UNLIKELY(depth == 0 || open_field[depth - 1] != field))
        return false;
      const size_t n = static_cast<size_t>(tag_at - run);
      CopyShort(w, run, n);
      w += n;
      depth--;
      uint8_t* const slot = len_slot[depth];
      const size_t content = static_cast<size_t>(w - (slot + 1));
      if (RT_LIKELY(content <= 127)) {
        *slot = static_cast<uint8_t>(content);
      } else {
        // A longer length: the content moves up by the extra bytes, within
        // the room reserved and a budget of twice |size| bytes moved in all
        // (nested large groups move their content once per level; past the
        // budget the two passes are cheaper).
        const size_t extra = VarIntSize(content) - 1;
        if (size + kOnePassMaxDepth + extra_total + extra > out_room ||
            content > 2 * size - moved) {
          return false;
        }
        memmove(slot + 1 + extra, slot + 1, content);
        moved += content;
        extra_total += extra;
        w += extra;
        EncodeVarInt(content, slot);
      }
      run = tag_at + tag_len;
    } else if (RT_UNLIKELY(SkipScalarField(&r, wire) != UngroupError::kNone)) {
      return false;
    }
  }
  if (depth != 0)
    return false;
  if (any_group || dst) {
    const size_t n = static_cast<size_t>(in + size - run);
    CopyShort(w, run, n);
    w += n;
    RT_CHECK(static_cast<size_t>(w - out) <= out_room);
  }
  *out_size = out ? static_cast<size_t>(w - out) : size;
  *groups = any_group;
  fields_ = fields;
  return true;
}

bool Ungrouper::UngroupInto(const uint8_t* data,
                            size_t size,
                            uint8_t* dst,
                            size_t* out_size) {
  bool groups = false;
  if (const PacketShapes::Shape* shape = shapes_.Find(data, size)) {
    *out_size = PacketShapes::Apply(*shape, data, dst);
    fields_ = shape->fields;
  } else if (RT_LIKELY(size <= SIZE_MAX / 4) &&
             OnePass(data, size, dst, size + kIntoExtraRoom, out_size,
                     &groups)) {
    shapes_.Remember(data, size, fields_);
  } else {
    fields_.Clear();
    return false;
  }
  one_pass_calls_++;
  last_error_ = UngroupError::kNone;
  num_edits_ = 0;
  pass_through_ = false;
  return true;
}

Ungrouper::Edit* Ungrouper::GrowEdits(size_t used) {
  // At most one edit per input byte, so this cannot overflow.
  const size_t cap = std::max<size_t>(64, edits_capacity_ * 2);
  std::unique_ptr<Edit[]> grown(new Edit[cap]);
  if (used > 0)
    memcpy(grown.get(), edits_.get(), used * sizeof(Edit));
  edits_ = std::move(grown);
  edits_capacity_ = cap;
  return edits_.get();
}

uint8_t* Ungrouper::ReserveOutput(uint64_t size) {
  // The output is at most ~ (1 + 4/2) x the input, which is in memory.
  RT_CHECK(size <= SIZE_MAX / 2);
  if (size > out_capacity_) {
    size_t cap = std::max(kMinOutputCapacity, out_capacity_ * 2);
    cap = std::max(cap, static_cast<size_t>(size));
    out_.reset(new uint8_t[cap]);  // Not value-initialised: no memset.
    out_capacity_ = cap;
  }
  return out_.get();
}

base::Status Ungrouper::Fail(UngroupError e, uint64_t offset) {
  last_error_ = e;
  num_edits_ = 0;
  fields_.Clear();
  return base::ErrStatus("ungrouper: %s at offset %llu", UngroupErrorName(e),
                         static_cast<unsigned long long>(offset));
}

base::Status Ungrouper::Ungroup(const uint8_t* data,
                                size_t size,
                                ConstBytes* out) {
  *out = ConstBytes{};
  pass_through_ = false;
  // A remembered shape first: no parse.
  if (const PacketShapes::Shape* shape = shapes_.Find(data, size)) {
    one_pass_calls_++;
    last_error_ = UngroupError::kNone;
    num_edits_ = 0;
    fields_ = shape->fields;
    pass_through_ = shape->num_edits == 0;
    if (pass_through_) {
      *out = ConstBytes{data, size};
    } else {
      uint8_t* dst = ReserveOutput(size + PacketShapes::kMaxGroups);
      *out = ConstBytes{dst, PacketShapes::Apply(*shape, data, dst)};
    }
    return base::OkStatus();
  }
  // Then the one pass (its output: at most out_room bytes).
  if (RT_LIKELY(size <= SIZE_MAX / 4)) {
    size_t one_pass_size = 0;
    bool groups = false;
    if (RT_LIKELY(OnePass(data, size, nullptr, 0, &one_pass_size, &groups))) {
      shapes_.Remember(data, size, fields_);
      one_pass_calls_++;
      last_error_ = UngroupError::kNone;
      num_edits_ = 0;
      pass_through_ = !groups;
      *out = groups ? ConstBytes{out_.get(), one_pass_size}
                    : ConstBytes{data, size};
      return base::OkStatus();
    }
  }
  two_pass_calls_++;
  ContiguousReader reader(data, size);
  uint64_t out_size = 0;
  uint64_t err_off = 0;
  UngroupError e = Measure(&reader, &out_size, &err_off);
  if (RT_UNLIKELY(e != UngroupError::kNone))
    return Fail(e, err_off);
  last_error_ = UngroupError::kNone;
  if (num_edits_ == 0) {  // No group: pass through, no copy.
    pass_through_ = true;
    *out = ConstBytes{data, size};
    return base::OkStatus();
  }
  uint8_t* dst = ReserveOutput(out_size);
  ContiguousCopier copier(data);
  Emit(edits_.get(), num_edits_, size, &copier, dst, out_size);
  *out = ConstBytes{dst, static_cast<size_t>(out_size)};
  return base::OkStatus();
}

base::Status Ungrouper::UngroupSlices(const ConstBytes* slices,
                                      size_t num_slices,
                                      SlicesResult* result) {
  *result = SlicesResult{};
  if (num_slices == 1) {  // The common case: the contiguous fast path.
    ConstBytes out;
    base::Status s = Ungroup(slices[0].data, slices[0].size, &out);
    if (!s.ok())
      return s;
    if (pass_through_)  // No group: |out| is the caller's slice.
      result->pass_through = true;
    else
      result->converted = out;
    return s;
  }
  uint64_t total = 0;
  for (size_t i = 0; i < num_slices; i++) {
    // Slices describe memory, so their sum cannot overflow; checked anyway.
    RT_CHECK(base::CheckedAdd<uint64_t>(total, slices[i].size, &total));
  }
  two_pass_calls_++;
  SliceReader reader(slices, num_slices, total);
  uint64_t out_size = 0;
  uint64_t err_off = 0;
  UngroupError e = Measure(&reader, &out_size, &err_off);
  if (RT_UNLIKELY(e != UngroupError::kNone))
    return Fail(e, err_off);
  last_error_ = UngroupError::kNone;
  if (num_edits_ == 0) {
    result->pass_through = true;
    return base::OkStatus();
  }
  uint8_t* dst = ReserveOutput(out_size);
  SliceCopier copier(slices, num_slices);
  Emit(edits_.get(), num_edits_, total, &copier, dst, out_size);
  result->converted = ConstBytes{dst, static_cast<size_t>(out_size)};
  return base::OkStatus();
}

}  // namespace ungrouper
}  // namespace ringtrace
