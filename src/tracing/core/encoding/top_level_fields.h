/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TopLevelFields: which field numbers below 128 occur at a packet's top
// level, as a bitmap. The Ungrouper records it while it validates a packet,
// so a caller checking for reserved fields (the exporter's trusted fields)
// needs no second parse.

#ifndef SRC_TRACING_CORE_ENCODING_TOP_LEVEL_FIELDS_H_
#define SRC_TRACING_CORE_ENCODING_TOP_LEVEL_FIELDS_H_

#include <stdint.h>

#include <initializer_list>

namespace ringtrace {
namespace ungrouper {

class TopLevelFields {
 public:
  // The set of |fields| (those under 128).
  static constexpr TopLevelFields Of(std::initializer_list<uint32_t> fields) {
    TopLevelFields f;
    for (uint32_t field : fields)
      f.Add(field);
    return f;
  }

  constexpr void Add(uint32_t field) {
    if (field < 128)
      bits_[field >> 6] |= uint64_t{1} << (field & 63);
  }
  bool Has(uint32_t field) const {
    return field < 128 && (bits_[field >> 6] >> (field & 63)) & 1;
  }
  // Whether any field of |other| is here.
  bool HasAny(const TopLevelFields& other) const {
    return ((bits_[0] & other.bits_[0]) | (bits_[1] & other.bits_[1])) != 0;
  }
  void Clear() { bits_[0] = bits_[1] = 0; }
  bool operator==(const TopLevelFields& o) const {
    return bits_[0] == o.bits_[0] && bits_[1] == o.bits_[1];
  }

 private:
  uint64_t bits_[2] = {0, 0};
};

}  // namespace ungrouper
}  // namespace ringtrace

#endif  // SRC_TRACING_CORE_ENCODING_TOP_LEVEL_FIELDS_H_
