/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/protoc_gen_ringtrace/generator.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/printer.h>
#include <google/protobuf/io/zero_copy_stream.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "src/tools/protoc_gen_ringtrace/names.h"

namespace ringtrace {
namespace protoc_gen {

namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::FileDescriptor;

// How one scalar proto type is written: the C++ parameter type (empty for
// enums: the enum's own type), the Message appender and the conversion of
// the value for it.
struct ScalarKind {
  const char* cpp_type;
  const char* append;
  const char* cast;  // "" or e.g. "static_cast<uint32_t>"
};

ScalarKind ScalarKindOf(FieldDescriptor::Type type) {
  switch (type) {
    case FieldDescriptor::TYPE_DOUBLE:
      return {"double", "AppendDouble", ""};
    case FieldDescriptor::TYPE_FLOAT:
      return {"float", "AppendFloat", ""};
    case FieldDescriptor::TYPE_INT64:
      return {"int64_t", "AppendVarInt", ""};
    case FieldDescriptor::TYPE_UINT64:
      return {"uint64_t", "AppendVarInt", ""};
    case FieldDescriptor::TYPE_INT32:
      return {"int32_t", "AppendVarInt", ""};
    case FieldDescriptor::TYPE_FIXED64:
      return {"uint64_t", "AppendFixed64", ""};
    case FieldDescriptor::TYPE_FIXED32:
      return {"uint32_t", "AppendFixed32", ""};
    case FieldDescriptor::TYPE_BOOL:
      return {"bool", "AppendVarInt", ""};
    case FieldDescriptor::TYPE_UINT32:
      return {"uint32_t", "AppendVarInt", ""};
    case FieldDescriptor::TYPE_SFIXED32:
      return {"int32_t", "AppendFixed32", "static_cast<uint32_t>"};
    case FieldDescriptor::TYPE_SFIXED64:
      return {"int64_t", "AppendFixed64", "static_cast<uint64_t>"};
    case FieldDescriptor::TYPE_SINT32:
      // Zigzag of the sign-extended value equals zigzag32 for every int32.
      return {"int32_t", "AppendSignedVarInt", ""};
    case FieldDescriptor::TYPE_SINT64:
      return {"int64_t", "AppendSignedVarInt", ""};
    case FieldDescriptor::TYPE_ENUM:
      // Enums are int32 on the wire: negative values take 10 bytes.
      return {"", "AppendVarInt", "static_cast<int32_t>"};
    default:
      return {"", "", ""};
  }
}

bool IsVarIntType(FieldDescriptor::Type type) {
  switch (type) {
    case FieldDescriptor::TYPE_INT32:
    case FieldDescriptor::TYPE_INT64:
    case FieldDescriptor::TYPE_UINT32:
    case FieldDescriptor::TYPE_UINT64:
    case FieldDescriptor::TYPE_BOOL:
    case FieldDescriptor::TYPE_ENUM:
      return true;
    default:
      return false;
  }
}

bool IsZigZagType(FieldDescriptor::Type type) {
  return type == FieldDescriptor::TYPE_SINT32 ||
         type == FieldDescriptor::TYPE_SINT64;
}

const char* LabelName(const FieldDescriptor* field) {
  if (field->is_repeated())
    return "repeated";
  if (field->is_required())
    return "required";
  return "optional";
}

// Emits the header of one .proto file.
class FileGenerator {
 public:
  explicit FileGenerator(const FileDescriptor* file)
      : file_(file), package_(file->package()) {
    for (int i = 0; i < file->enum_type_count(); i++)
      enums_.push_back(file->enum_type(i));
    for (int i = 0; i < file->message_type_count(); i++)
      CollectMessage(file->message_type(i));
  }

  bool Generate(std::string* out, std::string* error) {
    if (file_->extension_count() > 0) {
      *error = file_->extension(0)->full_name() +
               ": protoc-gen-ringtrace generates extensions declared inside "
               "a message (message MyPacket { extend "
               "perfetto.protos.TracePacket { ... } }), whose writer is that "
               "message's class; declare this one so";
      return false;
    }
    for (const Descriptor* message : messages_) {
      if (!CheckMessage(message, error) || !CheckExtensions(message, error))
        return false;
    }
    out_ = out;
    EmitPrologue();
    EmitEnums();
    Emit("\n// Writers, declared first: a writer may return any other.\n");
    for (const Descriptor* message : messages_)
      Emit("class " + Flat(message->full_name()) + ";\n");
    for (const Descriptor* message : messages_)
      EmitClass(message);
    EmitOutOfClassDefinitions();
    EmitEpilogue();
    return true;
  }

 private:
  void CollectMessage(const Descriptor* message) {
    messages_.push_back(message);
    for (int i = 0; i < message->enum_type_count(); i++)
      enums_.push_back(message->enum_type(i));
    for (int i = 0; i < message->nested_type_count(); i++)
      CollectMessage(message->nested_type(i));
  }

  bool CheckMessage(const Descriptor* message, std::string* error) {
    std::map<std::string, const FieldDescriptor*> constants;
    for (int i = 0; i < message->field_count(); i++) {
      const FieldDescriptor* field = message->field(i);
      if (field->type() == FieldDescriptor::TYPE_GROUP) {
        *error = field->full_name() +
                 ": group fields are not supported by protoc-gen-ringtrace "
                 "(nested messages are already written as groups and turned "
                 "into length-delimited fields on readback)";
        return false;
      }
      const std::string constant = ConstantName(field);
      auto inserted = constants.emplace(constant, field);
      if (!inserted.second) {
        *error = field->full_name() + " and " +
                 inserted.first->second->full_name() +
                 " both map to the constant " + constant;
        return false;
      }
    }
    return true;
  }

  // A message that declares extensions becomes the writer of the message
  // they extend, plus the extension fields: it derives from that writer,
  // so it needs no fields of its own and all its extensions must extend
  // the same message, whose writer must be declared before it.
  bool CheckExtensions(const Descriptor* message, std::string* error) {
    if (message->extension_count() == 0)
      return true;
    const Descriptor* extended = message->extension(0)->containing_type();
    if (message->field_count() > 0) {
      *error = message->full_name() +
               ": a message that declares extensions may have no fields of "
               "its own (its writer is the writer of " +
               extended->full_name() + " plus the extensions)";
      return false;
    }
    std::map<std::string, const FieldDescriptor*> constants;
    for (int i = 0; i < message->extension_count(); i++) {
      const FieldDescriptor* field = message->extension(i);
      if (field->containing_type() != extended) {
        *error = message->full_name() + ": extends both " +
                 extended->full_name() + " and " +
                 field->containing_type()->full_name() +
                 "; declare each in a message of its own";
        return false;
      }
      if (field->type() == FieldDescriptor::TYPE_GROUP) {
        *error = field->full_name() +
                 ": group fields are not supported by protoc-gen-ringtrace";
        return false;
      }
      auto inserted = constants.emplace(ConstantName(field), field);
      if (!inserted.second) {
        *error = field->full_name() + " and " +
                 inserted.first->second->full_name() +
                 " both map to the constant " + inserted.first->first;
        return false;
      }
    }
    if (extended->file() == file_) {
      const auto base = std::find(messages_.begin(), messages_.end(), extended);
      const auto self = std::find(messages_.begin(), messages_.end(), message);
      if (base > self) {
        *error = message->full_name() + " extends " + extended->full_name() +
                 ", which is declared after it in the same file; declare "
                 "it first";
        return false;
      }
    }
    return true;
  }

  static std::string ConstantName(const FieldDescriptor* field) {
    return "k" + CamelCase(field->name()) + "FieldNumber";
  }

  std::string Flat(const std::string& full_name) const {
    return FlatName(full_name, package_);
  }

  // Always fully qualified: a nested alias of the class being written could
  // otherwise shadow a namespace-scope name.
  static std::string Qualified(const Descriptor* message) {
    return QualifiedName(message->full_name(), message->file()->package());
  }
  static std::string Qualified(const EnumDescriptor* e) {
    return QualifiedName(e->full_name(), e->file()->package());
  }

  void Emit(const std::string& text) { *out_ += text; }

  void EmitPrologue() {
    const std::string header = HeaderPathFor(file_->name());
    const std::string guard = IncludeGuardFor(header);
    Emit("// Generated by protoc-gen-ringtrace from " + file_->name() +
         ". Do not edit.\n"
         "//\n"
         "// Typed writers over the group encoding of encoding::Message: one\n"
         "// class per message, one inline call to a Message appender per\n"
         "// setter. See docs/encoding.md.\n\n"
         "#ifndef " +
         guard + "\n#define " + guard +
         "\n\n"
         "#include <stddef.h>\n"
         "#include <stdint.h>\n\n"
         "#include <string_view>\n\n");
    std::vector<std::string> includes = {
        "ringtrace/packed_repeated.h",
        "ringtrace/typed_message.h",
    };
    for (int i = 0; i < file_->dependency_count(); i++)
      includes.push_back(HeaderPathFor(file_->dependency(i)->name()));
    for (const std::string& include : includes)
      Emit("#include \"" + include + "\"\n");
    Emit("\n");
    for (const std::string& ns : NamespacesFor(package_))
      Emit("namespace " + ns + " {\n");
  }

  void EmitEpilogue() {
    const std::vector<std::string> namespaces = NamespacesFor(package_);
    Emit("\n");
    for (auto it = namespaces.rbegin(); it != namespaces.rend(); ++it)
      Emit("}  // namespace " + *it + "\n");
    Emit("\n#endif  // " + IncludeGuardFor(HeaderPathFor(file_->name())) +
         "\n");
  }

  void EmitEnums() {
    for (const EnumDescriptor* e : enums_) {
      Emit("\n// " + e->full_name() + "\n");
      Emit("enum class " + Flat(e->full_name()) + " : int32_t {\n");
      for (int i = 0; i < e->value_count(); i++) {
        Emit("  " + EnumeratorName(e->value(i)->name()) + " = " +
             std::to_string(e->value(i)->number()) + ",\n");
      }
      Emit("};\n");
    }
  }

  void EmitClass(const Descriptor* message) {
    const std::string name = Flat(message->full_name());
    Emit("\n// " + message->full_name() + "\n");
    if (message->extension_count() > 0) {
      // The writer of the extended message, plus the extensions.
      const std::string base =
          Qualified(message->extension(0)->containing_type());
      Emit("// The writer of " +
           message->extension(0)->containing_type()->full_name() +
           " with the extensions " + message->full_name() + " declares.\n");
      Emit("class " + name + " : public " + base + " {\n");
      Emit(" public:\n");
      const Descriptor* extended = message->extension(0)->containing_type();
      Emit("  using " + base +
           "::" + FlatName(extended->full_name(), extended->file()->package()) +
           ";\n");
    } else {
      Emit("class " + name +
           " : public ::ringtrace::encoding::TypedMessage {\n");
      Emit(" public:\n");
      Emit("  using TypedMessage::TypedMessage;\n");
    }
    if (message->enum_type_count() + message->nested_type_count() > 0)
      Emit("\n");
    for (int i = 0; i < message->enum_type_count(); i++) {
      const EnumDescriptor* e = message->enum_type(i);
      Emit("  using " + e->name() + " = " + Qualified(e) + ";\n");
    }
    for (int i = 0; i < message->nested_type_count(); i++) {
      const Descriptor* nested = message->nested_type(i);
      Emit("  using " + nested->name() + " = " + Qualified(nested) + ";\n");
    }
    // A message has fields or extensions, not both (CheckExtensions).
    std::vector<const FieldDescriptor*> fields;
    for (int i = 0; i < message->field_count(); i++)
      fields.push_back(message->field(i));
    for (int i = 0; i < message->extension_count(); i++)
      fields.push_back(message->extension(i));
    if (!fields.empty())
      Emit("\n");
    for (const FieldDescriptor* field : fields) {
      Emit("  static constexpr uint32_t " + ConstantName(field) + " = " +
           std::to_string(field->number()) + ";\n");
    }
    for (const FieldDescriptor* field : fields)
      EmitField(name, field);
    Emit("};\n");
  }

  // |owner|: the class the member belongs to (for an extension, the class
  // of the message that declares it, not of the message it extends).
  void EmitField(const std::string& owner, const FieldDescriptor* field) {
    const std::string constant = ConstantName(field);
    const std::string verb = field->is_repeated() ? "add_" : "set_";
    const std::string method = verb + field->name();
    std::string proto_type = field->type_name();
    if (field->type() == FieldDescriptor::TYPE_MESSAGE)
      proto_type = field->message_type()->full_name();
    if (field->type() == FieldDescriptor::TYPE_ENUM)
      proto_type = field->enum_type()->full_name();
    Emit("\n  // " + std::string(LabelName(field)) + " " + proto_type + " " +
         field->name() + " = " + std::to_string(field->number()) +
         (field->is_packed() ? " [packed = true]" : "") + ";\n");

    switch (field->type()) {
      case FieldDescriptor::TYPE_MESSAGE: {
        const std::string type = Qualified(field->message_type());
        Emit("  " + type + " " + method + "();\n");
        out_of_class_.push_back(
            "inline " + type + " " + owner + "::" + method + "() {\n  return " +
            type + "(message_->BeginNestedMessage(" + constant + "));\n}\n");
        return;
      }
      case FieldDescriptor::TYPE_STRING:
        Emit("  void " + method +
             "(std::string_view value) {\n    message_->AppendString(" +
             constant + ", value);\n  }\n");
        return;
      case FieldDescriptor::TYPE_BYTES:
        Emit("  void " + method +
             "(const void* data, size_t size) {\n    message_->AppendBytes(" +
             constant + ", data, size);\n  }\n");
        Emit("  void " + method +
             "(std::string_view value) {\n    message_->AppendBytes(" +
             constant + ", value.data(), value.size());\n  }\n");
        return;
      default:
        break;
    }

    const ScalarKind kind = ScalarKindOf(field->type());
    const std::string cpp_type = field->type() == FieldDescriptor::TYPE_ENUM
                                     ? Qualified(field->enum_type())
                                     : std::string(kind.cpp_type);
    if (field->is_packed()) {
      EmitPackedField(field, "set_" + field->name(), cpp_type);
      return;
    }
    const std::string value =
        *kind.cast ? std::string(kind.cast) + "(value)" : "value";
    Emit("  void " + method + "(" + cpp_type + " value) {\n    message_->" +
         kind.append + "(" + constant + ", " + value + ");\n  }\n");
  }

  // A packed field is one length-delimited field holding the values. The
  // values are encoded by the caller into a Packed*VarInt buffer (varints
  // need their total size before the length prefix), or passed as an array
  // (fixed-size values are their own little-endian encoding).
  void EmitPackedField(const FieldDescriptor* field,
                       const std::string& method,
                       const std::string& cpp_type) {
    const std::string constant = ConstantName(field);
    if (IsVarIntType(field->type()) || IsZigZagType(field->type())) {
      const char* buffer = IsZigZagType(field->type())
                               ? "::ringtrace::encoding::PackedZigZagVarInt"
                               : "::ringtrace::encoding::PackedVarInt";
      Emit("  void " + method + "(const " + buffer +
           "& packed) {\n    message_->AppendBytes(" + constant +
           ", packed.data(), packed.size());\n  }\n");
      return;
    }
    Emit("  void " + method + "(const " + cpp_type +
         "* values, size_t count) {\n"
         "    ::ringtrace::encoding::AppendPackedFixed(message_, " +
         constant + ", values, count);\n  }\n");
  }

  void EmitOutOfClassDefinitions() {
    if (out_of_class_.empty())
      return;
    Emit(
        "\n// Setters that return another writer, defined once every writer "
        "is complete.\n\n");
    for (const std::string& def : out_of_class_)
      Emit(def);
  }

  const FileDescriptor* file_;
  const std::string package_;
  std::vector<const Descriptor*> messages_;
  std::vector<const EnumDescriptor*> enums_;
  std::vector<std::string> out_of_class_;
  std::string* out_ = nullptr;
};

}  // namespace

bool RtzeroGenerator::Generate(
    const FileDescriptor* file,
    const std::string& /*parameter*/,
    google::protobuf::compiler::GeneratorContext* context,
    std::string* error) const {
  std::string text;
  FileGenerator generator(file);
  if (!generator.Generate(&text, error))
    return false;
  std::unique_ptr<google::protobuf::io::ZeroCopyOutputStream> stream(
      context->Open(HeaderPathFor(file->name())));
  google::protobuf::io::Printer printer(stream.get(), '$');
  printer.PrintRaw(text);
  if (printer.failed()) {
    *error = "cannot write " + HeaderPathFor(file->name());
    return false;
  }
  return true;
}

}  // namespace protoc_gen
}  // namespace ringtrace
