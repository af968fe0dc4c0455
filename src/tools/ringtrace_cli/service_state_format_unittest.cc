/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/service_state_format.h"

#include <gtest/gtest.h>

namespace ringtrace {
namespace cli {
namespace {

using ringtrace::protos::ServiceState;

// How the progress line names session |id|: the word and the id.
std::string Session(uint64_t id) {
  return std::string("session") + " " + std::to_string(id);
}

TEST(ServiceStateFormatTest, TextTableAligns) {
  TextTable table({"ID", "NAME", "X"});
  table.AddRow({"1", "long name", ""});
  table.AddRow({"22", "n"});  // padded
  table.AddRow({"3", "a", "b", "cut"});
  EXPECT_EQ(table.Render(),
            "ID  NAME       X\n"
            "1   long name\n"
            "22  n\n"
            "3   a          b\n");
}

TEST(ServiceStateFormatTest, Sanitize) {
  EXPECT_EQ(Sanitize("app"), "app");
  EXPECT_EQ(Sanitize(""), "-");
  EXPECT_EQ(Sanitize("a\x1b[2Jb\n\xc3\xa9"), "a?[2Jb???");
}

TEST(ServiceStateFormatTest, Bytes) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.0 KiB");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(32u << 20), "32.0 MiB");
  EXPECT_EQ(FormatBytes((1u << 20) - 1), "1023.9 KiB");
  EXPECT_EQ(FormatBytes(3ull << 30), "3.0 GiB");
  EXPECT_EQ(FormatBytes(UINT64_MAX), "16777215.9 TiB");
}

TEST(ServiceStateFormatTest, Durations) {
  EXPECT_EQ(FormatDurationMs(0), "0.0s");
  EXPECT_EQ(FormatDurationMs(1234), "1.2s");
  EXPECT_EQ(FormatDurationMs(59999), "59.9s");
  EXPECT_EQ(FormatDurationMs(83000), "1m23s");
  EXPECT_EQ(FormatDurationMs(7384000), "2h03m");
}

ServiceState ExampleState() {
  ServiceState state;
  auto* p = state.add_producers();
  p->set_id(1);
  p->set_name("example_app");
  p->set_pid(1234);
  p->set_uid(1000);
  p->set_ring_bytes(1 << 20);
  p->add_data_sources("track_event");
  p->add_data_sources("custom");
  auto* q = state.add_producers();
  q->set_id(12);
  q->set_name("x\x07");
  q->set_pid(99);
  q->set_uid(0);
  q->set_ring_bytes(65536);
  auto* s = state.add_sessions();
  s->set_id(3);
  s->set_consumer_uid(1000);
  s->set_state("started");
  s->set_elapsed_ms(12345);
  s->set_num_data_source_instances(2);
  s->set_packets_lost(7);
  auto* b1 = s->add_buffers();
  b1->set_id(1);
  b1->set_size_bytes(32u << 20);
  b1->set_used_bytes(1u << 20);
  b1->set_fill_policy(perfetto::protos::TraceConfig::BufferConfig::RING_BUFFER);
  auto* b2 = s->add_buffers();
  b2->set_id(2);
  b2->set_size_bytes(4u << 20);
  b2->set_used_bytes(4u << 20);
  b2->set_fill_policy(perfetto::protos::TraceConfig::BufferConfig::DISCARD);
  state.set_max_sessions(8);
  state.set_max_total_buffer_bytes(1ull << 30);
  state.set_max_producers(64);
  return state;
}

TEST(ServiceStateFormatTest, Query) {
  EXPECT_EQ(
      FormatServiceState(ExampleState()),
      "Producers (2):\n"
      "ID  NAME         PID   UID   RING      DATA SOURCES\n"
      "1   example_app  1234  1000  1.0 MiB   track_event,custom\n"
      "12  x?           99    0     64.0 KiB  -\n"
      "\n"
      "Sessions (1):\n"
      "ID  NAME  CONSUMER UID  STATE    ELAPSED  INSTANCES  PACKETS LOST\n"
      "3   -     1000          started  12.3s    2          7\n"
      "\n"
      "Buffers:\n"
      "SESSION  BUFFER  FILL                    POLICY\n"
      "3        1       1.0 MiB/32.0 MiB (3%)   ring\n"
      "3        2       4.0 MiB/4.0 MiB (100%)  discard\n"
      "\n"
      "Limits: 8 sessions, 1.0 GiB of buffers, 64 producers\n");
}

TEST(ServiceStateFormatTest, QueryWithDeclaredCategories) {
  ServiceState state = ExampleState();
  state.mutable_sessions()->Clear();
  auto* list = state.mutable_producers(0)->add_categories();
  list->set_data_source("track_event");
  auto* gfx = list->add_categories();
  gfx->set_name("gfx");
  gfx->set_description("Frames\x1b[0m");
  auto* slow = list->add_categories();
  slow->set_name("gfx.debug");
  slow->add_tags("debug");
  slow->add_tags("slow");
  auto* other = state.mutable_producers(1)->add_categories();
  other->set_data_source("custom");
  other->add_categories()->set_name("c\n");
  EXPECT_EQ(FormatServiceState(state),
            "Producers (2):\n"
            "ID  NAME         PID   UID   RING      DATA SOURCES\n"
            "1   example_app  1234  1000  1.0 MiB   track_event,custom\n"
            "12  x?           99    0     64.0 KiB  -\n"
            "\n"
            "Categories (3):\n"
            "PRODUCER  DATA SOURCE  CATEGORY   TAGS        DESCRIPTION\n"
            "1         track_event  gfx        -           Frames?[0m\n"
            "1         track_event  gfx.debug  debug,slow  -\n"
            "12        custom       c?         -           -\n"
            "\n"
            "Sessions: none\n"
            "\n"
            "Limits: 8 sessions, 1.0 GiB of buffers, 64 producers\n");

  state.set_categories_omitted(40);
  EXPECT_NE(FormatServiceState(state).find(
                "12        custom       c?         -           -\n"
                "(40 more left out: the service's answer has room for no "
                "more)\n"),
            std::string::npos)
      << FormatServiceState(state);
}

TEST(ServiceStateFormatTest, QueryEmpty) {
  ServiceState state;
  state.set_max_sessions(8);
  state.set_max_total_buffer_bytes(1ull << 30);
  state.set_max_producers(64);
  EXPECT_EQ(FormatServiceState(state),
            "Producers: none\n"
            "\n"
            "Sessions: none\n"
            "\n"
            "Limits: 8 sessions, 1.0 GiB of buffers, 64 producers\n");
}

TEST(ServiceStateFormatTest, ProgressLine) {
  const ServiceState state = ExampleState();
  EXPECT_EQ(FormatProgressLine(state, 3),
            Session(3) +
                "  12.3s  buffer 5.0 MiB/36.0 MiB (13%)  2 producers  2 "
                "instances  7 packets lost");
  EXPECT_EQ(FormatProgressLine(state, 4), Session(4) + ": not found");
}

TEST(ServiceStateFormatTest, ProgressLineSaturates) {
  ServiceState state;
  auto* s = state.add_sessions();
  s->set_id(1);
  for (int i = 0; i < 2; i++) {
    auto* b = s->add_buffers();
    b->set_size_bytes(UINT64_MAX - 1);
    b->set_used_bytes(UINT64_MAX / 2 + 1);
  }
  EXPECT_EQ(FormatProgressLine(state, 1),
            Session(1) +
                "  0.0s  buffer 16777215.9 TiB/16777215.9 TiB (100%)  0 "
                "producers  0 instances  0 packets lost");
}

}  // namespace
}  // namespace cli
}  // namespace ringtrace
