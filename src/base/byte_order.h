/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Little-endian fixed-width integers in byte buffers: the one definition of
// how the project's wire formats (the producer and consumer socket
// protocols, test packet framings) lay out a u16, u32 or u64.
//
// Byte by byte, so they neither depend on the host's byte order nor need
// aligned pointers. The caller guarantees the bytes are there (Put*: 2, 4 or
// 8 writable bytes at |p|; Get*: as many readable ones); nothing here checks
// bounds. Pure functions, safe from any thread.

#ifndef SRC_BASE_BYTE_ORDER_H_
#define SRC_BASE_BYTE_ORDER_H_

#include <stdint.h>

#include <string>

namespace ringtrace {
namespace base {

inline void PutU16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

inline uint16_t GetU16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

inline void PutU32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}

inline uint32_t GetU32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

inline void PutU64(uint8_t* p, uint64_t v) {
  PutU32(p, static_cast<uint32_t>(v));
  PutU32(p + 4, static_cast<uint32_t>(v >> 32));
}

inline uint64_t GetU64(const uint8_t* p) {
  return static_cast<uint64_t>(GetU32(p)) | static_cast<uint64_t>(GetU32(p + 4))
                                                << 32;
}

// The same layouts appended to a byte string.
inline void AppendU16(std::string* s, uint16_t v) {
  uint8_t b[2];
  PutU16(b, v);
  s->append(reinterpret_cast<const char*>(b), sizeof(b));
}

inline void AppendU32(std::string* s, uint32_t v) {
  uint8_t b[4];
  PutU32(b, v);
  s->append(reinterpret_cast<const char*>(b), sizeof(b));
}

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_BYTE_ORDER_H_
