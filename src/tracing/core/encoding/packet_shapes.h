/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// PacketShapes: the Ungrouper's memory of recent small packets' shapes, so a
// packet shaped like one seen before is converted without parsing it.
//
// Why. A writer in a loop writes packets of one shape over and over: the
// same tags, the same varint lengths, the same string lengths; only the
// values differ. Parsing such a packet (a dependent chain of varint reads)
// costs more than checking that its bytes fit a known shape.
//
// A shape of an n-byte packet (n <= kMaxSize) is a mask and a pattern over
// its bytes (held as little-endian words, zero past n): every tag byte and
// every length byte of a length-delimited field is kept whole (mask 0xff); of
// every varint value byte only the continuation bit (0x80); fixed32/64 values
// and string or bytes contents not at all (0x00). A packet of n bytes whose
// bytes, masked, equal the pattern has the same fields with the same sizes at
// the same offsets, hence (the parse depends on nothing else) the same
// validity, the same group nesting, the same converted lengths and the same
// top-level fields. Its conversion is the remembered edit list: at each group
// tag, the raw tag dropped and, for a start tag, the length-delimited tag and
// the content's one-byte length written instead.
//
// Only packets the one pass accepted are remembered (Remember() parses
// again to record the shape, and rejects what it does not expect), so a
// shape describes a valid packet with at most kMaxGroups groups, each
// holding under 128 bytes (a packet of at most kMaxSize bytes).
//
// Bounded: kNumEntries shapes, replaced round robin. Every packet of at
// most kMaxSize bytes pays a Find() (its words masked and compared with
// each entry of its size, the entry that fit last first); a miss pays the
// one pass and, in Remember(), a second parse. After a run of misses
// (shapes that do not repeat) that second parse is made for one packet in
// 16 only.
//
// Thread model: owned by one Ungrouper; not thread-safe.

#ifndef SRC_TRACING_CORE_ENCODING_PACKET_SHAPES_H_
#define SRC_TRACING_CORE_ENCODING_PACKET_SHAPES_H_

#include <stddef.h>
#include <stdint.h>

#include "src/tracing/core/encoding/top_level_fields.h"

namespace ringtrace {
namespace ungrouper {

class PacketShapes {
 public:
  static constexpr size_t kMaxSize = 64;
  static constexpr size_t kMaxGroups = 8;
  static constexpr size_t kNumEntries = 4;

  // An edit at input offset |offset|: |skip| raw bytes (a group tag) are
  // dropped and |insert_len| bytes of |insert| written instead.
  struct Edit {
    uint8_t offset;
    uint8_t skip;
    uint8_t insert_len;
    uint8_t insert[6];  // A tag (at most 5 bytes) and a one-byte length.
  };
  struct Shape {
    uint32_t size = 0;  // 0: empty
    uint32_t out_size = 0;
    uint64_t mask[kMaxSize / 8] = {};
    uint64_t pattern[kMaxSize / 8] = {};
    TopLevelFields fields;
    uint8_t num_edits = 0;  // 0: a packet without groups
    Edit edits[2 * kMaxGroups] = {};
  };

  // The remembered shape [in, in + size) fits, or nullptr.
  const Shape* Find(const uint8_t* in, size_t size);

  // Writes the conversion of [in, in + size), a packet |shape| fits, to
  // |out| (room: size + kMaxGroups bytes; open groups' length bytes may
  // run ahead of the input for a while); returns shape.out_size.
  static size_t Apply(const Shape& shape, const uint8_t* in, uint8_t* out);

  // Remembers the shape of [in, in + size), a packet the one pass just
  // converted (its top-level |fields|), unless a run of misses says shapes
  // do not repeat here. Returns whether it did.
  bool Remember(const uint8_t* in, size_t size, const TopLevelFields& fields);

  // Packets Find() knew, and packets it did not.
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  // Fills |shape| for the valid packet [in, in + size); false for anything
  // it does not expect (then |shape| is left empty).
  static bool Build(const uint8_t* in, size_t size, Shape* shape);

  Shape shapes_[kNumEntries];
  size_t next_ = 0;             // the entry Remember() replaces next
  size_t last_hit_ = 0;         // the entry Find() returned last
  uint32_t misses_in_row_ = 0;  // Find() misses since its last hit
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

}  // namespace ungrouper
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_ENCODING_PACKET_SHAPES_H_
