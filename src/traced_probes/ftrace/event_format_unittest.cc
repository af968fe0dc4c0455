/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/ftrace/event_format.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/traced_probes/ftrace/test/format_texts.h"

namespace ringtrace {
namespace ftrace {
namespace {

using ::testing::HasSubstr;

EventFormat Parse(const std::string& text, const char* group = "g") {
  EventFormat f;
  base::Status s = ParseEventFormat(text, group, &f);
  EXPECT_TRUE(s.ok()) << s.message();
  return f;
}

std::string ErrorOf(const std::string& text) {
  EventFormat f;
  base::Status s = ParseEventFormat(text, "g", &f);
  EXPECT_FALSE(s.ok());
  return s.message();
}

// A format with one field line of the test's.
std::string WithField(const std::string& field_line) {
  return std::string("name: e\nID: 9\nformat:\n") +
         "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
         "\n\t" +
         field_line + "\n";
}

TEST(EventFormatTest, ParsesSchedSwitch) {
  const EventFormat f = Parse(test::kSchedSwitchFormat, "sched");
  EXPECT_EQ(f.group, "sched");
  EXPECT_EQ(f.name, "sched_switch");
  EXPECT_EQ(f.id, 372u);
  ASSERT_EQ(f.common_fields.size(), 4u);
  EXPECT_EQ(f.common_fields[0].name, "common_type");
  EXPECT_EQ(f.common_fields[3].name, "common_pid");
  EXPECT_EQ(f.common_fields[3].offset, 4u);
  EXPECT_TRUE(f.common_fields[3].is_signed);
  ASSERT_EQ(f.fields.size(), 7u);
  const FormatField& comm = f.fields[0];
  EXPECT_EQ(comm.name, "prev_comm");
  EXPECT_EQ(comm.type, "char[16]");
  EXPECT_EQ(comm.offset, 8u);
  EXPECT_EQ(comm.size, 16u);
  EXPECT_EQ(comm.kind, FieldKind::kFixedString);
  const FormatField* state = f.FindField("prev_state");
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(state->type, "long");
  EXPECT_EQ(state->offset, 32u);
  EXPECT_EQ(state->size, 8u);
  EXPECT_TRUE(state->is_signed);
  EXPECT_EQ(state->kind, FieldKind::kInt);
  EXPECT_EQ(f.FindField("next_prio")->offset, 60u);
  EXPECT_EQ(f.FindField("common_flags")->size, 1u);
  EXPECT_EQ(f.FindField("nope"), nullptr);
}

TEST(EventFormatTest, StringKinds) {
  const EventFormat fork = Parse(test::kSchedProcessForkFormat, "sched");
  EXPECT_EQ(fork.FindField("parent_comm")->kind, FieldKind::kDataLoc);
  EXPECT_EQ(fork.FindField("parent_comm")->type, "__data_loc char[]");
  EXPECT_EQ(fork.FindField("child_pid")->kind, FieldKind::kInt);
  const EventFormat print = Parse(test::kPrintFormat, "ftrace");
  EXPECT_EQ(print.id, 5u);
  EXPECT_EQ(print.FindField("buf")->kind, FieldKind::kTailString);
  EXPECT_EQ(print.FindField("buf")->offset, 16u);
  EXPECT_EQ(print.FindField("ip")->kind, FieldKind::kInt);
  EXPECT_FALSE(print.FindField("ip")->is_signed);
  const EventFormat rel = Parse(
      WithField("field:__rel_loc char[] msg;\toffset:8;\tsize:4;\tsigned:0;"));
  EXPECT_EQ(rel.FindField("msg")->kind, FieldKind::kRelLoc);
}

TEST(EventFormatTest, ShapesThatAreNotOneValueAreOther) {
  EXPECT_EQ(Parse(WithField("field:unsigned long caller[4];\toffset:8;\tsize:"
                            "32;\tsigned:0;"))
                .FindField("caller")
                ->kind,
            FieldKind::kOther);
  EXPECT_EQ(Parse(WithField("field:__data_loc u8[] buf;\toffset:8;\tsize:4;"
                            "\tsigned:0;"))
                .FindField("buf")
                ->kind,
            FieldKind::kOther);
  EXPECT_EQ(Parse(WithField("field:__data_loc char[] s;\toffset:8;\tsize:8;"
                            "\tsigned:0;"))
                .FindField("s")
                ->kind,
            FieldKind::kOther);
  EXPECT_EQ(Parse(WithField("field:u8 odd;\toffset:8;\tsize:3;\tsigned:0;"))
                .FindField("odd")
                ->kind,
            FieldKind::kOther);
  EXPECT_EQ(Parse(WithField("field:unsigned char mac[6];\toffset:8;\tsize:6;"
                            "\tsigned:0;"))
                .FindField("mac")
                ->kind,
            FieldKind::kOther);
  // A pointer is an integer of its size.
  const EventFormat ptr = Parse(
      WithField("field:const char * fmt;\toffset:8;\tsize:8;\tsigned:0;"));
  EXPECT_EQ(ptr.FindField("fmt")->kind, FieldKind::kInt);
  EXPECT_EQ(ptr.FindField("fmt")->type, "const char *");
}

TEST(EventFormatTest, StopsAtPrintFmt) {
  const EventFormat f =
      Parse(std::string(test::kSchedSwitchFormat) + test::kPrintFmtTail);
  EXPECT_EQ(f.fields.size(), 7u);
  EXPECT_EQ(f.FindField("bogus"), nullptr);
}

TEST(EventFormatTest, SignedIsOptionalAndUnknownPartsAreSkipped) {
  const EventFormat f =
      Parse(WithField("field:int x;\toffset:8;\tsize:4;\tfuture:7;"));
  EXPECT_EQ(f.FindField("x")->size, 4u);
  EXPECT_FALSE(f.FindField("x")->is_signed);
}

TEST(EventFormatTest, MalformedFilesAreErrorsNamingTheLine) {
  EXPECT_THAT(ErrorOf("ID: 5\nformat:\n"), HasSubstr("no \"name:\""));
  EXPECT_THAT(ErrorOf("name: e\nformat:\n"), HasSubstr("no \"ID:\""));
  EXPECT_THAT(ErrorOf("name: e\nID: 5\n"), HasSubstr("no \"format:\""));
  EXPECT_THAT(ErrorOf("name: e\nID: x5\nformat:\n"), HasSubstr("line 2"));
  EXPECT_THAT(ErrorOf("name: e\nID: 65536\nformat:\n"), HasSubstr("65535"));
  EXPECT_THAT(ErrorOf("name: e\nID: 99999999999999999999999\nformat:\n"),
              HasSubstr("line 2"));
  EXPECT_THAT(ErrorOf("name: e f\nID: 1\nformat:\n"),
              HasSubstr("invalid event name"));
  EXPECT_THAT(ErrorOf("name: e\nID: 1\n\tfield:int x;\toffset:0;\tsize:4;\n"),
              HasSubstr("before \"format:\""));
  // Field lines: missing parts, bad numbers, out of bounds, bad names.
  for (const char* bad : {
           "field:int x;\tsize:4;",
           "field:int x;\toffset:8;",
           "field:int x;\toffset:-8;\tsize:4;",
           "field:int x;\toffset:8;\tsize:4x;",
           "field:int x;\toffset:70000;\tsize:4;",
           "field:int x;\toffset:65534;\tsize:4;",
           "field:int x;\toffset:8;\tsize:4;\tsigned:2;",
           "field:x;\toffset:8;\tsize:4;",
           "field:int 9x;\toffset:8;\tsize:4;",
           "field:int x];\toffset:8;\tsize:4;",
           "field:;\toffset:8;\tsize:4;",
       }) {
    EXPECT_THAT(ErrorOf(WithField(bad)), HasSubstr("line 6")) << bad;
  }
}

TEST(EventFormatTest, BoundsOnLinesAndFields) {
  std::string many_fields = "name: e\nID: 1\nformat:\n";
  for (size_t i = 0; i <= kMaxFormatFields; i++)
    many_fields += "\tfield:int f" + std::to_string(i) +
                   ";\toffset:0;\tsize:4;\tsigned:1;\n";
  EXPECT_THAT(ErrorOf(many_fields), HasSubstr("too many fields"));
  std::string many_lines = "name: e\nID: 1\nformat:\n";
  many_lines.append(kMaxFormatLines, '\n');
  EXPECT_THAT(ErrorOf(many_lines), HasSubstr("more than"));
  std::string long_name =
      "name: " + std::string(kMaxNameLength + 1, 'a') + "\nID: 1\nformat:\n";
  EXPECT_THAT(ErrorOf(long_name), HasSubstr("invalid event name"));
}

// Every prefix of a real format either fails or parses into fields that
// agree with the whole file's (all but the last, whose line may be cut in
// a number); none crashes.
TEST(EventFormatTest, EveryTruncationIsSafe) {
  const std::string full_text = test::kSchedSwitchFormat;
  const EventFormat full = Parse(full_text);
  size_t parsed = 0;
  for (size_t n = 0; n <= full_text.size(); n++) {
    EventFormat f;
    if (!ParseEventFormat(full_text.substr(0, n), "g", &f).ok())
      continue;
    parsed++;
    ASSERT_LE(f.fields.size(), full.fields.size());
    for (size_t i = 0; i + 1 < f.fields.size(); i++) {
      EXPECT_EQ(f.fields[i].name, full.fields[i].name);
      EXPECT_EQ(f.fields[i].offset, full.fields[i].offset);
      EXPECT_EQ(f.fields[i].size, full.fields[i].size);
    }
  }
  EXPECT_GT(parsed, 0u);
}

TEST(EventFormatTest, HeaderPage64) {
  HeaderPage h;
  base::Status s = ParseHeaderPage(test::kHeaderPage64, &h);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(h.timestamp_offset, 0u);
  EXPECT_EQ(h.timestamp_size, 8u);
  EXPECT_EQ(h.commit_offset, 8u);
  EXPECT_EQ(h.commit_size, 8u);
  EXPECT_EQ(h.data_offset, 16u);
  EXPECT_EQ(h.data_size, 4080u);
}

TEST(EventFormatTest, HeaderPage32) {
  HeaderPage h;
  base::Status s = ParseHeaderPage(
      "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
      "\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n"
      "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
      "\tfield: char data;\toffset:12;\tsize:4084;\tsigned:1;\n",
      &h);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(h.commit_size, 4u);
  EXPECT_EQ(h.data_offset, 12u);
}

TEST(EventFormatTest, HeaderPageRejectsImpossibleLayouts) {
  auto error_of = [](const char* commit_line, const char* data_line) {
    const std::string text =
        std::string(
            "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n") +
        commit_line + data_line;
    HeaderPage h;
    base::Status s = ParseHeaderPage(text, &h);
    EXPECT_FALSE(s.ok()) << commit_line << data_line;
    return s.message();
  };
  const char* kData = "\tfield: char data;\toffset:16;\tsize:4080;\n";
  EXPECT_THAT(error_of("\tfield: local_t commit;\toffset:8;\tsize:2;\n", kData),
              HasSubstr("not 4 or 8"));
  EXPECT_THAT(error_of("\tfield: local_t commit;\toffset:4;\tsize:8;\n", kData),
              HasSubstr("overlap"));
  EXPECT_THAT(error_of("\tfield: local_t commit;\toffset:8;\tsize:8;\n",
                       "\tfield: char data;\toffset:12;\tsize:4080;\n"),
              HasSubstr("overlap"));
  EXPECT_THAT(error_of("\tfield: local_t commit;\toffset:8;\tsize:8;\n", ""),
              HasSubstr("missing the data"));
  EXPECT_THAT(error_of("\tfield: local_t commit;\toffset:8;\tsize:8;\n",
                       "\tfield: char data;\toffset:16;\tsize:0;\n"),
              HasSubstr("empty"));
  HeaderPage h;
  EXPECT_THAT(ParseHeaderPage("\tfield: u64 timestamp;\toffset:0;\tsize:4;\n"
                              "\tfield: long commit;\toffset:8;\tsize:8;\n"
                              "\tfield: char data;\toffset:16;\tsize:8;\n",
                              &h)
                  .message(),
              HasSubstr("not 8"));
  EXPECT_THAT(
      ParseHeaderPage("\tfield: u64 timestamp;\toffset:zero;\n", &h).message(),
      HasSubstr("line 1"));
}

TEST(EventFormatTableTest, AddFindAndRefusals) {
  EventFormatTable table;
  ASSERT_TRUE(table.Add(Parse(test::kSchedSwitchFormat, "sched")).ok());
  ASSERT_TRUE(table.Add(Parse(test::kPrintFormat, "ftrace")).ok());
  EXPECT_EQ(table.size(), 2u);
  ASSERT_NE(table.Find(372), nullptr);
  EXPECT_EQ(table.Find(372)->name, "sched_switch");
  EXPECT_EQ(table.Find(5)->name, "print");
  EXPECT_EQ(table.Find(6), nullptr);
  EXPECT_EQ(table.Find(100000), nullptr);
  EXPECT_EQ(table.FindByName("ftrace", "print"), table.Find(5));
  EXPECT_EQ(table.FindByName("sched", "print"), nullptr);

  // The same ID twice.
  EventFormat again = Parse(test::kSchedWakingFormat, "sched");
  again.id = 5;
  EXPECT_THAT(table.Add(std::move(again)).message(),
              HasSubstr("already taken by ftrace/print"));
  // No common_type.
  EventFormat bare = Parse(
      "name: bare\nID: 7\nformat:\n"
      "\tfield:int x;\toffset:0;\tsize:4;\tsigned:1;\n");
  EXPECT_THAT(table.Add(std::move(bare)).message(), HasSubstr("common_type"));
  EXPECT_EQ(table.size(), 2u);
}

}  // namespace
}  // namespace ftrace
}  // namespace ringtrace
