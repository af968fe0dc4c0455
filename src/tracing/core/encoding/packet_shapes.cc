/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/core/encoding/packet_shapes.h"

#include <string.h>

#include "ringtrace/logging.h"
#include "ringtrace/proto_wire.h"
#include "src/base/byte_order.h"
#include "src/base/short_copy.h"

namespace ringtrace {
namespace ungrouper {

namespace {

using encoding::EncodeVarInt;
using encoding::kWireEndGroup;
using encoding::kWireFixed32;
using encoding::kWireFixed64;
using encoding::kWireLengthDelimited;
using encoding::kWireStartGroup;
using encoding::kWireVarInt;

constexpr size_t kWords = PacketShapes::kMaxSize / 8;

// After this many misses in a row, Remember() builds a shape for one packet
// in kSparseBuildEvery only.
constexpr uint32_t kMissesBeforeSparse = 8;
constexpr uint32_t kSparseBuildEvery = 16;

// The packet's bytes [in, in + size) (0 < size <= kMaxSize) are compared
// as little-endian words, the last one zero past |size|. These read only
// those bytes.

// The last, partial word (0 if |size| is a multiple of 8): the last 8
// bytes of the packet shifted, or byte by byte under 8.
inline uint64_t TailWord(const uint8_t* in, size_t size) {
  const size_t rem = size % 8;
  if (rem == 0)
    return 0;
  if (size >= 8)
    return base::GetU64(in + size - 8) >> (8 * (8 - rem));
  uint64_t tail = 0;
  for (size_t i = 0; i < rem; i++)
    tail |= static_cast<uint64_t>(in[i]) << (8 * i);
  return tail;
}

// All of them into |words| (kWords, zero past the packet).
inline void LoadWords(const uint8_t* in, size_t size, uint64_t* words) {
  for (size_t w = 0; w < kWords; w++)
    words[w] = 0;
  const size_t whole = size / 8;
  for (size_t w = 0; w < whole; w++)
    words[w] = base::GetU64(in + 8 * w);
  if (size % 8)
    words[whole] = TailWord(in, size);
}

// Reads the varint at in[*i] (at most |max_len| bytes, inside |size|) and
// marks its bytes in |mask| with |byte_mask|: 0xff keeps them whole, 0x80
// their continuation bits. False if it does not end in time.
bool MarkVarInt(const uint8_t* in,
                size_t size,
                size_t max_len,
                uint8_t byte_mask,
                uint8_t* mask,
                size_t* i,
                uint64_t* value) {
  uint64_t v = 0;
  for (size_t n = 0; n < max_len && *i < size; n++) {
    const uint8_t b = in[*i];
    mask[*i] = byte_mask;
    (*i)++;
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * n);
    if (!(b & 0x80)) {
      *value = v;
      return true;
    }
  }
  return false;
}

}  // namespace

const PacketShapes::Shape* PacketShapes::Find(const uint8_t* in, size_t size) {
  if (size == 0 || size > kMaxSize)
    return nullptr;
  const size_t whole = size / 8;
  const uint64_t tail = TailWord(in, size);
  // The entry that fit last first: a writer's loop repeats one shape. The
  // words are read from |in| as they are compared (a copy of them first
  // cost more than the compare).
  for (size_t k = 0; k < kNumEntries; k++) {
    const size_t e = (last_hit_ + k) % kNumEntries;
    const Shape& shape = shapes_[e];
    if (shape.size != size)
      continue;
    uint64_t diff = 0;
    if (size % 8)  // Then whole < kWords.
      diff = (tail & shape.mask[whole]) ^ shape.pattern[whole];
    for (size_t w = 0; w < whole; w++)
      diff |= (base::GetU64(in + 8 * w) & shape.mask[w]) ^ shape.pattern[w];
    if (diff == 0) {
      hits_++;
      misses_in_row_ = 0;
      last_hit_ = e;
      return &shape;
    }
  }
  misses_++;
  misses_in_row_++;
  return nullptr;
}

// static
size_t PacketShapes::Apply(const Shape& shape,
                           const uint8_t* in,
                           uint8_t* out) {
  uint8_t* w = out;
  size_t pos = 0;
  for (size_t e = 0; e < shape.num_edits; e++) {
    const Edit& edit = shape.edits[e];
    base::CopyShort(w, in + pos, edit.offset - pos);
    w += edit.offset - pos;
    base::CopyShort(w, edit.insert, edit.insert_len);
    w += edit.insert_len;
    pos = edit.offset + edit.skip;
  }
  base::CopyShort(w, in + pos, shape.size - pos);
  w += shape.size - pos;
  // Our invariant: Build() computed the exact output size.
  RT_CHECK(static_cast<size_t>(w - out) == shape.out_size);
  return shape.out_size;
}

bool PacketShapes::Remember(const uint8_t* in,
                            size_t size,
                            const TopLevelFields& fields) {
  if (size == 0 || size > kMaxSize)
    return false;
  if (misses_in_row_ > kMissesBeforeSparse &&
      misses_in_row_ % kSparseBuildEvery != 0) {
    return false;
  }
  Shape* shape = &shapes_[next_];
  if (!Build(in, size, shape))
    return false;
  shape->fields = fields;
  next_ = (next_ + 1) % kNumEntries;
  return true;
}

// static
bool PacketShapes::Build(const uint8_t* in, size_t size, Shape* shape) {
  *shape = Shape();
  uint8_t mask[kMaxSize] = {};
  struct Open {
    size_t edit;           // its start edit
    size_t content_start;  // output offset of its content
    uint32_t field;
  };
  Open open[kMaxGroups];
  size_t depth = 0;
  size_t groups = 0;
  size_t i = 0;
  size_t out = 0;  // output offset of in[i]
  Edit edits[2 * kMaxGroups] = {};
  size_t num_edits = 0;
  while (i < size) {
    const size_t tag_at = i;
    uint64_t tag = 0;
    if (!MarkVarInt(in, size, encoding::kMaxTagSize, 0xff, mask, &i, &tag) ||
        tag > 0xffffffffu || (tag >> 3) == 0) {
      return false;
    }
    const uint32_t field = static_cast<uint32_t>(tag >> 3);
    const size_t tag_len = i - tag_at;
    uint64_t value = 0;
    switch (static_cast<uint32_t>(tag) & 7) {
      case kWireVarInt:
        if (!MarkVarInt(in, size, encoding::kMaxVarIntSize, 0x80, mask, &i,
                        &value)) {
          return false;
        }
        out += i - tag_at;
        break;
      case kWireFixed64:
      case kWireFixed32: {
        const size_t n = (tag & 7) == kWireFixed64 ? 8 : 4;
        if (size - i < n)
          return false;
        i += n;  // Values are not part of the shape.
        out += i - tag_at;
        break;
      }
      case kWireLengthDelimited:
        if (!MarkVarInt(in, size, encoding::kMaxVarIntSize, 0xff, mask, &i,
                        &value) ||
            value > size - i) {
          return false;
        }
        i += static_cast<size_t>(value);  // Contents are not either.
        out += i - tag_at;
        break;
      case kWireStartGroup: {
        if (depth == kMaxGroups || groups == kMaxGroups)
          return false;
        Edit& e = edits[num_edits];
        e.offset = static_cast<uint8_t>(tag_at);
        e.skip = static_cast<uint8_t>(tag_len);
        const uint8_t* end = EncodeVarInt(
            (static_cast<uint64_t>(field) << 3) | kWireLengthDelimited,
            e.insert);
        e.insert_len = static_cast<uint8_t>(end - e.insert + 1);
        out += e.insert_len;
        open[depth++] = Open{num_edits, out, field};
        num_edits++;
        groups++;
        break;
      }
      case kWireEndGroup: {
        if (depth == 0 || open[depth - 1].field != field)
          return false;
        const Open& o = open[--depth];
        const size_t content = out - o.content_start;
        if (content > 127)
          return false;
        Edit& start = edits[o.edit];
        start.insert[start.insert_len - 1] = static_cast<uint8_t>(content);
        Edit& e = edits[num_edits++];
        e.offset = static_cast<uint8_t>(tag_at);
        e.skip = static_cast<uint8_t>(tag_len);
        e.insert_len = 0;
        break;
      }
      default:
        return false;
    }
  }
  if (depth != 0)
    return false;
  uint64_t words[kWords];
  LoadWords(in, size, words);
  for (size_t w = 0; w < kWords; w++) {
    shape->mask[w] = base::GetU64(mask + 8 * w);
    shape->pattern[w] = words[w] & shape->mask[w];
  }
  memcpy(shape->edits, edits, sizeof(edits));
  shape->num_edits = static_cast<uint8_t>(num_edits);
  shape->out_size = static_cast<uint32_t>(out);
  shape->size = static_cast<uint32_t>(size);
  return true;
}

}  // namespace ungrouper
}  // namespace ringtrace
