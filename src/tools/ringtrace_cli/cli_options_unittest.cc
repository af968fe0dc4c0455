/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/cli_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "src/tools/ringtrace_cli/output_file.h"

namespace ringtrace {
namespace cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Parses |args| (argv[0] is added); returns the error ("" on success).
std::string Parse(std::vector<const char*> args, CliOptions* options) {
  args.insert(args.begin(), "ringtrace");
  base::Status status =
      ParseCliOptions(static_cast<int>(args.size()), args.data(), options);
  return status.ok() ? "" : status.message();
}

std::string Error(std::vector<const char*> args) {
  CliOptions options;
  return Parse(std::move(args), &options);
}

TEST(CliOptionsTest, TextConfig) {
  CliOptions o;
  ASSERT_EQ(Parse({"--txt", "-c", "cfg.pbtx", "-o", "out.pftrace"}, &o), "");
  EXPECT_EQ(o.command, Command::kTrace);
  EXPECT_TRUE(o.txt);
  EXPECT_EQ(o.config_path, "cfg.pbtx");
  EXPECT_EQ(o.out_path, "out.pftrace");
  EXPECT_TRUE(o.shortcuts.category_args.empty());
  EXPECT_EQ(o.consumer_socket, "");
  EXPECT_FALSE(o.no_progress);
  EXPECT_FALSE(o.fail_on_empty);
}

TEST(CliOptionsTest, NoClobber) {
  CliOptions o;
  ASSERT_EQ(Parse({"--no-clobber", "-o", "x"}, &o), "");
  EXPECT_TRUE(o.no_clobber);
  CliOptions query;
  EXPECT_EQ(Parse({"--query", "--no-clobber"}, &query),
            "--query takes no --no-clobber");
}

// -o -: stdout, for a session and for --clone; nothing there is a file to
// keep (--no-clobber) or a path to follow (--out-symlink).
TEST(CliOptionsTest, OutDashIsStdout) {
  CliOptions o;
  ASSERT_EQ(Parse({"-o", "-", "-t", "2s", "gfx"}, &o), "");
  EXPECT_EQ(o.command, Command::kTrace);
  EXPECT_EQ(o.out_path, kStdoutPath);
  CliOptions config;
  ASSERT_EQ(Parse({"--txt", "-c", "-", "--out=-"}, &config), "");
  EXPECT_EQ(config.config_path, "-");
  EXPECT_EQ(config.out_path, kStdoutPath);
  CliOptions clone;
  ASSERT_EQ(Parse({"--clone", "3", "-o", "-"}, &clone), "");
  EXPECT_EQ(clone.command, Command::kClone);
  EXPECT_EQ(clone.out_path, kStdoutPath);
  EXPECT_EQ(Error({"-o", "-", "--no-clobber"}),
            "--no-clobber does not go with -o - (stdout replaces no file)");
  EXPECT_EQ(Error({"--out-symlink", "follow", "-o", "-"}),
            "--out-symlink does not go with -o - (stdout is not a path)");
  EXPECT_THAT(std::string(kUsageText), HasSubstr("\"-\": stdout"));
}

TEST(CliOptionsTest, FailOnEmpty) {
  CliOptions o;
  ASSERT_EQ(Parse({"--fail-on-empty", "-o", "x"}, &o), "");
  EXPECT_TRUE(o.fail_on_empty);
  CliOptions p;
  ASSERT_EQ(Parse({"--fail_on_empty", "-o", "x"}, &p), "");
  EXPECT_TRUE(p.fail_on_empty);
  CliOptions twice;
  EXPECT_EQ(Parse({"--fail-on-empty", "--fail-on-empty", "-o", "x"}, &twice),
            "--fail-on-empty given twice");
}

TEST(CliOptionsTest, DetachAttachAndBackground) {
  CliOptions o;
  ASSERT_EQ(Parse({"--detach=night.1", "-t", "0", "-o", "x", "app"}, &o), "");
  EXPECT_EQ(o.command, Command::kTrace);
  EXPECT_EQ(o.detach_key, "night.1");
  CliOptions a;
  ASSERT_EQ(Parse({"--attach", "night.1", "--stop"}, &a), "");
  EXPECT_EQ(a.command, Command::kAttach);
  EXPECT_EQ(a.detach_key, "night.1");
  EXPECT_TRUE(a.stop_attached);
  CliOptions w;  // --stop before --attach: still the flag
  ASSERT_EQ(Parse({"--stop", "--attach=k"}, &w), "");
  EXPECT_TRUE(w.stop_attached);
  CliOptions waits;
  ASSERT_EQ(Parse({"--attach=k"}, &waits), "");
  EXPECT_FALSE(waits.stop_attached);
  CliOptions i;
  ASSERT_EQ(Parse({"--is_detached", "k"}, &i), "");
  EXPECT_EQ(i.command, Command::kIsDetached);
  CliOptions b;
  ASSERT_EQ(Parse({"-d", "-o", "x"}, &b), "");
  EXPECT_TRUE(b.background);
  CliOptions b2;
  ASSERT_EQ(Parse({"--background", "-o", "x"}, &b2), "");
  EXPECT_TRUE(b2.background);

  EXPECT_EQ(Error({"--detach", "a b", "-o", "x"}),
            "--detach: a byte outside [A-Za-z0-9._-]");
  EXPECT_EQ(Error({"--attach", ""}), "--attach: 0 bytes, expected 1..64");
  EXPECT_EQ(Error({"--stop"}),
            "--stop without a SESSION_ID goes with --attach KEY");
  EXPECT_EQ(Error({"--attach", "k", "-o", "x"}), "--attach takes no -o");
  EXPECT_EQ(Error({"--attach", "k", "-t", "1s"}),
            "--attach takes no config (-c, --txt, -t, -b, --fill, "
            "categories)");
  EXPECT_EQ(Error({"--attach", "k", "--is_detached", "k"}),
            "--query, --clone, --stop, --attach and --is_detached exclude "
            "each other");
  EXPECT_EQ(Error({"--attach", "k", "--stop", "7"}),
            "--query, --clone, --stop, --attach and --is_detached exclude "
            "each other");
  EXPECT_EQ(Error({"--is_detached", "k", "--detach", "k"}),
            "--is_detached takes no --detach");
  EXPECT_EQ(Error({"--query", "-d"}), "--query takes no --background");
  EXPECT_EQ(Error({"--detach", "k", "-d", "-o", "x"}),
            "--detach and --background exclude each other");
  EXPECT_EQ(Error({"--detach", "k", "-o", "-"}),
            "--detach does not go with -o - (the trace would outlive this "
            "stdout)");
  EXPECT_EQ(Error({"-d", "-o", "-"}),
            "--background does not go with -o - (the trace would outlive "
            "this stdout)");
}

TEST(CliOptionsTest, LongFormsAndStdin) {
  CliOptions o;
  ASSERT_EQ(Parse({"--config=-", "--out", "o", "--consumer-socket=/s",
                   "--no-progress"},
                  &o),
            "");
  EXPECT_FALSE(o.txt);
  EXPECT_EQ(o.config_path, "-");
  EXPECT_EQ(o.out_path, "o");
  EXPECT_EQ(o.consumer_socket, "/s");
  EXPECT_TRUE(o.no_progress);
}

TEST(CliOptionsTest, Shortcuts) {
  CliOptions o;
  ASSERT_EQ(Parse({"gfx,input", "-t", "10s", "-o", "x", "--buffer=64mb",
                   "--fill", "discard", "net", "--", "-odd"},
                  &o),
            "");
  EXPECT_EQ(o.command, Command::kTrace);
  EXPECT_EQ(o.config_path, "");
  EXPECT_EQ(o.shortcuts.duration, "10s");
  EXPECT_EQ(o.shortcuts.buffer_size, "64mb");
  EXPECT_EQ(o.shortcuts.fill, "discard");
  EXPECT_THAT(o.shortcuts.category_args,
              ElementsAre("gfx,input", "net", "-odd"));
}

TEST(CliOptionsTest, OutputOnlyUsesDefaults) {
  CliOptions o;
  ASSERT_EQ(Parse({"-o", "x"}, &o), "");
  EXPECT_EQ(o.shortcuts.duration, "");
  EXPECT_TRUE(o.shortcuts.category_args.empty());
}

TEST(CliOptionsTest, Help) {
  CliOptions o;
  ASSERT_EQ(Parse({"-o", "x", "--help", "--bogus"}, &o), "");
  EXPECT_EQ(o.command, Command::kHelp);
  ASSERT_EQ(Parse({"-h"}, &o), "");
  EXPECT_EQ(o.command, Command::kHelp);
  EXPECT_THAT(std::string(kUsageText), HasSubstr("--consumer-socket"));
  EXPECT_THAT(std::string(kUsageText), HasSubstr("Exit status"));
}

TEST(CliOptionsTest, QueryCloneStop) {
  CliOptions o;
  ASSERT_EQ(Parse({"--query"}, &o), "");
  EXPECT_EQ(o.command, Command::kQuery);
  ASSERT_EQ(Parse({"--clone", "42", "-o", "snap"}, &o), "");
  EXPECT_EQ(o.command, Command::kClone);
  EXPECT_EQ(o.session_id, 42u);
  EXPECT_EQ(o.out_path, "snap");
  ASSERT_EQ(Parse({"--stop=18446744073709551615"}, &o), "");
  EXPECT_EQ(o.command, Command::kStop);
  EXPECT_EQ(o.session_id, 18446744073709551615u);
}

// --out-symlink: follow or refuse (the default), only with -o.
TEST(CliOptionsTest, OutSymlink) {
  CliOptions o;
  ASSERT_EQ(Parse({"-o", "x"}, &o), "");
  EXPECT_FALSE(o.follow_symlink);
  ASSERT_EQ(Parse({"-o", "x", "--out-symlink", "follow"}, &o), "");
  EXPECT_TRUE(o.follow_symlink);
  ASSERT_EQ(Parse({"--out-symlink=refuse", "-o", "x"}, &o), "");
  EXPECT_FALSE(o.follow_symlink);
  ASSERT_EQ(Parse({"--clone", "7", "-o", "x", "--out-symlink=follow"}, &o), "");
  EXPECT_TRUE(o.follow_symlink);
  EXPECT_EQ(Error({"-o", "x", "--out-symlink", "yes"}),
            "bad value 'yes' for --out-symlink: follow or refuse");
  EXPECT_EQ(
      Error({"-o", "x", "--out-symlink", "follow", "--out-symlink", "follow"}),
      "--out-symlink given twice");
  EXPECT_EQ(Error({"--query", "--out-symlink", "follow"}),
            "--query takes no --out-symlink");
  EXPECT_THAT(std::string(kUsageText), HasSubstr("--out-symlink follow"));
}

TEST(CliOptionsTest, BadSessionIds) {
  for (const char* bad : {"0", "", "-1", "1x", "18446744073709551616", " 1"})
    EXPECT_THAT(Error({"--stop", bad}), HasSubstr("bad session id")) << bad;
}

TEST(CliOptionsTest, UsageErrors) {
  EXPECT_THAT(Error({}), HasSubstr("-o FILE is required"));
  EXPECT_THAT(Error({"-c", "cfg"}), HasSubstr("-o FILE is required"));
  EXPECT_THAT(Error({"--bogus"}), HasSubstr("unknown option --bogus"));
  EXPECT_THAT(Error({"-"}), HasSubstr("unknown option -"));
  EXPECT_THAT(Error({"-o"}), HasSubstr("missing value for -o"));
  EXPECT_THAT(Error({"-o", "a", "--out=b"}), HasSubstr("--out given twice"));
  EXPECT_THAT(Error({"--txt", "--txt", "-c", "c", "-o", "x"}),
              HasSubstr("--txt given twice"));
  EXPECT_THAT(Error({"-o", "x", "-c", "c", "-t", "1s"}),
              HasSubstr("excludes the shortcuts"));
  EXPECT_THAT(Error({"-o", "x", "-c", "c", "cat"}),
              HasSubstr("excludes the shortcuts"));
  EXPECT_THAT(Error({"-o", "x", "--txt"}), HasSubstr("--txt needs -c"));
  EXPECT_THAT(Error({"--query", "-o", "x"}), HasSubstr("--query takes no -o"));
  EXPECT_THAT(Error({"--query", "cat"}), HasSubstr("takes no config"));
  EXPECT_THAT(Error({"--stop", "1", "-t", "1s"}), HasSubstr("takes no config"));
  EXPECT_THAT(Error({"--clone", "1"}), HasSubstr("-o FILE is required"));
  EXPECT_THAT(Error({"--query", "--stop", "1"}), HasSubstr("exclude"));
  EXPECT_THAT(Error({"-c", "", "-o", "x"}), HasSubstr("-c needs a file"));
  EXPECT_THAT(Error({"--out="}), HasSubstr("-o needs a file"));
  EXPECT_THAT(Error({"--outfile=x"}), HasSubstr("unknown option"));
  EXPECT_THAT(Error({"-o=x"}), HasSubstr("unknown option"));
}

}  // namespace
}  // namespace cli
}  // namespace ringtrace
