/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/flags.h"

#include <gtest/gtest.h>

#include <vector>

namespace ringtrace {
namespace base {
namespace {

// What a FlagReader made of |args| (argv[0] is added).
struct Read {
  std::vector<Flag> flags;
  bool help = false;
  bool version = false;
  std::string error;
};

Read ReadAll(std::vector<const char*> args) {
  args.insert(args.begin(), "prog");
  FlagReader reader(static_cast<int>(args.size()), args.data());
  Read read;
  Flag flag;
  while (reader.Next(&flag))
    read.flags.push_back(flag);
  // Once stopped, the reader stays stopped.
  EXPECT_FALSE(reader.Next(&flag));
  read.help = reader.help();
  read.version = reader.version();
  read.error = reader.error();
  return read;
}

TEST(FlagReaderTest, NoArguments) {
  const Read read = ReadAll({});
  EXPECT_TRUE(read.flags.empty());
  EXPECT_FALSE(read.help);
  EXPECT_EQ(read.error, "");
  // No argv at all.
  FlagReader empty(0, nullptr);
  Flag flag;
  EXPECT_FALSE(empty.Next(&flag));
  EXPECT_FALSE(empty.help());
  EXPECT_EQ(empty.error(), "");
}

// --version stops the reader like --help, after the flags before it; as a
// value it is a value.
TEST(FlagReaderTest, VersionStopsTheReader) {
  const Read read = ReadAll({"--a", "1", "--version", "--b", "2"});
  ASSERT_EQ(read.flags.size(), 1u);
  EXPECT_TRUE(read.version);
  EXPECT_FALSE(read.help);
  EXPECT_EQ(read.error, "");
  const Read as_value = ReadAll({"--a", "--version"});
  ASSERT_EQ(as_value.flags.size(), 1u);
  EXPECT_EQ(as_value.flags[0].value, "--version");
  EXPECT_FALSE(as_value.version);
}

TEST(FlagReaderTest, SpaceAndEqualsForms) {
  const Read read = ReadAll({"--out", "a.pftrace", "--threads=3"});
  ASSERT_EQ(read.flags.size(), 2u);
  EXPECT_EQ(read.flags[0].name, "--out");
  EXPECT_EQ(read.flags[0].value, "a.pftrace");
  EXPECT_EQ(read.flags[1].name, "--threads");
  EXPECT_EQ(read.flags[1].value, "3");
  EXPECT_FALSE(read.help);
  EXPECT_EQ(read.error, "");
}

TEST(FlagReaderTest, ValueAfterTheFirstEquals) {
  const Read read = ReadAll({"--a=b=c", "--e=", "--=x"});
  ASSERT_EQ(read.flags.size(), 3u);
  EXPECT_EQ(read.flags[0].name, "--a");
  EXPECT_EQ(read.flags[0].value, "b=c");
  EXPECT_EQ(read.flags[1].name, "--e");
  EXPECT_EQ(read.flags[1].value, "");  // present and empty: not missing
  EXPECT_EQ(read.flags[2].name, "--");
  EXPECT_EQ(read.flags[2].value, "x");
  EXPECT_EQ(read.error, "");
}

TEST(FlagReaderTest, TheNextArgumentIsAValueWhateverItLooksLike) {
  const Read read =
      ReadAll({"--out", "--help", "--name", "-h", "--x", "a=b", "--y", "--"});
  ASSERT_EQ(read.flags.size(), 4u);
  EXPECT_EQ(read.flags[0].value, "--help");
  EXPECT_EQ(read.flags[1].value, "-h");
  EXPECT_EQ(read.flags[2].name, "--x");
  EXPECT_EQ(read.flags[2].value, "a=b");
  EXPECT_EQ(read.flags[3].value, "--");
  EXPECT_FALSE(read.help);
}

TEST(FlagReaderTest, HelpStopsTheReader) {
  EXPECT_TRUE(ReadAll({"--help"}).help);
  EXPECT_TRUE(ReadAll({"-h"}).help);
  // After a flag, and before one that would lack its value.
  const Read read = ReadAll({"--a", "1", "-h", "--b"});
  EXPECT_EQ(read.flags.size(), 1u);
  EXPECT_TRUE(read.help);
  EXPECT_EQ(read.error, "");
}

TEST(FlagReaderTest, OnlyTheWholeArgumentAsksForHelp) {
  const Read read = ReadAll({"--help=1", "--helpx", "y", "-hx", "z"});
  EXPECT_FALSE(read.help);
  ASSERT_EQ(read.flags.size(), 3u);
  EXPECT_EQ(read.flags[0].name, "--help");
  EXPECT_EQ(read.flags[0].value, "1");
  EXPECT_EQ(read.flags[1].name, "--helpx");
  EXPECT_EQ(read.flags[2].name, "-hx");
}

TEST(FlagReaderTest, MissingValueAtTheEnd) {
  const Read read = ReadAll({"--a", "1", "--ring_kb"});
  ASSERT_EQ(read.flags.size(), 1u);
  EXPECT_EQ(read.flags[0].name, "--a");
  EXPECT_FALSE(read.help);
  // The flag as written.
  EXPECT_EQ(read.error, "missing value for --ring_kb");
}

TEST(FlagReaderTest, DoubleDashAloneIsAnOrdinaryFlag) {
  EXPECT_EQ(ReadAll({"--"}).error, "missing value for --");
  const Read read = ReadAll({"--", "x"});
  ASSERT_EQ(read.flags.size(), 1u);
  EXPECT_EQ(read.flags[0].name, "--");
  EXPECT_EQ(read.flags[0].value, "x");
  EXPECT_FALSE(read.flags[0].Is("--out"));
  EXPECT_TRUE(read.flags[0].Is("--"));
  EXPECT_TRUE(read.flags[0].Is("_-"));
  EXPECT_EQ(read.error, "");
}

TEST(FlagReaderTest, UnderscoreAndDashAreOne) {
  const Read read = ReadAll({"--ring_kb", "1", "--ring-kb=2", "--a_b-c_", "3",
                             "--policy", "stall_then_drop"});
  ASSERT_EQ(read.flags.size(), 4u);
  // Names are kept as written, for messages; the normalized form has '-'.
  EXPECT_EQ(read.flags[0].name, "--ring_kb");
  EXPECT_EQ(read.flags[0].normalized_name, "--ring-kb");
  EXPECT_EQ(read.flags[1].name, "--ring-kb");
  EXPECT_EQ(read.flags[1].normalized_name, "--ring-kb");
  EXPECT_EQ(read.flags[2].normalized_name, "--a-b-c-");
  for (int i = 0; i < 2; ++i) {
    const Flag& flag = read.flags[i];
    EXPECT_TRUE(flag.Is("--ring_kb"));
    EXPECT_TRUE(flag.Is("--ring-kb"));
    EXPECT_TRUE(flag.Is("__ring_kb"));
    EXPECT_FALSE(flag.Is("--ring"));
    EXPECT_FALSE(flag.Is("--ring-kbx"));
    EXPECT_FALSE(flag.Is("--ringxkb"));
    EXPECT_FALSE(flag.Is(""));
  }
  // Values are not normalized.
  EXPECT_EQ(read.flags[3].value, "stall_then_drop");
}

TEST(ParseUint32Test, AcceptsDecimalDigitsUpToTheMaximum) {
  uint32_t v = 7;
  EXPECT_TRUE(ParseUint32("0", &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(ParseUint32("1", &v));
  EXPECT_EQ(v, 1u);
  EXPECT_TRUE(ParseUint32("0042", &v));
  EXPECT_EQ(v, 42u);
  EXPECT_TRUE(ParseUint32("4294967295", &v));
  EXPECT_EQ(v, 4294967295u);
  EXPECT_TRUE(ParseUint32("000000000000000000004294967295", &v));
  EXPECT_EQ(v, 4294967295u);
}

TEST(ParseUint32Test, RejectsEverythingElseAndLeavesTheOutput) {
  const char* const bad[] = {
      "",                      // empty
      "-1",                    // sign
      "-0",                    //
      "+1",                    //
      " 1",                    // white space
      "1 ",                    //
      "\t1",                   //
      "1x",                    // trailing junk
      "x1",                    //
      "0x10",                  // no other base
      "1.5",                   //
      "1e3",                   //
      "4294967296",            // one above the maximum
      "9999999999",            //
      "18446744073709551616",  // above 64 bits
      "99999999999999999999999999",
  };
  for (const char* s : bad) {
    uint32_t v = 7;
    EXPECT_FALSE(ParseUint32(s, &v)) << "'" << s << "'";
    EXPECT_EQ(v, 7u) << "'" << s << "'";
  }
  // An embedded NUL is trailing junk too.
  uint32_t v = 7;
  EXPECT_FALSE(ParseUint32(std::string("1\0", 2), &v));
  EXPECT_EQ(v, 7u);
}

}  // namespace
}  // namespace base
}  // namespace ringtrace
