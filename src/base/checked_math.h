/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Overflow-checked arithmetic for sizes and offsets derived from untrusted
// input. Each returns false (and leaves *out unspecified) on overflow.

#ifndef SRC_BASE_CHECKED_MATH_H_
#define SRC_BASE_CHECKED_MATH_H_

#include <stddef.h>
#include <stdint.h>

namespace ringtrace {
namespace base {

template <typename T>
[[nodiscard]] inline bool CheckedAdd(T a, T b, T* out) {
  return !__builtin_add_overflow(a, b, out);
}

template <typename T>
[[nodiscard]] inline bool CheckedMul(T a, T b, T* out) {
  return !__builtin_mul_overflow(a, b, out);
}

template <typename T>
[[nodiscard]] inline bool CheckedSub(T a, T b, T* out) {
  return !__builtin_sub_overflow(a, b, out);
}

// True iff [offset, offset + len) lies inside [0, size), overflow-safe.
inline bool RangeInBounds(size_t offset, size_t len, size_t size) {
  return offset <= size && len <= size - offset;
}

// Rounds |x| up to a multiple of |align| (a power of two).
constexpr size_t AlignUp(size_t x, size_t align) {
  return (x + align - 1) & ~(align - 1);
}

constexpr bool IsPowerOfTwo(uint64_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_CHECKED_MATH_H_
