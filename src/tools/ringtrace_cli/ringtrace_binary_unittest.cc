/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The `ringtrace` binary as a separate process, without a service: exit
// codes and messages of usage errors, config errors and an unreachable
// service, and that none of them touches an existing output file.

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "src/base/test/other_user.h"
#include "src/base/test/subprocess.h"
#include "src/base/test/temp_dir.h"
#include "src/tools/ringtrace_cli/cli_options.h"

namespace ringtrace {
namespace cli {
namespace {

using ::testing::HasSubstr;

constexpr int kTimeoutMs = 60000;

class RingtraceBinaryTest : public ::testing::Test {
 protected:
  RingtraceBinaryTest() { WriteFile(out_, "previous"); }

  static void WriteFile(const std::string& path, const std::string& data) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, data.data(), data.size()),
              static_cast<ssize_t>(data.size()));
    close(fd);
  }

  static std::string ReadFile(const std::string& path) {
    std::string data;
    const int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0)
      return "<missing>";
    char buf[256];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
      data.append(buf, static_cast<size_t>(n));
    close(fd);
    return data;
  }

  // Runs ringtrace with |args|; returns its exit code, its output in
  // |*output|.
  int Run(std::vector<std::string> args, std::string* output) {
    args.insert(args.begin(), base::ExecutableDir() + "/ringtrace");
    base::Subprocess process(args);
    std::string error;
    EXPECT_TRUE(process.Start(&error)) << error;
    EXPECT_TRUE(process.Wait(kTimeoutMs));
    *output = process.output();
    return process.exit_code();
  }

  void ExpectOutUntouched() {
    EXPECT_EQ(ReadFile(out_), "previous");
    EXPECT_TRUE(base::TempFilesBeside(out_).empty());
  }

  base::TempDir dir_;
  const std::string out_ = dir_.File("t.pftrace");
  // Nothing listens there.
  const std::string socket_ = dir_.File("no.sock");
};

TEST_F(RingtraceBinaryTest, Help) {
  std::string output;
  EXPECT_EQ(Run({"--help"}, &output), kExitOk);
  EXPECT_EQ(output, kUsageText);
}

TEST_F(RingtraceBinaryTest, UsageErrorExitsTwo) {
  std::string output;
  EXPECT_EQ(Run({"-o", out_, "--bogus"}, &output), kExitUsage);
  EXPECT_THAT(output, HasSubstr("ringtrace: unknown option --bogus"));
  EXPECT_THAT(output, HasSubstr("--help"));
  ExpectOutUntouched();
}

TEST_F(RingtraceBinaryTest, BadShortcutExitsTwo) {
  std::string output;
  EXPECT_EQ(Run({"-o", out_, "-t", "10 years", "--consumer-socket", socket_},
                &output),
            kExitUsage);
  EXPECT_THAT(output, HasSubstr("-t"));
  ExpectOutUntouched();
}

TEST_F(RingtraceBinaryTest, TextConfigErrorNamesTheLine) {
  const std::string config = dir_.File("c.pbtx");
  WriteFile(config,
            "buffers { size_kb: 1024 }\n"
            "data_sources {\n"
            "  config { name: \"track_event\" tracks: 1 }\n"
            "}\n");
  std::string output;
  EXPECT_EQ(
      Run({"--txt", "-c", config, "-o", out_, "--consumer-socket", socket_},
          &output),
      kExitUsage);
  EXPECT_THAT(output, HasSubstr("ringtrace: " + config +
                                ":3:32: data_sources.config.tracks: "));
  ExpectOutUntouched();
}

TEST_F(RingtraceBinaryTest, ConfigTheServiceWouldRefuseExitsTwo) {
  const std::string config = dir_.File("c.pbtx");
  WriteFile(config,
            "buffers { size_kb: 1024 }\n"
            "buffers { size_kb: 0 }\n"
            "data_sources { config { name: \"track_event\" } }\n");
  std::string output;
  EXPECT_EQ(
      Run({"--txt", "-c", config, "-o", out_, "--consumer-socket", socket_},
          &output),
      kExitUsage);
  EXPECT_THAT(output, HasSubstr(config + ": buffers[1].size_kb"));
  ExpectOutUntouched();
}

TEST_F(RingtraceBinaryTest, TextConfigWithoutTxtExitsTwo) {
  const std::string config = dir_.File("c.pbtx");
  WriteFile(config, "buffers { size_kb: 1024 }\n");
  std::string output;
  EXPECT_EQ(
      Run({"-c", config, "-o", out_, "--consumer-socket", socket_}, &output),
      kExitUsage);
  EXPECT_THAT(output, HasSubstr("--txt"));
}

TEST_F(RingtraceBinaryTest, UnreachableServiceExitsOneAndLeavesOut) {
  std::string output;
  EXPECT_EQ(
      Run({"-t", "1s", "-o", out_, "--consumer-socket", socket_}, &output),
      kExitFailure);
  EXPECT_THAT(output, HasSubstr(socket_));
  ExpectOutUntouched();
  EXPECT_EQ(Run({"--query", "--consumer-socket", socket_}, &output),
            kExitFailure);
}

// --no-clobber: an existing -o FILE is refused before anything is sent
// (no service is needed to see it), and kept.
TEST_F(RingtraceBinaryTest, NoClobberRefusesAnExistingOut) {
  std::string output;
  EXPECT_EQ(Run({"-t", "1s", "-o", out_, "--no-clobber", "--consumer-socket",
                 socket_},
                &output),
            kExitFailure);
  EXPECT_THAT(output, HasSubstr("refusing to overwrite " + out_ +
                                ": it exists (a file); --no-clobber keeps it"));
  EXPECT_THAT(output, ::testing::Not(HasSubstr(socket_)));
  ExpectOutUntouched();
}

}  // namespace
}  // namespace cli
}  // namespace ringtrace
