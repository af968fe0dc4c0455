/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/protoc_gen_ringtrace/names.h"

#include <ctype.h>

#include <algorithm>
#include <iterator>

namespace ringtrace {
namespace protoc_gen {

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Sorted, for binary search.
const char* const kKeywords[] = {
    "alignas",      "alignof",
    "and",          "and_eq",
    "asm",          "auto",
    "bitand",       "bitor",
    "bool",         "break",
    "case",         "catch",
    "char",         "char16_t",
    "char32_t",     "class",
    "compl",        "const",
    "const_cast",   "constexpr",
    "continue",     "decltype",
    "default",      "delete",
    "do",           "double",
    "dynamic_cast", "else",
    "enum",         "explicit",
    "export",       "extern",
    "false",        "float",
    "for",          "friend",
    "goto",         "if",
    "inline",       "int",
    "long",         "mutable",
    "namespace",    "new",
    "noexcept",     "not",
    "not_eq",       "nullptr",
    "operator",     "or",
    "or_eq",        "private",
    "protected",    "public",
    "register",     "reinterpret_cast",
    "return",       "short",
    "signed",       "sizeof",
    "static",       "static_assert",
    "static_cast",  "struct",
    "switch",       "template",
    "this",         "thread_local",
    "throw",        "true",
    "try",          "typedef",
    "typeid",       "typename",
    "union",        "unsigned",
    "using",        "virtual",
    "void",         "volatile",
    "wchar_t",      "while",
    "xor",          "xor_eq",
};

}  // namespace

std::string HeaderPathFor(const std::string& proto_path) {
  const std::string kProto = ".proto";
  std::string stem = proto_path;
  if (EndsWith(stem, kProto))
    stem.resize(stem.size() - kProto.size());
  return stem + ".rtzero.h";
}

std::string IncludeGuardFor(const std::string& header_path) {
  std::string guard;
  guard.reserve(header_path.size() + 1);
  for (char c : header_path) {
    const unsigned char u = static_cast<unsigned char>(c);
    guard.push_back(isalnum(u) ? static_cast<char>(toupper(u)) : '_');
  }
  guard.push_back('_');
  return guard;
}

std::string CamelCase(const std::string& snake) {
  std::string out;
  out.reserve(snake.size());
  bool upper_next = true;
  for (char c : snake) {
    if (c == '_') {
      upper_next = true;
      continue;
    }
    const unsigned char u = static_cast<unsigned char>(c);
    out.push_back(upper_next ? static_cast<char>(toupper(u)) : c);
    upper_next = false;
  }
  return out;
}

std::vector<std::string> NamespacesFor(const std::string& package) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < package.size()) {
    size_t dot = package.find('.', start);
    if (dot == std::string::npos)
      dot = package.size();
    parts.push_back(package.substr(start, dot - start));
    start = dot + 1;
  }
  parts.push_back("rtzero");
  return parts;
}

std::string FlatName(const std::string& full_name, const std::string& package) {
  std::string rest = full_name;
  if (!package.empty() && rest.compare(0, package.size(), package) == 0 &&
      rest.size() > package.size() && rest[package.size()] == '.') {
    rest = rest.substr(package.size() + 1);
  }
  std::replace(rest.begin(), rest.end(), '.', '_');
  return rest;
}

std::string QualifiedName(const std::string& full_name,
                          const std::string& package) {
  std::string out;
  for (const std::string& ns : NamespacesFor(package))
    out += "::" + ns;
  return out + "::" + FlatName(full_name, package);
}

bool IsCppKeyword(const std::string& name) {
  return std::binary_search(
      std::begin(kKeywords), std::end(kKeywords), name,
      [](const std::string& a, const std::string& b) { return a < b; });
}

std::string EnumeratorName(const std::string& value_name) {
  return IsCppKeyword(value_name) ? value_name + "_" : value_name;
}

}  // namespace protoc_gen
}  // namespace ringtrace
