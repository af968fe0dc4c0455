/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/proc_parsers.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace ringtrace {
namespace probes {
namespace {

using namespace std::string_literals;  // "a\0b"s keeps the NUL

// A /proc/PID/status as Linux 6.1 writes it (trimmed).
constexpr char kStatus[] =
    "Name:\tbash\n"
    "Umask:\t0022\n"
    "State:\tS (sleeping)\n"
    "Tgid:\t4242\n"
    "Ngid:\t0\n"
    "Pid:\t4242\n"
    "PPid:\t4000\n"
    "TracerPid:\t0\n"
    "Uid:\t1000\t1001\t1002\t1003\n"
    "Gid:\t1000\t1000\t1000\t1000\n"
    "VmPeak:\t   10000 kB\n"
    "VmSize:\t    9000 kB\n"
    "VmLck:\t       4 kB\n"
    "VmHWM:\t    5000 kB\n"
    "VmRSS:\t    4800 kB\n"
    "RssAnon:\t    1800 kB\n"
    "RssFile:\t    2900 kB\n"
    "RssShmem:\t     100 kB\n"
    "VmSwap:\t      12 kB\n"
    "Threads:\t1\n";

TEST(ProcParsersTest, Numbers) {
  uint64_t u = 0;
  EXPECT_TRUE(ParseUint64("0", &u));
  EXPECT_EQ(u, 0u);
  EXPECT_TRUE(ParseUint64("18446744073709551615", &u));
  EXPECT_EQ(u, std::numeric_limits<uint64_t>::max());
  u = 7;
  EXPECT_FALSE(ParseUint64("18446744073709551616", &u));
  EXPECT_FALSE(ParseUint64("99999999999999999999", &u));
  EXPECT_FALSE(ParseUint64("", &u));
  EXPECT_FALSE(ParseUint64("-1", &u));
  EXPECT_FALSE(ParseUint64("+1", &u));
  EXPECT_FALSE(ParseUint64(" 1", &u));
  EXPECT_FALSE(ParseUint64("1 ", &u));
  EXPECT_FALSE(ParseUint64("12a", &u));
  EXPECT_EQ(u, 7u);  // untouched by failures

  int64_t i = 0;
  EXPECT_TRUE(ParseInt64("-1000", &i));
  EXPECT_EQ(i, -1000);
  EXPECT_TRUE(ParseInt64("9223372036854775807", &i));
  EXPECT_EQ(i, std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(ParseInt64("-9223372036854775808", &i));
  EXPECT_EQ(i, std::numeric_limits<int64_t>::min());
  EXPECT_FALSE(ParseInt64("9223372036854775808", &i));
  EXPECT_FALSE(ParseInt64("-9223372036854775809", &i));
  EXPECT_FALSE(ParseInt64("-", &i));
  EXPECT_FALSE(ParseInt64("--1", &i));

  int32_t pid = 0;
  EXPECT_TRUE(ParsePid("1", &pid));
  EXPECT_EQ(pid, 1);
  EXPECT_TRUE(ParsePid("2147483647", &pid));
  EXPECT_EQ(pid, 2147483647);
  EXPECT_FALSE(ParsePid("2147483648", &pid));
  EXPECT_FALSE(ParsePid("0", &pid));
  EXPECT_FALSE(ParsePid("self", &pid));
}

TEST(ProcParsersTest, StatusOfARealProcess) {
  const ProcStatus st = ParseProcStatus(kStatus);
  EXPECT_EQ(st.malformed_lines, 0u);
  ASSERT_TRUE(st.name);
  EXPECT_EQ(*st.name, "bash");
  EXPECT_EQ(st.tgid, 4242);
  EXPECT_EQ(st.pid, 4242);
  EXPECT_EQ(st.ppid, 4000);
  EXPECT_EQ(st.uid, 1000);  // the real uid
  EXPECT_EQ(st.vm_size_kb, 9000u);
  EXPECT_EQ(st.vm_rss_kb, 4800u);
  EXPECT_EQ(st.rss_anon_kb, 1800u);
  EXPECT_EQ(st.rss_file_kb, 2900u);
  EXPECT_EQ(st.rss_shmem_kb, 100u);
  EXPECT_EQ(st.vm_swap_kb, 12u);
  EXPECT_EQ(st.vm_locked_kb, 4u);
  EXPECT_EQ(st.vm_hwm_kb, 5000u);
}

TEST(ProcParsersTest, StatusOfAKernelThreadHasNoMemoryCounters) {
  const ProcStatus st = ParseProcStatus(
      "Name:\tkworker/0:1-events\nTgid:\t17\nPid:\t17\nPPid:\t2\n"
      "Uid:\t0\t0\t0\t0\nThreads:\t1\n");
  EXPECT_EQ(st.malformed_lines, 0u);
  EXPECT_EQ(*st.name, "kworker/0:1-events");
  EXPECT_EQ(st.ppid, 2);
  EXPECT_EQ(st.uid, 0);
  EXPECT_FALSE(st.vm_rss_kb);
  EXPECT_FALSE(st.vm_size_kb);
}

TEST(ProcParsersTest, StatusCutOffMidLineKeepsOnlyWholeLines) {
  // The process exited while the kernel wrote the file: the last line has
  // no newline, and "VmRSS:\t 48" would be a wrong value if it were read.
  const std::string text(kStatus);
  const std::string cut = text.substr(0, text.find("VmRSS:") + 10);
  const ProcStatus st = ParseProcStatus(cut);
  EXPECT_EQ(st.malformed_lines, 1u);
  EXPECT_EQ(st.vm_hwm_kb, 5000u);
  EXPECT_FALSE(st.vm_rss_kb);
  EXPECT_FALSE(st.rss_anon_kb);
}

TEST(ProcParsersTest, StatusWithHostileValuesSetsNothingWrong) {
  const ProcStatus st = ParseProcStatus(
      "Name:\t a name\twith tabs and a very long tail that goes on and on "
      "and on past sixty-four bytes\n"
      "Pid:\t-5\n"
      "PPid:\t99999999999\n"
      "Uid:\t1000\t1000\n"                  // two of four
      "VmRSS:\t4800 MB\n"                   // not kB
      "VmSize:\t9000\n"                     // no unit
      "VmSwap:\t18446744073709551616 kB\n"  // overflows
      "RssAnon:\t1 kB extra\n"
      "Tgid:\t12\n"
      "Tgid:\t13\n"  // repeated: the first counts
      ": no key\n"
      "no colon at all\n"
      "\n");
  ASSERT_TRUE(st.name);
  EXPECT_EQ(st.name->size(), kMaxNameBytes);
  EXPECT_EQ(st.name->substr(0, 10), " a name\twi");
  EXPECT_FALSE(st.pid);
  EXPECT_FALSE(st.ppid);
  EXPECT_FALSE(st.uid);
  EXPECT_FALSE(st.vm_rss_kb);
  EXPECT_FALSE(st.vm_size_kb);
  EXPECT_FALSE(st.vm_swap_kb);
  EXPECT_FALSE(st.rss_anon_kb);
  EXPECT_EQ(st.tgid, 12);
  EXPECT_EQ(st.malformed_lines, 8u);
}

TEST(ProcParsersTest, StatusOfBinaryGarbageOrNothing) {
  std::string garbage;
  for (int i = 0; i < 4096; i++)
    garbage += static_cast<char>((i * 131 + 7) & 0xff);
  const ProcStatus st = ParseProcStatus(garbage);
  EXPECT_FALSE(st.pid);
  EXPECT_FALSE(st.vm_rss_kb);
  const ProcStatus empty = ParseProcStatus("");
  EXPECT_FALSE(empty.name);
  EXPECT_EQ(empty.malformed_lines, 0u);
  const ProcStatus nul = ParseProcStatus("Pid:\t1\0\n"s);
  EXPECT_FALSE(nul.pid);
  EXPECT_EQ(nul.malformed_lines, 1u);
}

TEST(ProcParsersTest, PidStat) {
  ProcPidStat st;
  ASSERT_TRUE(ParseProcPidStat(
      "4242 (bash) S 4000 4242 4242 34816 4300 4194304 1200 3000 0 2 "
      "150 75 10 5 20 0 1 0 123456 9216000 1200 18446744073709551615 1 1 "
      "0 0 0 0\n",
      &st));
  EXPECT_EQ(st.pid, 4242);
  EXPECT_EQ(st.comm, "bash");
  EXPECT_EQ(st.state, 'S');
  EXPECT_EQ(st.ppid, 4000);
  EXPECT_EQ(st.utime_ticks, 150u);
  EXPECT_EQ(st.stime_ticks, 75u);
  EXPECT_EQ(st.start_time_ticks, 123456u);
}

TEST(ProcParsersTest, PidStatCommWithParenthesesAndSpaces) {
  // A process may call itself anything: the comm ends at the LAST ')'.
  ProcPidStat st;
  ASSERT_TRUE(ParseProcPidStat(
      "77 (a) S 1 2 3 (x) ) R 9 9 9 9 9 9 9 9 9 9 11 12 0 0 20 0 1 0 999 "
      "0 0\n",
      &st));
  EXPECT_EQ(st.pid, 77);
  EXPECT_EQ(st.comm, "a) S 1 2 3 (x) ");
  EXPECT_EQ(st.state, 'R');
  EXPECT_EQ(st.ppid, 9);
  EXPECT_EQ(st.utime_ticks, 11u);
  EXPECT_EQ(st.stime_ticks, 12u);
  EXPECT_EQ(st.start_time_ticks, 999u);
  ASSERT_TRUE(
      ParseProcPidStat("78 () Z 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 5\n", &st));
  EXPECT_EQ(st.comm, "");
  EXPECT_EQ(st.ppid, 0);
  EXPECT_EQ(st.start_time_ticks, 5u);
}

TEST(ProcParsersTest, PidStatRejectsCutOrMalformedLines) {
  ProcPidStat st;
  // Ends before starttime.
  EXPECT_FALSE(
      ParseProcPidStat("1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 5 6", &st));
  EXPECT_FALSE(ParseProcPidStat("", &st));
  EXPECT_FALSE(ParseProcPidStat("1 init S 0", &st));
  EXPECT_FALSE(
      ParseProcPidStat("x (a) S 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
                       "0 0 1",
                       &st));
  EXPECT_FALSE(
      ParseProcPidStat("0 (a) S 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
                       "0 0 1",
                       &st));
  // A non-number where utime is.
  EXPECT_FALSE(
      ParseProcPidStat("5 (a) S 1 0 0 0 0 0 0 0 0 0 u 0 0 0 0 0 0 0 "
                       "0 0 1",
                       &st));
  // Two letters for the state.
  EXPECT_FALSE(
      ParseProcPidStat("5 (a) SS 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
                       "0 0 1",
                       &st));
  // ')' before '('.
  EXPECT_FALSE(ParseProcPidStat("5 ) (", &st));
}

TEST(ProcParsersTest, Cmdline) {
  EXPECT_EQ(SplitCmdline("/bin/sleep\0"
                         "10\0"s),
            (std::vector<std::string>{"/bin/sleep", "10"}));
  // No final NUL (a cut read, or a rewritten command line).
  EXPECT_EQ(SplitCmdline("/bin/sleep\0"
                         "10"s),
            (std::vector<std::string>{"/bin/sleep", "10"}));
  // Empty arguments in the middle are arguments.
  EXPECT_EQ(SplitCmdline("prog\0\0"
                         "x\0"s),
            (std::vector<std::string>{"prog", "", "x"}));
  EXPECT_EQ(SplitCmdline("nginx: worker process"),
            (std::vector<std::string>{"nginx: worker process"}));
  EXPECT_TRUE(SplitCmdline("").empty());
  EXPECT_EQ(SplitCmdline("\0"s), (std::vector<std::string>{""}));
}

TEST(ProcParsersTest, CmdlineKeepsAtMostTheBound) {
  std::string many;
  for (size_t i = 0; i < kMaxCmdlineArgs + 10; i++)
    many += std::to_string(i) + '\0';
  size_t cut = 0;
  const std::vector<std::string> args = SplitCmdline(many, &cut);
  ASSERT_EQ(args.size(), kMaxCmdlineArgs);
  EXPECT_EQ(args.back(), std::to_string(kMaxCmdlineArgs - 1));
  EXPECT_EQ(cut, 10u);
}

TEST(ProcParsersTest, OomScoreAdjAndComm) {
  int64_t adj = 5;
  EXPECT_TRUE(ParseOomScoreAdj("0\n", &adj));
  EXPECT_EQ(adj, 0);
  EXPECT_TRUE(ParseOomScoreAdj("-1000\n", &adj));
  EXPECT_EQ(adj, -1000);
  EXPECT_TRUE(ParseOomScoreAdj("1000\n", &adj));
  EXPECT_EQ(adj, 1000);
  EXPECT_FALSE(ParseOomScoreAdj("1001\n", &adj));
  EXPECT_FALSE(ParseOomScoreAdj("-1001\n", &adj));
  EXPECT_FALSE(ParseOomScoreAdj("12", &adj));  // cut off
  EXPECT_FALSE(ParseOomScoreAdj("\n", &adj));
  EXPECT_FALSE(ParseOomScoreAdj("1 2\n", &adj));
  EXPECT_FALSE(ParseOomScoreAdj("", &adj));
  EXPECT_EQ(adj, 1000);

  EXPECT_EQ(ParseComm("worker-3\n"), "worker-3");
  EXPECT_EQ(ParseComm("no newline"), "no newline");
  EXPECT_EQ(ParseComm(""), "");
  EXPECT_EQ(ParseComm(std::string(300, 'x') + "\n").size(), kMaxNameBytes);
}

TEST(ProcParsersTest, Meminfo) {
  const KeyValues kv = ParseMeminfo(
      "MemTotal:       16303592 kB\n"
      "MemFree:         1234567 kB\n"
      "Active(anon):      98765 kB\n"
      "HugePages_Total:       0\n"
      "Hugepagesize:       2048 kB\n");
  EXPECT_EQ(kv.malformed_lines, 0u);
  ASSERT_EQ(kv.values.size(), 5u);
  EXPECT_EQ(kv.values[0].key, "MemTotal");
  EXPECT_EQ(kv.values[0].value, 16303592u);
  EXPECT_EQ(kv.values[2].key, "Active(anon)");
  EXPECT_EQ(kv.values[2].value, 98765u);
  EXPECT_EQ(kv.values[3].key, "HugePages_Total");
  EXPECT_EQ(kv.values[3].value, 0u);
}

TEST(ProcParsersTest, MeminfoMalformedLines) {
  const KeyValues kv = ParseMeminfo(
      "MemTotal:       16303592 MB\n"  // unit
      "MemFree         1234567 kB\n"   // no colon
      ":                     1 kB\n"   // no key
      "Cached:             abc kB\n"   // not a number
      "Buffers:     1 kB 2\n"          // trailing words
      "Shmem:              42 kB\n"
      "SwapTotal:    1024");  // cut off
  EXPECT_EQ(kv.malformed_lines, 6u);
  ASSERT_EQ(kv.values.size(), 1u);
  EXPECT_EQ(kv.values[0].key, "Shmem");
  EXPECT_EQ(kv.values[0].value, 42u);
}

TEST(ProcParsersTest, Vmstat) {
  const KeyValues kv = ParseVmstat(
      "nr_free_pages 408149\n"
      "pgfault 12345678901\n"
      "bad\n"
      "nr_dirty -3\n"
      "nr_writeback 5 6\n"
      "pgmajfault 12");  // cut off
  EXPECT_EQ(kv.malformed_lines, 4u);
  ASSERT_EQ(kv.values.size(), 2u);
  EXPECT_EQ(kv.values[0].key, "nr_free_pages");
  EXPECT_EQ(kv.values[0].value, 408149u);
  EXPECT_EQ(kv.values[1].key, "pgfault");
  EXPECT_EQ(kv.values[1].value, 12345678901u);
}

TEST(ProcParsersTest, SystemStat) {
  const SystemStat st = ParseSystemStat(
      "cpu  1000 20 300 40000 50 6 7 8 0 0\n"
      "cpu0 500 10 150 20000 25 3 4 5 0 0\n"
      "cpu1 500 10 150 20000 25 3 3 3 0 0\n"
      "intr 1000 0 900 0 0 100\n"
      "ctxt 987654\n"
      "btime 1700000000\n"
      "processes 4321\n"
      "procs_running 2\n"
      "procs_blocked 0\n"
      "softirq 600 0 500 0 100 0 0 0 0 0 0\n");
  EXPECT_EQ(st.malformed_lines, 0u);
  ASSERT_EQ(st.cpus.size(), 2u);  // not the "cpu" sum
  EXPECT_EQ(st.cpus[0].cpu, 0u);
  EXPECT_EQ(st.cpus[0].fields, 8u);
  EXPECT_EQ(st.cpus[0].ticks[0], 500u);
  EXPECT_EQ(st.cpus[0].ticks[3], 20000u);
  EXPECT_EQ(st.cpus[0].ticks[7], 5u);
  EXPECT_EQ(st.cpus[1].cpu, 1u);
  EXPECT_EQ(st.cpus[1].ticks[6], 3u);
  EXPECT_EQ(st.irq_total, 1000u);
  ASSERT_EQ(st.irqs.size(), 2u);  // the zeros are left out
  EXPECT_EQ(st.irqs[0].index, 1);
  EXPECT_EQ(st.irqs[0].count, 900u);
  EXPECT_EQ(st.irqs[1].index, 4);
  EXPECT_EQ(st.irqs[1].count, 100u);
  EXPECT_EQ(st.softirq_total, 600u);
  ASSERT_EQ(st.softirqs.size(), 2u);
  EXPECT_EQ(st.softirqs[0].index, 1);
  EXPECT_EQ(st.softirqs[1].index, 3);
  EXPECT_EQ(st.forks, 4321u);
  EXPECT_EQ(st.context_switches, 987654u);
}

TEST(ProcParsersTest, SystemStatOldAndMalformedLines) {
  const SystemStat st = ParseSystemStat(
      "cpu3 1 2 3 4\n"            // an old kernel: four columns
      "cpu4 1 2 3\n"              // too few
      "cpuX 1 2 3 4\n"            // not a CPU number
      "cpu5 1 2 x 4\n"            // not a number
      "cpu99999999999 1 2 3 4\n"  // beyond uint32
      "intr 10 1 x 2\n"           // keeps what came before the defect
      "intr 20 1\n"               // repeated
      "processes\n"               // no value
      "ctxt 1 2\n"
      "softirq");  // cut off
  EXPECT_EQ(st.malformed_lines, 9u);
  ASSERT_EQ(st.cpus.size(), 1u);
  EXPECT_EQ(st.cpus[0].cpu, 3u);
  EXPECT_EQ(st.cpus[0].fields, 4u);
  EXPECT_EQ(st.irq_total, 10u);
  ASSERT_EQ(st.irqs.size(), 1u);
  EXPECT_EQ(st.irqs[0].count, 1u);
  EXPECT_FALSE(st.forks);
  EXPECT_FALSE(st.context_switches);
  EXPECT_FALSE(st.softirq_total);
}

TEST(ProcParsersTest, SystemStatBounds) {
  std::string text;
  for (size_t i = 0; i < kMaxCpus + 3; i++)
    text += "cpu" + std::to_string(i) + " 1 2 3 4 5 6 7 8\n";
  text += "intr 99999";
  for (size_t i = 0; i < kMaxInterrupts + 5; i++)
    text += " 1";
  text += "\n";
  const SystemStat st = ParseSystemStat(text);
  EXPECT_EQ(st.cpus.size(), kMaxCpus);
  EXPECT_EQ(st.irqs.size(), kMaxInterrupts);
  EXPECT_EQ(st.entries_cut, 3u + 5u);
  EXPECT_EQ(st.malformed_lines, 0u);
}

}  // namespace
}  // namespace probes
}  // namespace ringtrace
