/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/short_copy.h"

#include <gtest/gtest.h>

#include <stdint.h>

#include <vector>

namespace ringtrace {
namespace base {
namespace {

// Every size of every size class, at every alignment of both ends: the
// copy writes exactly [dst, dst + n) (guard bytes around it stay), with the
// source's bytes. The source is an allocation ending at src + n, so a read
// past it is a heap overflow under ASan.
TEST(CopyShortTest, CopiesExactlyTheRangeAtEverySizeAndAlignment) {
  constexpr size_t kMax = 100;
  constexpr uint8_t kGuard = 0xee;
  for (size_t n = 0; n <= kMax; n++) {
    for (size_t src_align = 0; src_align < 8; src_align++) {
      for (size_t dst_align = 0; dst_align < 8; dst_align++) {
        std::vector<uint8_t> src(src_align + n);
        for (size_t i = 0; i < n; i++)
          src[src_align + i] = static_cast<uint8_t>(i * 7 + 1);
        std::vector<uint8_t> dst(kMax + 32, kGuard);
        CopyShort(dst.data() + 16 + dst_align, src.data() + src_align, n);
        for (size_t i = 0; i < dst.size(); i++) {
          const bool inside = i >= 16 + dst_align && i < 16 + dst_align + n;
          const uint8_t want =
              inside ? static_cast<uint8_t>((i - 16 - dst_align) * 7 + 1)
                     : kGuard;
          ASSERT_EQ(dst[i], want) << "n " << n << " byte " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace base
}  // namespace ringtrace
