/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/session_export.h"

#include <gtest/gtest.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"
#include "src/tracing/service/trace_export/test/read_fd.h"

namespace ringtrace {
namespace traced {
namespace {

using trace_buffer::FragmentRef;
using trace_buffer::TraceBufferV2;

// |count| chunks of 8 packets TracePacket{for_testing{str: tag, seq_value}}
// (standard encoding: the Ungrouper passes them through) from one writer.
void Fill(TraceBufferV2* tb, const std::string& tag, uint32_t count) {
  uint32_t seq = 0;
  for (uint32_t chunk = 0; chunk < count; chunk++) {
    std::vector<std::string> packets;
    for (int i = 0; i < 8; i++) {
      perfetto::protos::TracePacket p;
      p.mutable_for_testing()->set_str(tag);
      p.mutable_for_testing()->set_seq_value(seq++);
      packets.push_back(p.SerializeAsString());
    }
    std::vector<FragmentRef> frags;
    for (const std::string& p : packets) {
      frags.push_back(FragmentRef{reinterpret_cast<const uint8_t*>(p.data()),
                                  static_cast<uint32_t>(p.size())});
    }
    ASSERT_TRUE(tb->CopyChunkFragments(1, {1000, 42}, 1, chunk, frags.data(),
                                       frags.size(),
                                       trace_buffer::kNoTBChunkFlags));
  }
}

// Counts the for_testing packets of the file at |fd| by tag.
std::map<std::string, size_t> CountByTag(int fd) {
  perfetto::protos::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(test::ReadWholeFd(fd)));
  std::map<std::string, size_t> out;
  for (const auto& p : trace.packet()) {
    if (p.has_for_testing())
      out[p.for_testing().str()]++;
  }
  return out;
}

// Slices take the buffers in turn: a slice whose budget ran out in one
// buffer is followed by one that starts at the next, so a buffer that
// always has more does not keep the others out of the file.
TEST(TraceStreamTest, SlicesTakeTheBuffersInTurn) {
  std::unique_ptr<TraceBufferV2> a =
      TraceBufferV2::Create(1 << 20, TraceBufferV2::OverwritePolicy::kDiscard);
  std::unique_ptr<TraceBufferV2> b =
      TraceBufferV2::Create(1 << 20, TraceBufferV2::OverwritePolicy::kDiscard);
  ASSERT_TRUE(a && b);
  Fill(a.get(), "a", 40);
  Fill(b.get(), "b", 40);
  const int fd = memfd_create("session_export_unittest", 0);
  ASSERT_GE(fd, 0);
  const std::string config;
  TraceHeader header;
  header.trace_config = &config;
  TraceStream stream(fd, header);
  const std::vector<TraceBufferV2*> buffers = {a.get(), b.get()};

  // A budget of a few packets: the first slice stays in "a", the second
  // moves on to "b" although "a" has more.
  EXPECT_FALSE(stream.AppendBuffersSlice(buffers, 100));
  ASSERT_TRUE(stream.Flush().ok());
  std::map<std::string, size_t> counts = CountByTag(fd);
  EXPECT_GT(counts["a"], 0u);
  EXPECT_EQ(counts["b"], 0u);
  EXPECT_FALSE(stream.AppendBuffersSlice(buffers, 100));
  ASSERT_TRUE(stream.Flush().ok());
  counts = CountByTag(fd);
  EXPECT_GT(counts["b"], 0u);
  EXPECT_LT(counts["a"], 320u);

  // Then everything, each packet once.
  int slices = 0;
  while (!stream.AppendBuffersSlice(buffers, 100))
    ASSERT_LT(++slices, 10000);
  ASSERT_TRUE(stream.Flush().ok());
  counts = CountByTag(fd);
  EXPECT_EQ(counts["a"], 320u);
  EXPECT_EQ(counts["b"], 320u);
  close(fd);
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
