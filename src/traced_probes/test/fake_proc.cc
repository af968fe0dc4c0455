/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/test/fake_proc.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace probes {
namespace test {

FakeProc::FakeProc() = default;
FakeProc::~FakeProc() = default;

void FakeProc::MakeDir(const std::string& path) {
  std::string sofar = dir_.path();
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos)
      slash = path.size();
    sofar += "/" + path.substr(pos, slash - pos);
    RT_CHECK(mkdir(sofar.c_str(), 0700) == 0 || errno == EEXIST);
    pos = slash + 1;
  }
}

void FakeProc::Write(const std::string& path, const std::string& contents) {
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos)
    MakeDir(path.substr(0, slash));
  FILE* f = fopen(dir_.File(path).c_str(), "wb");
  RT_CHECK(f);
  RT_CHECK(fwrite(contents.data(), 1, contents.size(), f) == contents.size());
  RT_CHECK(fclose(f) == 0);
}

void FakeProc::Remove(const std::string& path) {
  RT_CHECK(unlink(dir_.File(path).c_str()) == 0);
}

void FakeProc::AddProcess(int32_t pid,
                          int32_t ppid,
                          const std::string& name,
                          const std::string& cmdline,
                          uint64_t rss_kb,
                          const std::vector<int32_t>& tids,
                          uint64_t start_ticks) {
  const std::string p = std::to_string(pid);
  std::string status = "Name:\t" + name + "\nUmask:\t0022\nState:\tS\n";
  status += "Tgid:\t" + p + "\nPid:\t" + p + "\nPPid:\t" +
            std::to_string(ppid) + "\nUid:\t1000\t1000\t1000\t1000\n";
  if (rss_kb) {
    status += "VmSize:\t" + std::to_string(rss_kb * 4) + " kB\n";
    status += "VmRSS:\t" + std::to_string(rss_kb) + " kB\n";
    status += "RssAnon:\t" + std::to_string(rss_kb / 2) + " kB\n";
    status += "RssFile:\t" + std::to_string(rss_kb / 2) + " kB\n";
    status += "VmSwap:\t0 kB\n";
  }
  status += "Threads:\t" + std::to_string(tids.size()) + "\n";
  Write(p + "/status", status);
  Write(p + "/cmdline", cmdline);
  Write(p + "/stat", p + " (" + name + ") S " + std::to_string(ppid) +
                         " 0 0 0 0 0 0 0 0 0 7 3 0 0 20 0 1 0 " +
                         std::to_string(start_ticks) + " 0 0\n");
  Write(p + "/oom_score_adj", "0\n");
  MakeDir(p + "/task");
  for (int32_t tid : tids) {
    Write(p + "/task/" + std::to_string(tid) + "/comm",
          name + "-" + std::to_string(tid) + "\n");
  }
}

std::vector<perfetto::protos::TracePacket> DrainPackets(
    encoding::PacketCapture* capture) {
  uint64_t lost = 0;
  std::vector<perfetto::protos::TracePacket> out;
  for (const std::string& grouped : capture->Drain(&lost)) {
    std::string flat;
    perfetto::protos::TracePacket packet;
    EXPECT_TRUE(encoding::PacketCapture::Ungroup(grouped, &flat));
    EXPECT_TRUE(packet.ParseFromString(flat));
    out.push_back(std::move(packet));
  }
  EXPECT_EQ(lost, 0u);
  return out;
}

}  // namespace test
}  // namespace probes
}  // namespace ringtrace
