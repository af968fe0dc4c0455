/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. FakeProc: a temporary directory laid out like /proc, for the
// sources' tests (ProcFs reads any root), and the decoding of the packets a
// source wrote into a PacketCapture.

#ifndef SRC_TRACED_PROBES_TEST_FAKE_PROC_H_
#define SRC_TRACED_PROBES_TEST_FAKE_PROC_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "protos/perfetto/trace/trace_packet.pb.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/core/encoding/test/packet_capture.h"

namespace ringtrace {
namespace probes {
namespace test {

class FakeProc {
 public:
  FakeProc();
  ~FakeProc();

  const std::string& root() const { return dir_.path(); }

  // Writes |contents| to |path| (relative to the root), creating its
  // directories. Fatal on failure (RT_CHECK).
  void Write(const std::string& path, const std::string& contents);
  // Creates the directory |path| (and its parents).
  void MakeDir(const std::string& path);
  void Remove(const std::string& path);

  // A process with a plausible status (pid, ppid, uid 1000, the memory
  // counters given in kB, name), cmdline, stat (start time
  // |start_ticks|, utime 7, stime 3) and oom_score_adj, and one task
  // directory per thread in |tids| (the pid included or not) with its
  // comm "<name>-<tid>".
  void AddProcess(int32_t pid,
                  int32_t ppid,
                  const std::string& name,
                  const std::string& cmdline,
                  uint64_t rss_kb,
                  const std::vector<int32_t>& tids,
                  uint64_t start_ticks = 100);

 private:
  base::TempDir dir_{"ringtrace_fake_proc"};
};

// Every packet |capture| holds, ungrouped and parsed; a test failure for
// each one that does not parse or was lost.
std::vector<perfetto::protos::TracePacket> DrainPackets(
    encoding::PacketCapture* capture);

}  // namespace test
}  // namespace probes
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_TEST_FAKE_PROC_H_
