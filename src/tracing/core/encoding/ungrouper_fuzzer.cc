/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Fuzzes the Ungrouper with arbitrary packets. Besides "no crash, no
// out-of-bounds read" (sanitizers), it checks:
//  - the multi-slice path agrees with the contiguous path (same verdict, same
//    error, same bytes) for the input cut into 3 heap-allocated slices at
//    input-derived offsets;
//  - pass-through returns the input itself;
//  - a converted packet is group-free wire format: ungrouping it again
//    succeeds as a pass-through;
//  - both paths record the same top-level fields. (The contiguous call
//    tries the one pass first; the 3-slice call always runs the two passes,
//    so this is also the one pass checked against the two.)

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <memory>
#include <utility>

#include "ringtrace/logging.h"
#include "src/tracing/core/encoding/ungrouper.h"

namespace ringtrace {
namespace ungrouper {
namespace {

void FuzzOne(const uint8_t* data, size_t size) {
  // Reused across inputs, as the service does.
  static Ungrouper* const contiguous = new Ungrouper();
  static Ungrouper* const sliced = new Ungrouper();
  static Ungrouper* const again = new Ungrouper();

  ConstBytes out;
  const bool ok = contiguous->Ungroup(data, size, &out).ok();
  const UngroupError error = contiguous->last_error();
  RT_CHECK(ok == (error == UngroupError::kNone));
  const bool pass_through = ok && out.data == data;
  if (pass_through)
    RT_CHECK(out.size == size);

  // Cut points from the first and last bytes, so the fuzzer can steer them.
  size_t a = size > 0 ? data[0] % (size + 1) : 0;
  size_t b = size > 0 ? size - data[size - 1] % (size + 1) : 0;
  if (a > b)
    std::swap(a, b);
  const size_t bounds[4] = {0, a, b, size};
  std::unique_ptr<uint8_t[]> storage[3];
  ConstBytes slices[3];
  for (size_t i = 0; i < 3; i++) {
    const size_t n = bounds[i + 1] - bounds[i];
    storage[i].reset(new uint8_t[n]);
    if (n > 0)
      memcpy(storage[i].get(), data + bounds[i], n);
    slices[i] = ConstBytes{storage[i].get(), n};
  }
  Ungrouper::SlicesResult r;
  const bool sliced_ok = sliced->UngroupSlices(slices, 3, &r).ok();
  RT_CHECK(sliced_ok == ok);
  RT_CHECK(sliced->last_error() == error);
  if (!ok)
    return;
  RT_CHECK(sliced->top_level_fields() == contiguous->top_level_fields());
  RT_CHECK(r.pass_through == pass_through);
  if (pass_through)
    return;
  RT_CHECK(r.converted.size == out.size);
  RT_CHECK(memcmp(r.converted.data, out.data, out.size) == 0);

  ConstBytes out2;
  RT_CHECK(again->Ungroup(out.data, out.size, &out2).ok());
  RT_CHECK(out2.data == out.data);
}

}  // namespace
}  // namespace ungrouper
}  // namespace ringtrace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ringtrace::ungrouper::FuzzOne(data, size);
  return 0;
}
