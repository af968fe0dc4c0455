/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// StrongFlags<Tag, Rep>: a set of flag bits that is its own type.
//
// The project has small flag vocabularies whose low bits mean different
// things (the ring state word's chunk flags, the trace buffer's chunk
// flags). Each is a distinct
// StrongFlags<Tag> instantiation, so passing one where another is expected
// does not compile, and neither does passing a bare integer. Conversions are
// explicit: FromBits() in, bits() out, and named mapping functions where two
// vocabularies meet.
//
// Usage:
//   struct ChunkFlagsTag;
//   using ChunkFlags = StrongFlags<ChunkFlagsTag, uint32_t>;
//   constexpr ChunkFlags kFlagA = ChunkFlags::FromBits(1u << 0);
//   if (flags & kFlagA) ...            // explicit operator bool
//   flags |= kFlagA;
//
// Lives in include/ringtrace/ because the public ABI header uses it; src/
// uses it from here too (one definition).

#ifndef INCLUDE_RINGTRACE_STRONG_FLAGS_H_
#define INCLUDE_RINGTRACE_STRONG_FLAGS_H_

#include <type_traits>

namespace ringtrace {

template <typename Tag, typename Rep>
class StrongFlags {
  static_assert(std::is_unsigned<Rep>::value, "flags are unsigned bits");

 public:
  using RepType = Rep;

  // The empty set.
  constexpr StrongFlags() = default;

  static constexpr StrongFlags FromBits(Rep bits) { return StrongFlags(bits); }
  constexpr Rep bits() const { return bits_; }

  // True iff any bit is set (so `if (flags & kFlagA)` reads naturally).
  constexpr explicit operator bool() const { return bits_ != 0; }
  // True iff every bit of |other| is set.
  constexpr bool HasAll(StrongFlags other) const {
    return (bits_ & other.bits_) == other.bits_;
  }

  friend constexpr StrongFlags operator|(StrongFlags a, StrongFlags b) {
    return StrongFlags(static_cast<Rep>(a.bits_ | b.bits_));
  }
  friend constexpr StrongFlags operator&(StrongFlags a, StrongFlags b) {
    return StrongFlags(static_cast<Rep>(a.bits_ & b.bits_));
  }
  friend constexpr StrongFlags operator^(StrongFlags a, StrongFlags b) {
    return StrongFlags(static_cast<Rep>(a.bits_ ^ b.bits_));
  }
  // Complement within Rep; mask with the vocabulary's defined bits where it
  // matters.
  constexpr StrongFlags operator~() const {
    return StrongFlags(static_cast<Rep>(~bits_));
  }
  constexpr StrongFlags& operator|=(StrongFlags o) {
    bits_ = static_cast<Rep>(bits_ | o.bits_);
    return *this;
  }
  constexpr StrongFlags& operator&=(StrongFlags o) {
    bits_ = static_cast<Rep>(bits_ & o.bits_);
    return *this;
  }
  friend constexpr bool operator==(StrongFlags a, StrongFlags b) {
    return a.bits_ == b.bits_;
  }
  friend constexpr bool operator!=(StrongFlags a, StrongFlags b) {
    return a.bits_ != b.bits_;
  }

 private:
  constexpr explicit StrongFlags(Rep bits) : bits_(bits) {}

  Rep bits_ = 0;
};

}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_STRONG_FLAGS_H_
