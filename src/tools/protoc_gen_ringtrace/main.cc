/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// protoc-gen-ringtrace: run by protoc as
//   protoc --plugin=protoc-gen-ringtrace=PATH --ringtrace_out=DIR foo.proto
// (gn/proto_library.gni does it for targets with generate_rtzero = true).

#include <google/protobuf/compiler/plugin.h>

#include "src/tools/protoc_gen_ringtrace/generator.h"

int main(int argc, char** argv) {
  ringtrace::protoc_gen::RtzeroGenerator generator;
  return google::protobuf::compiler::PluginMain(argc, argv, &generator);
}
