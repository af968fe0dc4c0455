/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Naming rules of the rtzero code generator (protoc-gen-ringtrace), kept apart
// from libprotoc so that they can be unit-tested without it. docs/encoding.md
// lists the rules for users; this file is their single implementation.
//
//   proto file   a/b/foo.proto           header  a/b/foo.rtzero.h
//   package      perfetto.protos         C++     ::perfetto::protos::rtzero
//   message      TracePacket             class   TracePacket
//   nested       ClockSnapshot.Clock     class   ClockSnapshot_Clock (and the
//                                                alias ClockSnapshot::Clock)
//   field        flow_ids = 47           kFlowIdsFieldNumber = 47
//   enum value   a C++ keyword, e.g. delete   delete_

#ifndef SRC_TOOLS_PROTOC_GEN_RINGTRACE_NAMES_H_
#define SRC_TOOLS_PROTOC_GEN_RINGTRACE_NAMES_H_

#include <string>
#include <vector>

namespace ringtrace {
namespace protoc_gen {

// "a/b/foo.proto" -> "a/b/foo.rtzero.h" (any other name: ".rtzero.h" added).
std::string HeaderPathFor(const std::string& proto_path);

// "a/b/foo.rtzero.h" -> "A_B_FOO_RTZERO_H_" (every character outside
// [A-Za-z0-9] becomes '_').
std::string IncludeGuardFor(const std::string& header_path);

// "flow_ids" -> "FlowIds", "uint64_x2" -> "Uint64X2", "fooBar" -> "FooBar".
// Underscores are dropped and the character after each one is upper-cased,
// as is the first character.
std::string CamelCase(const std::string& snake);

// The C++ namespaces of the generated code of |package|: "perfetto.protos"
// -> {"perfetto", "protos", "rtzero"}; "" -> {"rtzero"}.
std::vector<std::string> NamespacesFor(const std::string& package);

// The namespace-scope name of a message or enum: its full name without the
// package, with '.' replaced by '_': ("perfetto.protos.ClockSnapshot.Clock",
// "perfetto.protos") -> "ClockSnapshot_Clock".
std::string FlatName(const std::string& full_name, const std::string& package);

// The fully qualified C++ name:
// "::perfetto::protos::rtzero::ClockSnapshot_Clock".
std::string QualifiedName(const std::string& full_name,
                          const std::string& package);

// True for C++17 keywords and alternative tokens.
bool IsCppKeyword(const std::string& name);

// An enum value name usable as a C++ enumerator (keywords get a trailing '_').
std::string EnumeratorName(const std::string& value_name);

}  // namespace protoc_gen
}  // namespace ringtrace

#endif  // SRC_TOOLS_PROTOC_GEN_RINGTRACE_NAMES_H_
