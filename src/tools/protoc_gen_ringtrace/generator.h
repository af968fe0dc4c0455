/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// RtzeroGenerator: the protoc plugin (protoc-gen-ringtrace) that turns every
// message of a .proto file into a typed writer over the group encoding of
// encoding::Message (include/ringtrace/message.h). For
// a/b/foo.proto it writes a/b/foo.rtzero.h; what that header contains, the
// naming rules and the supported field kinds are in docs/encoding.md and in
// include/ringtrace/typed_message.h.
//
// Rejected with an error (protoc then fails the build): proto2 group fields
// (the ungrouper would turn them into length-delimited messages on readback,
// so they cannot be written faithfully), and two fields of one message whose
// field-number constants would have the same name.
//
// Extensions: a message M that declares `extend X { ... }` becomes X's
// writer plus the extension fields (class M derives from X's class), as
// protozero does for TrackEvent extensions; M has no fields of its own and
// extends one message. File-scope extensions are rejected (they would have
// no class to live in).

#ifndef SRC_TOOLS_PROTOC_GEN_RINGTRACE_GENERATOR_H_
#define SRC_TOOLS_PROTOC_GEN_RINGTRACE_GENERATOR_H_

#include <google/protobuf/compiler/code_generator.h>

#include <stdint.h>

#include <string>

namespace ringtrace {
namespace protoc_gen {

class RtzeroGenerator : public google::protobuf::compiler::CodeGenerator {
 public:
  bool Generate(const google::protobuf::FileDescriptor* file,
                const std::string& parameter,
                google::protobuf::compiler::GeneratorContext* context,
                std::string* error) const override;

  uint64_t GetSupportedFeatures() const override {
    return FEATURE_PROTO3_OPTIONAL;
  }
};

}  // namespace protoc_gen
}  // namespace ringtrace

#endif  // SRC_TOOLS_PROTOC_GEN_RINGTRACE_GENERATOR_H_
