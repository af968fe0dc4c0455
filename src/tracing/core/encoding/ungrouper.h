/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Ungrouper: turns a TraceWriterV2 packet into standard protobuf encoding.
//
// Why it exists. TraceWriterV2 never patches a length after publication (spec
// section 6.5), so it encodes every nested message as a protobuf group:
//   start-group tag (field << 3) | 3, the message's fields, end-group tag
//   (field << 3) | 4 with the SAME field number.
// Readers of Perfetto traces expect nested messages as length-delimited fields
// (wire type 2). The Ungrouper rewrites every group, recursively, into
//   tag (field << 3) | 2, varint length (minimal encoding), the fields.
// Everything else is copied byte for byte (including non-minimal varints a
// producer may have written; only the tags and lengths of converted groups
// are re-encoded, always minimally). The service runs it on readback; tests
// run it to decode packets with libprotobuf.
//
// What it looks at. Only the top-level fields of the packet and the contents
// of groups. A length-delimited field (string, bytes, or a message appended
// pre-serialized) is opaque: it is skipped, never parsed, so groups hidden
// inside bytes stay as they are. TraceWriterV2 writes every submessage it
// knows about as a group, so nothing is missed for packets it produced.
//
// Validation. The whole packet is checked at the wire level on every call,
// pass-through included: every tag, varint, fixed field and length must lie
// inside the input, and the groups must nest properly. Errors (UngroupError):
//   - kTruncated:        a tag, varint, fixed32/64 or length-delimited payload
//                        runs past the end of the packet;
//   - kVarIntTooLong:    a varint longer than 10 bytes (a value varint) or a
//                        tag varint longer than 5 bytes / above 2^32 - 1;
//   - kBadWireType:      wire types 6 and 7;
//   - kFieldZero:        field number 0;
//   - kUnmatchedEnd:     an end-group with no open group;
//   - kMismatchedEnd:    an end-group whose field number differs from the
//                        innermost open group's;
//   - kUnterminated:     the packet ends inside a group;
//   - kTooDeep:          groups nested deeper than kMaxGroupDepth.
// Field numbers above 2^29 - 1 cannot occur (the tag is limited to 32 bits).
// A failed call never reads outside the input, never allocates unbounded
// memory and always terminates: the work is linear in the input size plus
// the number of slices.
//
// Depth limit. kMaxGroupDepth = 64 nested groups. This is the depth of the
// explicit, fixed-size stack of the measuring pass (no recursion, no
// allocation for it). It stays below libprotobuf's default recursion limit of
// 100, so an accepted packet's groups never make libprotobuf give up.
//
// Algorithm (two passes, no recursion):
//   1. Measure: one forward scan over the input with an explicit stack of
//      open groups. It records, in input order, one "edit" per group tag: a
//      start-group tag is to be replaced by the new tag plus the converted
//      length of the group's contents; an end-group tag is to be dropped. The
//      converted length of a group is known when its end tag is reached (its
//      raw content length adjusted by the growth/shrink of its child groups).
//   2. Emit: walks the edit list, memcpy-ing the untouched runs between edits
//      and writing the new tags and lengths. It does not parse again.
// A packet without any group produces no edit and is passed through: no copy
// is made at all.
//
// Input as slices. TraceBufferV2 returns a packet as a list of slices into its
// memory (one per fragment). UngroupSlices() takes such a list directly: the
// measuring pass reads across slice boundaries (a tag or varint may straddle
// two slices; empty slices are allowed), and the emitting pass copies from
// the slices, so a multi-slice packet costs exactly one copy when it has
// groups and none when it has not. Ungroup() is the contiguous fast path for
// the common single-slice packet (UngroupSlices() with one slice uses it).
//
// One pass for the common packet. A contiguous packet is first converted in
// one forward scan: each start tag is written as its length-delimited tag
// plus a reserved one-byte length, filled in at the end tag (TrackEvent's
// groups hold under 128 bytes). A larger group moves its content up by the
// extra length bytes, within a budget (groups nested at most 8 deep, at
// most twice the packet's size moved, the output room reserved). Past the
// budget, and on any error, the two passes above run instead; they alone report
// errors. Both give the same bytes.
//
// Shapes. Before parsing a contiguous packet of at most 64 bytes, the
// Ungrouper checks it against the shapes of recent packets
// (packet_shapes.h): one that fits converts without a parse.
//
// Top-level fields. Every successful call records which field numbers below
// 128 occur at the packet's top level (TopLevelFields), so a caller checking
// for reserved fields (the exporter's trusted fields) needs no second parse.
//
// Output and memory. The converted packet lives in a buffer owned by the
// Ungrouper, valid until the next call or destruction. The output buffer and
// the edit list keep their capacity across calls, so once they have grown to
// the largest packet seen, steady-state calls do not allocate.
//
// Thread model. An Ungrouper is not thread-safe; use one per thread (it is
// cheap) or guard it. Different instances are independent.

#ifndef SRC_TRACING_CORE_ENCODING_UNGROUPER_H_
#define SRC_TRACING_CORE_ENCODING_UNGROUPER_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>

#include "ringtrace/status.h"
#include "src/tracing/core/encoding/packet_shapes.h"
#include "src/tracing/core/encoding/top_level_fields.h"
#include "src/tracing/core/encoding/wire_reader.h"

namespace ringtrace {
namespace ungrouper {

// A read-only view of bytes owned by someone else (the encoding's one type).
using encoding::ConstBytes;

enum class UngroupError : uint8_t {
  kNone = 0,
  kTruncated,
  kVarIntTooLong,
  kBadWireType,
  kFieldZero,
  kUnmatchedEnd,
  kMismatchedEnd,
  kUnterminated,
  kTooDeep,
};

// Human-readable name of |e| (static storage).
const char* UngroupErrorName(UngroupError e);

class Ungrouper {
 public:
  // Maximum number of nested groups (see "Depth limit" above).
  static constexpr size_t kMaxGroupDepth = 64;

  // Result of UngroupSlices().
  struct SlicesResult {
    // True when the packet had no group: the caller's slices ARE the
    // standard encoding and no copy was made; |converted| is empty.
    bool pass_through = false;
    // When !pass_through: the converted packet (owned by the Ungrouper).
    ConstBytes converted;
  };

  Ungrouper();
  ~Ungrouper();
  Ungrouper(const Ungrouper&) = delete;
  Ungrouper& operator=(const Ungrouper&) = delete;

  // Converts the contiguous packet [data, data + size). On success *out is
  // either exactly {data, size} (pass-through: no group, no copy; compare
  // out->data == data to tell) or a view of the Ungrouper's output buffer.
  // On error *out is left empty and last_error() says why.
  base::Status Ungroup(const uint8_t* data, size_t size, ConstBytes* out);

  // Converts the packet formed by concatenating |slices[0..num_slices)|.
  // See "Input as slices" above. On error *result is reset.
  base::Status UngroupSlices(const ConstBytes* slices,
                             size_t num_slices,
                             SlicesResult* result);

  // For a caller that frames packets in its own memory (the exporter, into
  // its file batch): the one pass over the contiguous packet
  // [data, data + size) written straight into |dst|, which has room for
  // size + kIntoExtraRoom bytes; a packet without groups is copied there
  // too. Returns true with *out_size bytes in |dst| and top_level_fields()
  // set. False: |dst| holds nothing usable
  // and the caller uses Ungroup() or UngroupSlices(), which take any packet
  // and report errors (a malformed packet, groups nested more than 8 deep,
  // a group of more than 127 bytes where |size| leaves no room to move it).
  static constexpr size_t kIntoExtraRoom = 8;
  bool UngroupInto(const uint8_t* data,
                   size_t size,
                   uint8_t* dst,
                   size_t* out_size);

  // Why the last call failed (kNone after a success).
  UngroupError last_error() const { return last_error_; }

  // The top-level field numbers (below 128) of the last successful call's
  // packet; empty after a failure.
  const TopLevelFields& top_level_fields() const { return fields_; }

  // Capacity of the reusable output buffer (for tests of the no-allocation
  // steady state).
  size_t output_capacity() const { return out_capacity_; }

  // The shapes remembered (packet_shapes.h), with their hit counts.
  const PacketShapes& shapes() const { return shapes_; }

  // Successful calls converted by the one pass (a remembered shape
  // included), and calls that ran the two passes (for tests and benchmarks
  // of the paths).
  uint64_t one_pass_calls() const { return one_pass_calls_; }
  uint64_t two_pass_calls() const { return two_pass_calls_; }

  // An edit of the measuring pass (internal; public for the .cc's helpers).
  struct Edit {
    uint64_t offset;        // Offset of the group tag in the input.
    uint64_t content_size;  // Start edits: converted content length.
    uint32_t field;         // Start edits: field number; 0: end edit.
    uint32_t skip;          // Length of the raw tag to drop (1..5).
  };

 private:
  template <typename Reader>
  UngroupError Measure(Reader* reader, uint64_t* out_size, uint64_t* err_off);
  // The one-pass conversion of [in, in + size) into out_ (reserved at the
  // first group) or |dst|. False: use the two passes (past the budget, or
  // malformed input). True: *groups says whether the packet had any; with
  // groups, out_ holds the *out_size converted bytes. With |dst| (room:
  // |dst_room| bytes), the output goes there from the start, and a packet
  // without groups is copied there too.
  bool OnePass(const uint8_t* in,
               size_t size,
               uint8_t* dst,
               size_t dst_room,
               size_t* out_size,
               bool* groups);
  // Appends the edit {offset, content_size 0, field, skip} to the measuring
  // pass's local copy of the edit array (|*edits|, |*num_edits| used of
  // |*capacity|), growing it when full.
  inline void AppendEdit(Edit** edits,
                         size_t* num_edits,
                         size_t* capacity,
                         uint64_t offset,
                         uint32_t field,
                         uint32_t skip);
  Edit* GrowEdits(size_t used);
  uint8_t* ReserveOutput(uint64_t size);
  base::Status Fail(UngroupError e, uint64_t offset);

  // The edit list of the last measuring pass: num_edits_ entries in input
  // order. A plain array rather than a std::vector: the measuring pass keeps
  // the count in a register and writes each edit in place.
  std::unique_ptr<Edit[]> edits_;
  size_t edits_capacity_ = 0;
  size_t num_edits_ = 0;
  std::unique_ptr<uint8_t[]> out_;
  size_t out_capacity_ = 0;
  UngroupError last_error_ = UngroupError::kNone;
  bool pass_through_ = false;  // The last Ungroup() made no copy.
  PacketShapes shapes_;        // Recent small packets' shapes.
  uint64_t one_pass_calls_ = 0;
  uint64_t two_pass_calls_ = 0;
  TopLevelFields fields_;
};

}  // namespace ungrouper
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_ENCODING_UNGROUPER_H_
