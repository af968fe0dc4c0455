/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// CopyShort: memcpy for the short, variable-length runs of the readback
// (the bytes between two group tags of a packet). A library memcpy call
// costs more than such a copy; this one is inline, in at most two
// overlapping loads and stores per size class up to 16 bytes, and 16-byte
// copies up to 64.
//
// Reads exactly [src, src + n) and writes exactly [dst, dst + n); the two
// must not overlap.

#ifndef SRC_BASE_SHORT_COPY_H_
#define SRC_BASE_SHORT_COPY_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace ringtrace {
namespace base {

// 16 bytes, as two 8-byte loads and stores.
inline void Copy16(uint8_t* dst, const uint8_t* src) {
  uint64_t a, b;
  memcpy(&a, src, 8);
  memcpy(&b, src + 8, 8);
  memcpy(dst, &a, 8);
  memcpy(dst + 8, &b, 8);
}

inline void CopyShort(uint8_t* dst, const uint8_t* src, size_t n) {
  if (n > 64) {
    memcpy(dst, src, n);
  } else if (n > 16) {
    // Up to four 16-byte copies, the last one overlapping; written out
    // rather than as a loop, which the compiler turns back into a memcpy
    // (a string instruction, slow to start, for these sizes).
    Copy16(dst, src);
    if (n > 32) {
      Copy16(dst + 16, src + 16);
      if (n > 48)
        Copy16(dst + 32, src + 32);
    }
    Copy16(dst + n - 16, src + n - 16);
  } else if (n >= 8) {
    uint64_t a, b;
    memcpy(&a, src, 8);
    memcpy(&b, src + n - 8, 8);
    memcpy(dst, &a, 8);
    memcpy(dst + n - 8, &b, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    memcpy(&a, src, 4);
    memcpy(&b, src + n - 4, 4);
    memcpy(dst, &a, 4);
    memcpy(dst + n - 4, &b, 4);
  } else {
    for (size_t i = 0; i < n; i++)
      dst[i] = src[i];
  }
}

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_SHORT_COPY_H_
