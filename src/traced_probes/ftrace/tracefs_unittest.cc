/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// tracefs without a kernel: the parsers, the names, and the directory
// logic over a fake tree in a temporary directory. The real kernel's
// tracefs is exercised by real_kernel_unittest.cc.

#include "src/traced_probes/ftrace/tracefs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/base/test/temp_dir.h"

namespace ringtrace {
namespace ftrace {
namespace {

using ::testing::HasSubstr;

constexpr char kStatsText[] =
    "entries: 12\n"
    "overrun: 3456\n"
    "commit overrun: 7\n"
    "bytes: 4080\n"
    "oldest event ts:   831.478741\n"
    "now ts:  1831.5\n"
    "dropped events: 2\n"
    "read events: 99\n";

TEST(TracefsTest, ParseCpuStats) {
  CpuStats s;
  base::Status status = ParseCpuStats(kStatsText, &s);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(s.entries, 12u);
  EXPECT_EQ(s.overrun, 3456u);
  EXPECT_EQ(s.commit_overrun, 7u);
  EXPECT_EQ(s.bytes, 4080u);
  EXPECT_DOUBLE_EQ(s.oldest_event_ts, 831.478741);
  EXPECT_DOUBLE_EQ(s.now_ts, 1831.5);
  EXPECT_EQ(s.dropped_events, 2u);
  EXPECT_EQ(s.read_events, 99u);
}

TEST(TracefsTest, ParseCpuStatsSkipsUnknownAndRejectsBadValues) {
  CpuStats s;
  EXPECT_TRUE(
      ParseCpuStats("entries: 1\nnew counter: 5\noverrun: 0\nnoise\n", &s)
          .ok());
  EXPECT_EQ(s.entries, 1u);
  EXPECT_THAT(ParseCpuStats("overrun: 0\n", &s).message(),
              HasSubstr("\"entries:\""));
  EXPECT_THAT(ParseCpuStats("entries: 0\n", &s).message(),
              HasSubstr("\"overrun:\""));
  EXPECT_THAT(ParseCpuStats("entries: 1x\noverrun: 0\n", &s).message(),
              HasSubstr("line 1"));
  EXPECT_THAT(ParseCpuStats("entries: 1\noverrun: 99999999999999999999\n", &s)
                  .message(),
              HasSubstr("line 2"));
  EXPECT_THAT(
      ParseCpuStats("entries: 1\noverrun: 0\nnow ts: 1.2.3\n", &s).message(),
      HasSubstr("now ts"));
  EXPECT_THAT(ParseCpuStats("entries: -1\noverrun: 0\n", &s).message(),
              HasSubstr("entries"));
}

TEST(TracefsTest, InstanceNames) {
  EXPECT_EQ(InstanceName("ringtrace_probes_", 1234, 7),
            "ringtrace_probes_1234_7");
  pid_t pid = 0;
  EXPECT_TRUE(
      ParseInstanceName("ringtrace_probes_1234_7", "ringtrace_probes_", &pid));
  EXPECT_EQ(pid, 1234);
  for (const char* bad : {
           "ringtrace_probes_1234",   // no _n
           "ringtrace_probes_1234_",  // empty n
           "ringtrace_probes__7",     // empty pid
           "ringtrace_probes_0_1",    // pid 0 (kill() would mean the group)
           "ringtrace_probes_12a_1",  // not decimal
           "ringtrace_probes_1_2_3",  // extra part
           "ringtrace_probes_99999999999_1",  // beyond pid_t
           "other_1234_7",                    // another prefix
           "ringtrace_probes_",               // the prefix alone
           "perfetto",                        // someone else's instance
       }) {
    EXPECT_FALSE(ParseInstanceName(bad, "ringtrace_probes_", &pid)) << bad;
  }
  EXPECT_FALSE(ParseInstanceName("1_2", "", &pid));
  EXPECT_TRUE(IsValidInstancePrefix("ringtrace_probes_"));
  EXPECT_TRUE(IsValidInstancePrefix("a-b"));
  EXPECT_FALSE(IsValidInstancePrefix(""));
  EXPECT_FALSE(IsValidInstancePrefix("a/b"));
  EXPECT_FALSE(IsValidInstancePrefix(".."));
  EXPECT_FALSE(IsValidInstancePrefix(std::string(33, 'a')));
}

TEST(TracefsTest, EventNamesCannotLeaveEvents) {
  std::string_view group;
  std::string_view name;
  ASSERT_TRUE(SplitEventName("sched/sched_switch", &group, &name));
  EXPECT_EQ(group, "sched");
  EXPECT_EQ(name, "sched_switch");
  for (const char* bad : {"sched", "sched/", "/sched_switch", "a/b/c", "../x",
                          "x/..", "a b/c", "sched/*", ""}) {
    EXPECT_FALSE(SplitEventName(bad, &group, &name)) << bad;
  }
}

// A directory tree that looks like tracefs to IsTracefsRoot().
void MakeFakeTracefs(const std::string& root) {
  ASSERT_EQ(mkdir((root + "/events").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((root + "/instances").c_str(), 0700), 0);
  const int fd =
      open((root + "/events/header_page").c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  close(fd);
}

TEST(TracefsTest, FindTracefsInCandidates) {
  base::TempDir empty;
  base::TempDir fake;
  MakeFakeTracefs(fake.path());
  std::string root;
  ASSERT_TRUE(FindTracefsIn({empty.path(), fake.path()}, &root).ok());
  EXPECT_EQ(root, fake.path());

  // Nothing mounted: both paths named, with the command that fixes it.
  const base::Status s = FindTracefsIn({empty.path(), "/nonexistent"}, &root);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(empty.path() + ": not mounted"));
  EXPECT_THAT(s.message(), HasSubstr("/nonexistent: not mounted"));
  EXPECT_THAT(s.message(),
              HasSubstr("mount -t tracefs nodev /sys/kernel/tracing"));
  if (geteuid() != 0) {
    EXPECT_THAT(s.message(), HasSubstr("run as root"));
  }

  // events/header_page but no instances/.
  base::TempDir old_kernel;
  ASSERT_EQ(mkdir((old_kernel.path() + "/events").c_str(), 0700), 0);
  const int fd = open((old_kernel.path() + "/events/header_page").c_str(),
                      O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  close(fd);
  EXPECT_THAT(FindTracefsIn({old_kernel.path()}, &root).message(),
              HasSubstr("no instances/"));
}

TEST(TracefsTest, CreateRefusesBadPrefixAndNonTracefsRoots) {
  base::TempDir empty;
  std::unique_ptr<TracefsInstance> instance;
  EXPECT_THAT(
      TracefsInstance::Create(empty.path(), "bad/prefix", &instance).message(),
      HasSubstr("prefix"));
  EXPECT_THAT(TracefsInstance::Create(empty.path(), "ok_", &instance).message(),
              HasSubstr("not a tracefs root"));
  EXPECT_EQ(instance, nullptr);
}

// A fake tree has no tracing_on in the new directory: Create() fails and
// removes the directory it made.
TEST(TracefsTest, CreateFailureRemovesTheInstance) {
  base::TempDir fake;
  MakeFakeTracefs(fake.path());
  std::unique_ptr<TracefsInstance> instance;
  const base::Status s =
      TracefsInstance::Create(fake.path(), "ringtrace_test_", &instance);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("tracing_on"));
  EXPECT_EQ(instance, nullptr);
  EXPECT_EQ(rmdir((fake.path() + "/instances").c_str()), 0)
      << "instances/ is not empty";
}

// A pid no process has: a child that has exited and been reaped.
pid_t DeadPid() {
  const pid_t pid = fork();
  if (pid == 0)
    _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TEST(TracefsTest, CleanStaleInstancesRemovesOnlyDeadOwnersWithOurPrefix) {
  base::TempDir fake;
  MakeFakeTracefs(fake.path());
  const std::string instances = fake.path() + "/instances/";
  const pid_t dead = DeadPid();
  const std::string stale = InstanceName("rt_", dead, 0);
  const std::string stale2 = InstanceName("rt_", dead, 5);
  const std::string ours = InstanceName("rt_", getpid(), 0);
  const std::string init = InstanceName("rt_", 1, 0);  // pid 1 is alive
  const std::string foreign = InstanceName("other_", dead, 0);
  const std::string odd = "rt_" + std::to_string(dead) + "_x";
  for (const std::string& name : {stale, stale2, ours, init, foreign, odd})
    ASSERT_EQ(mkdir((instances + name).c_str(), 0700), 0) << name;

  uint32_t removed = 0;
  base::Status s = CleanStaleInstances(fake.path(), "rt_", &removed);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(removed, 2u);
  EXPECT_FALSE(Exists(instances + stale));
  EXPECT_FALSE(Exists(instances + stale2));
  EXPECT_TRUE(Exists(instances + ours));
  EXPECT_TRUE(Exists(instances + init));
  EXPECT_TRUE(Exists(instances + foreign));
  EXPECT_TRUE(Exists(instances + odd));

  EXPECT_FALSE(CleanStaleInstances(fake.path(), "", &removed).ok());
  EXPECT_THAT(CleanStaleInstances("/nonexistent", "rt_", &removed).message(),
              HasSubstr("/nonexistent/instances"));
}

TEST(TracefsTest, CleanStaleInstancesReportsWhatItCannotRemove) {
  base::TempDir fake;
  MakeFakeTracefs(fake.path());
  const std::string stale =
      fake.path() + "/instances/" + InstanceName("rt_", DeadPid(), 0);
  ASSERT_EQ(mkdir(stale.c_str(), 0700), 0);
  // Not empty: rmdir fails (ENOTEMPTY), as a busy tracefs instance would.
  ASSERT_EQ(mkdir((stale + "/busy").c_str(), 0700), 0);
  uint32_t removed = 7;
  const base::Status s = CleanStaleInstances(fake.path(), "rt_", &removed);
  EXPECT_THAT(s.message(), HasSubstr(stale));
  EXPECT_EQ(removed, 0u);
}

TEST(TracefsTest, ReadRawPagesReadsWholePagesUntilEmpty) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_NONBLOCK), 0);
  std::vector<uint8_t> pages(3 * 4096);
  for (size_t i = 0; i < pages.size(); i++)
    pages[i] = static_cast<uint8_t>(i * 7);
  ASSERT_EQ(write(fds[1], pages.data(), 2 * 4096), 2 * 4096);
  std::vector<uint8_t> buf(4 * 4096);
  size_t n = 0;
  base::Status s = ReadRawPages(fds[0], 4096, 4, buf.data(), &n);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(n, 2u);
  EXPECT_TRUE(std::equal(pages.begin(), pages.begin() + 2 * 4096, buf.begin()));

  // max_pages bounds the read.
  ASSERT_EQ(write(fds[1], pages.data(), 3 * 4096), 3 * 4096);
  ASSERT_TRUE(ReadRawPages(fds[0], 4096, 1, buf.data(), &n).ok());
  EXPECT_EQ(n, 1u);
  ASSERT_TRUE(ReadRawPages(fds[0], 4096, 4, buf.data(), &n).ok());
  EXPECT_EQ(n, 2u);

  // Part of a page is an error.
  ASSERT_EQ(write(fds[1], pages.data(), 100), 100);
  EXPECT_THAT(ReadRawPages(fds[0], 4096, 4, buf.data(), &n).message(),
              HasSubstr("read 100 bytes"));
  EXPECT_EQ(n, 0u);
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace ftrace
}  // namespace ringtrace
