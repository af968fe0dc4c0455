/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. Inflating what the exporter deflated (TracePacket.
// compressed_packets: one zlib stream per packet), for the tests that read
// compressed traces back.

#ifndef SRC_TRACING_SERVICE_TRACE_EXPORT_TEST_INFLATE_H_
#define SRC_TRACING_SERVICE_TRACE_EXPORT_TEST_INFLATE_H_

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace ringtrace {
namespace test {

// One zlib stream inflated; "" and a test failure on anything but exactly
// one complete stream (a truncated one, bytes after its end).
inline std::string Inflate(const std::string& in) {
  z_stream zs = {};
  EXPECT_EQ(inflateInit(&zs), Z_OK);
  std::string out;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  int r = Z_OK;
  while (r == Z_OK) {
    char buf[16384];
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    r = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
  }
  EXPECT_EQ(r, Z_STREAM_END) << (zs.msg ? zs.msg : "");
  EXPECT_EQ(zs.avail_in, 0u) << "bytes after the zlib stream";
  inflateEnd(&zs);
  return r == Z_STREAM_END && zs.avail_in == 0 ? out : std::string();
}

}  // namespace test
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACE_EXPORT_TEST_INFLATE_H_
