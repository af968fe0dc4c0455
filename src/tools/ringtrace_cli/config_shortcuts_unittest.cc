/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/config_shortcuts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ringtrace {
namespace cli {
namespace {

using perfetto::protos::TraceConfig;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

uint32_t Ms(const std::string& text) {
  uint32_t ms = 12345;
  base::Status status = ParseDurationMs(text, &ms);
  EXPECT_TRUE(status.ok()) << text << ": " << status.message();
  return ms;
}

std::string DurationError(const std::string& text) {
  uint32_t ms = 12345;
  base::Status status = ParseDurationMs(text, &ms);
  EXPECT_EQ(ms, 12345u) << "changed on error: " << text;
  return status.ok() ? "" : status.message();
}

uint32_t Kb(const std::string& text) {
  uint32_t kb = 12345;
  base::Status status = ParseBufferSizeKb(text, &kb);
  EXPECT_TRUE(status.ok()) << text << ": " << status.message();
  return kb;
}

std::string SizeError(const std::string& text) {
  uint32_t kb = 12345;
  base::Status status = ParseBufferSizeKb(text, &kb);
  EXPECT_EQ(kb, 12345u) << "changed on error: " << text;
  return status.ok() ? "" : status.message();
}

TEST(ConfigShortcutsTest, DurationUnits) {
  EXPECT_EQ(Ms("500ms"), 500u);
  EXPECT_EQ(Ms("10s"), 10000u);
  EXPECT_EQ(Ms("10"), 10000u);
  EXPECT_EQ(Ms("5m"), 300000u);
  EXPECT_EQ(Ms("2h"), 7200000u);
  EXPECT_EQ(Ms("2H"), 7200000u);
  EXPECT_EQ(Ms("0"), 0u);
  EXPECT_EQ(Ms("007s"), 7000u);
  // Decimal fractions, as long as they come to whole milliseconds.
  EXPECT_EQ(Ms("1.5s"), 1500u);
  EXPECT_EQ(Ms("1.5"), 1500u);
  EXPECT_EQ(Ms("0.25s"), 250u);
  EXPECT_EQ(Ms("2.5m"), 150000u);
  EXPECT_EQ(Ms("0.001s"), 1u);
  EXPECT_EQ(Ms("1.250000000s"), 1250u);
}

TEST(ConfigShortcutsTest, DurationLimits) {
  // UINT32_MAX ms fits; one more does not.
  EXPECT_EQ(Ms("4294967295ms"), 4294967295u);
  EXPECT_THAT(DurationError("4294967296ms"), HasSubstr("too long"));
  EXPECT_EQ(Ms("1193h"), 1193u * 3600000u);
  EXPECT_THAT(DurationError("1194h"), HasSubstr("too long"));
  // Overflows uint64 while reading the digits.
  EXPECT_THAT(DurationError("99999999999999999999999s"),
              HasSubstr("bad duration"));
  // Overflows uint64 when scaled.
  EXPECT_THAT(DurationError("18446744073709551615h"), HasSubstr("too long"));
}

TEST(ConfigShortcutsTest, DurationGarbage) {
  EXPECT_THAT(DurationError(""), HasSubstr("bad duration"));
  EXPECT_THAT(DurationError("s"), HasSubstr("bad duration"));
  EXPECT_THAT(DurationError("-5s"), HasSubstr("bad duration"));
  EXPECT_THAT(DurationError(" 5s"), HasSubstr("bad duration"));
  EXPECT_THAT(DurationError(".5s"), HasSubstr("bad duration"));
  EXPECT_THAT(DurationError("1.s"), HasSubstr("bad duration"));
  EXPECT_THAT(DurationError("1.2.3s"), HasSubstr("bad"));
  EXPECT_THAT(DurationError("1.0000000001s"), HasSubstr("bad duration"));
  EXPECT_THAT(DurationError("1.5ms"), HasSubstr("not a whole number"));
  EXPECT_THAT(DurationError("0.0001s"), HasSubstr("not a whole number"));
  EXPECT_THAT(DurationError("10x"), HasSubstr("bad unit 'x'"));
  EXPECT_THAT(DurationError("10 s"), HasSubstr("bad unit"));
  EXPECT_THAT(DurationError("10sec"), HasSubstr("bad unit"));
}

TEST(ConfigShortcutsTest, SizeUnits) {
  EXPECT_EQ(Kb("64kb"), 64u);
  EXPECT_EQ(Kb("64k"), 64u);
  EXPECT_EQ(Kb("32mb"), 32768u);
  EXPECT_EQ(Kb("32MB"), 32768u);
  EXPECT_EQ(Kb("32m"), 32768u);
  EXPECT_EQ(Kb("2gb"), 2097152u);
  EXPECT_EQ(Kb("1G"), 1048576u);
}

TEST(ConfigShortcutsTest, SizeLimitsAndGarbage) {
  EXPECT_EQ(Kb("4294967295kb"), 4294967295u);
  EXPECT_THAT(SizeError("4294967296kb"), HasSubstr("too large"));
  EXPECT_EQ(Kb("4095gb"), 4095u * 1048576u);
  EXPECT_THAT(SizeError("4096gb"), HasSubstr("too large"));
  EXPECT_THAT(SizeError("0mb"), HasSubstr("zero"));
  EXPECT_THAT(SizeError("32"), HasSubstr("needs a unit"));
  EXPECT_THAT(SizeError("32tb"), HasSubstr("bad unit 'tb'"));
  EXPECT_THAT(SizeError("mb"), HasSubstr("bad size"));
  EXPECT_THAT(SizeError(""), HasSubstr("bad size"));
  EXPECT_THAT(SizeError("-1mb"), HasSubstr("bad size"));
}

TEST(ConfigShortcutsTest, FillPolicy) {
  TraceConfig::BufferConfig::FillPolicy policy =
      TraceConfig::BufferConfig::UNSPECIFIED;
  ASSERT_TRUE(ParseFillPolicy("discard", &policy).ok());
  EXPECT_EQ(policy, TraceConfig::BufferConfig::DISCARD);
  ASSERT_TRUE(ParseFillPolicy("ring", &policy).ok());
  EXPECT_EQ(policy, TraceConfig::BufferConfig::RING_BUFFER);
  base::Status bad = ParseFillPolicy("RING_BUFFER", &policy);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.message(), HasSubstr("ring or discard"));
}

TEST(ConfigShortcutsTest, Categories) {
  std::vector<std::string> categories;
  ASSERT_TRUE(ParseCategories({"a,b", "c", "a", "gfx*"}, &categories).ok());
  EXPECT_THAT(categories, ElementsAre("a", "b", "c", "gfx*"));
  ASSERT_TRUE(ParseCategories({}, &categories).ok());
  EXPECT_THAT(categories, ElementsAre("*"));
  for (const char* bad : {"a,,b", ",a", "a,", "", "a b", "a\tb"}) {
    base::Status status = ParseCategories({"ok", bad}, &categories);
    EXPECT_FALSE(status.ok()) << bad;
  }
}

TEST(ConfigShortcutsTest, DefaultConfig) {
  TraceConfig config;
  ASSERT_TRUE(BuildShortcutConfig(ConfigShortcuts(), &config).ok());
  ASSERT_EQ(config.buffers_size(), 1);
  EXPECT_EQ(config.buffers(0).size_kb(), 32768u);
  EXPECT_EQ(config.buffers(0).fill_policy(),
            TraceConfig::BufferConfig::RING_BUFFER);
  EXPECT_EQ(config.duration_ms(), 10000u);
  ASSERT_EQ(config.data_sources_size(), 1);
  const auto& source = config.data_sources(0).config();
  EXPECT_EQ(source.name(), "track_event");
  EXPECT_EQ(source.target_buffer(), 0u);
  EXPECT_THAT(source.track_event_config().enabled_categories(),
              ElementsAre("*"));
  EXPECT_THAT(source.track_event_config().disabled_categories(),
              ElementsAre("*"));
}

TEST(ConfigShortcutsTest, FullConfig) {
  ConfigShortcuts shortcuts;
  shortcuts.duration = "1m";
  shortcuts.buffer_size = "8mb";
  shortcuts.fill = "discard";
  shortcuts.category_args = {"gfx,input", "net"};
  TraceConfig config;
  config.set_write_into_file(true);  // cleared
  ASSERT_TRUE(BuildShortcutConfig(shortcuts, &config).ok());
  EXPECT_FALSE(config.has_write_into_file());
  EXPECT_EQ(config.buffers(0).size_kb(), 8192u);
  EXPECT_EQ(config.buffers(0).fill_policy(),
            TraceConfig::BufferConfig::DISCARD);
  EXPECT_EQ(config.duration_ms(), 60000u);
  EXPECT_THAT(
      config.data_sources(0).config().track_event_config().enabled_categories(),
      ElementsAre("gfx", "input", "net"));
  EXPECT_THAT(config.data_sources(0)
                  .config()
                  .track_event_config()
                  .disabled_categories(),
              ElementsAre("*"));
}

TEST(ConfigShortcutsTest, ZeroDurationTracesUntilStopped) {
  ConfigShortcuts shortcuts;
  shortcuts.duration = "0";
  TraceConfig config;
  ASSERT_TRUE(BuildShortcutConfig(shortcuts, &config).ok());
  EXPECT_FALSE(config.has_duration_ms());
}

TEST(ConfigShortcutsTest, EachBadShortcutFailsTheConfig) {
  TraceConfig config;
  ConfigShortcuts bad_time;
  bad_time.duration = "soon";
  EXPECT_THAT(BuildShortcutConfig(bad_time, &config).message(),
              HasSubstr("-t"));
  ConfigShortcuts bad_size;
  bad_size.buffer_size = "lots";
  EXPECT_THAT(BuildShortcutConfig(bad_size, &config).message(),
              HasSubstr("-b"));
  ConfigShortcuts bad_fill;
  bad_fill.fill = "wrap";
  EXPECT_THAT(BuildShortcutConfig(bad_fill, &config).message(),
              HasSubstr("--fill"));
  ConfigShortcuts bad_categories;
  bad_categories.category_args = {"a,,b"};
  EXPECT_THAT(BuildShortcutConfig(bad_categories, &config).message(),
              HasSubstr("a,,b"));
}

}  // namespace
}  // namespace cli
}  // namespace ringtrace
