/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Non-cryptographic mixing for ids derived from other values (track uuids,
// fallback uuids). Not for anything an adversary may choose to collide.

#ifndef SRC_BASE_HASH_H_
#define SRC_BASE_HASH_H_

#include <stdint.h>

namespace ringtrace {
namespace base {

// splitmix64's finalizer: every input bit affects every output bit; a
// bijection on 64-bit values.
constexpr uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_HASH_H_
