/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/protoc_gen_ringtrace/names.h"

#include <gtest/gtest.h>

namespace ringtrace {
namespace protoc_gen {
namespace {

TEST(ProtocGenNamesTest, HeaderPathAndGuard) {
  EXPECT_EQ(HeaderPathFor("protos/perfetto/trace/trace_packet.proto"),
            "protos/perfetto/trace/trace_packet.rtzero.h");
  EXPECT_EQ(HeaderPathFor("odd.name"), "odd.name.rtzero.h");
  EXPECT_EQ(IncludeGuardFor("protos/a-b/c.rtzero.h"), "PROTOS_A_B_C_RTZERO_H_");
}

TEST(ProtocGenNamesTest, CamelCase) {
  EXPECT_EQ(CamelCase("flow_ids"), "FlowIds");
  EXPECT_EQ(CamelCase("uint64_x2"), "Uint64X2");
  EXPECT_EQ(CamelCase("fooBar"), "FooBar");
  EXPECT_EQ(CamelCase("_leading__double_"), "LeadingDouble");
  EXPECT_EQ(CamelCase("x"), "X");
}

TEST(ProtocGenNamesTest, NamespacesAndNames) {
  EXPECT_EQ(NamespacesFor("perfetto.protos"),
            (std::vector<std::string>{"perfetto", "protos", "rtzero"}));
  EXPECT_EQ(NamespacesFor(""), (std::vector<std::string>{"rtzero"}));
  EXPECT_EQ(FlatName("perfetto.protos.ClockSnapshot.Clock", "perfetto.protos"),
            "ClockSnapshot_Clock");
  EXPECT_EQ(FlatName("Top.Nested", ""), "Top_Nested");
  // A package that is only a prefix of a name component is not stripped.
  EXPECT_EQ(FlatName("perfetto.protosx.A", "perfetto.protos"),
            "perfetto_protosx_A");
  EXPECT_EQ(QualifiedName("perfetto.protos.TrackEvent.Type", "perfetto.protos"),
            "::perfetto::protos::rtzero::TrackEvent_Type");
}

TEST(ProtocGenNamesTest, KeywordsGetAnUnderscore) {
  EXPECT_TRUE(IsCppKeyword("delete"));
  EXPECT_TRUE(IsCppKeyword("alignas"));
  EXPECT_TRUE(IsCppKeyword("xor_eq"));
  EXPECT_FALSE(IsCppKeyword("DELETE"));
  EXPECT_FALSE(IsCppKeyword("deletes"));
  EXPECT_EQ(EnumeratorName("class"), "class_");
  EXPECT_EQ(EnumeratorName("COLOR_RED"), "COLOR_RED");
}

}  // namespace
}  // namespace protoc_gen
}  // namespace ringtrace
