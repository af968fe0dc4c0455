/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/consumer/trace_config_text.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/unknown_field_set.h>

#include <algorithm>
#include <string>
#include <vector>

#include "src/base/scoped_fd.h"

namespace ringtrace {
namespace consumer {
namespace {

namespace pb = google::protobuf;

// Keeps the parser's first error (it stops there) with its position.
class FirstErrorCollector : public pb::io::ErrorCollector {
 public:
  void AddError(int line,
                pb::io::ColumnNumber column,
                const std::string& message) override {
    if (has_error_)
      return;
    has_error_ = true;
    line_ = line;
    column_ = column;
    message_ = message;
  }
  void AddWarning(int, pb::io::ColumnNumber, const std::string&) override {}

  bool has_error() const { return has_error_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& message() const { return message_; }

 private:
  bool has_error_ = false;
  int line_ = 0;
  int column_ = 0;
  std::string message_;
};

// Every error and warning of a lenient parse (unknown fields allowed): the
// parser warns of each unknown field it skips and goes on.
class AllDiagnosticsCollector : public pb::io::ErrorCollector {
 public:
  struct Diagnostic {
    int line;
    int column;
    std::string message;
  };
  void AddError(int line,
                pb::io::ColumnNumber column,
                const std::string& message) override {
    all_.push_back({line, column, message});
  }
  void AddWarning(int line,
                  pb::io::ColumnNumber column,
                  const std::string& message) override {
    all_.push_back({line, column, message});
  }
  const std::vector<Diagnostic>& all() const { return all_; }

 private:
  std::vector<Diagnostic> all_;
};

// Swallows what the tokenizer says while TextFieldPathAt() re-reads a text
// the parser already rejected.
class NullErrorCollector : public pb::io::ErrorCollector {
 public:
  void AddError(int, pb::io::ColumnNumber, const std::string&) override {}
};

struct Token {
  pb::io::Tokenizer::TokenType type;
  std::string text;
  int line;
  int column;
};

bool IsSymbol(const Token& t, const char* symbols) {
  return t.type == pb::io::Tokenizer::TYPE_SYMBOL && t.text.size() == 1 &&
         strchr(symbols, t.text[0]) != nullptr;
}

// Finds fields that a binary config had but this proto does not define.
// |path| names |message| for the error ("TraceConfig.buffers[1]").
base::Status CheckNoUnknownFields(const pb::Message& message,
                                  const std::string& path) {
  const pb::Reflection* reflection = message.GetReflection();
  const pb::UnknownFieldSet& unknown = reflection->GetUnknownFields(message);
  if (!unknown.empty()) {
    return base::ErrStatus(
        "%s has field number %d, which ringtrace does not "
        "support",
        path.c_str(), unknown.field(0).number());
  }
  std::vector<const pb::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const pb::FieldDescriptor* field : fields) {
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE)
      continue;
    const std::string field_path = path + "." + field->name();
    if (!field->is_repeated()) {
      base::Status status = CheckNoUnknownFields(
          reflection->GetMessage(message, field), field_path);
      if (!status.ok())
        return status;
      continue;
    }
    const int count = reflection->FieldSize(message, field);
    for (int i = 0; i < count; i++) {
      base::Status status = CheckNoUnknownFields(
          reflection->GetRepeatedMessage(message, field, i),
          field_path + "[" + std::to_string(i) + "]");
      if (!status.ok())
        return status;
    }
  }
  return base::OkStatus();
}

std::vector<Token> Tokenize(const std::string& text) {
  NullErrorCollector errors;
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  pb::io::Tokenizer tokenizer(&input, &errors);
  tokenizer.set_comment_style(pb::io::Tokenizer::SH_COMMENT_STYLE);
  tokenizer.set_require_space_after_number(false);
  tokenizer.set_allow_multiline_strings(true);
  std::vector<Token> tokens;
  while (tokenizer.Next()) {
    const pb::io::Tokenizer::Token& t = tokenizer.current();
    tokens.push_back(Token{t.type, t.text, t.line, t.column});
  }
  return tokens;
}

bool AtOrBefore(const Token& t, int line, int column) {
  return t.line < line || (t.line == line && t.column <= column);
}

// The parser reports an error at the token it was looking at when it
// noticed: for an unknown field, a field given twice or an unknown enum value
// that is the token AFTER the name or value at fault (possibly on the next
// line). When the token just before the reported position is one the message
// quotes, the error is moved onto it.
void MoveErrorOntoQuotedToken(const std::vector<Token>& tokens,
                              const std::string& message,
                              int* line,
                              int* column) {
  const Token* before = nullptr;
  for (const Token& t : tokens) {
    if (!AtOrBefore(t, *line, *column) ||
        (t.line == *line && t.column == *column)) {
      break;
    }
    before = &t;
  }
  if (!before || before->type == pb::io::Tokenizer::TYPE_SYMBOL)
    return;
  if (message.find("\"" + before->text + "\"") == std::string::npos)
    return;
  *line = before->line;
  *column = before->column;
}

std::string FieldPathAt(const std::vector<Token>& tokens,
                        int line,
                        int column) {
  // A stack of the open messages ("{" or "<") and lists ("["), each with the
  // field it belongs to, and the field whose name or value the position is
  // in.
  struct Open {
    std::string field;
    bool is_list;
  };
  std::vector<Open> open;
  std::string current;
  for (size_t i = 0; i < tokens.size() && AtOrBefore(tokens[i], line, column);
       i++) {
    const Token& t = tokens[i];
    const bool followed_by_field_separator =
        i + 1 < tokens.size() && IsSymbol(tokens[i + 1], ":{<");
    if (t.type == pb::io::Tokenizer::TYPE_IDENTIFIER &&
        followed_by_field_separator) {
      current = t.text;
    } else if (IsSymbol(t, "{<")) {
      std::string field = current;
      if (field.empty() && !open.empty() && open.back().is_list)
        field = open.back().field;
      open.push_back(Open{field.empty() ? "?" : field, false});
      current.clear();
    } else if (IsSymbol(t, "[")) {
      open.push_back(Open{current, true});
    } else if (IsSymbol(t, "}>]")) {
      if (!open.empty())
        open.pop_back();
      current.clear();
    } else if (t.type != pb::io::Tokenizer::TYPE_SYMBOL &&
               (open.empty() || !open.back().is_list) &&
               !(t.line == line && t.column == column)) {
      // A scalar value the position is past: its field is done.
      current.clear();
    }
  }
  std::string path;
  for (const Open& o : open) {
    if (o.is_list)
      continue;
    path += path.empty() ? "" : ".";
    path += o.field;
  }
  // In a list of messages between its entries, the list's field.
  if (current.empty() && !open.empty() && open.back().is_list)
    current = open.back().field;
  if (!current.empty())
    path += (path.empty() ? "" : ".") + current;
  return path;
}

}  // namespace

std::string TextFieldPathAt(const std::string& text, int line, int column) {
  return FieldPathAt(Tokenize(text), line, column);
}

namespace {

// "FILE:LINE:COL: PATH: message" for a parser diagnostic.
std::string Locate(const std::vector<Token>& tokens,
                   const std::string& file_name,
                   int line,
                   int column,
                   const std::string& message) {
  MoveErrorOntoQuotedToken(tokens, message, &line, &column);
  const std::string path = FieldPathAt(tokens, line, column);
  return file_name + ":" + std::to_string(line + 1) + ":" +
         std::to_string(column + 1) + ": " + path + (path.empty() ? "" : ": ") +
         message;
}

// After a strict parse failed: the lines of a lenient one, which skips
// every unknown field with a warning, so that a config with several fields
// ringtrace does not support names them all at once (each with its place),
// plus whatever else it found. Empty when the lenient parse found nothing
// to say (the strict error stands alone).
std::vector<std::string> EveryProblem(const std::string& text,
                                      const std::string& file_name,
                                      const std::vector<Token>& tokens) {
  AllDiagnosticsCollector collector;
  pb::TextFormat::Parser lenient;
  lenient.RecordErrorsTo(&collector);
  lenient.AllowUnknownField(true);
  lenient.AllowUnknownExtension(true);
  perfetto::protos::TraceConfig scratch;
  lenient.ParseFromString(text, &scratch);
  std::vector<std::string> lines;
  for (const auto& d : collector.all()) {
    std::string line = Locate(tokens, file_name, d.line, d.column, d.message);
    if (std::find(lines.begin(), lines.end(), line) == lines.end())
      lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace

base::Status ParseTextTraceConfig(const std::string& text,
                                  const std::string& file_name,
                                  perfetto::protos::TraceConfig* config) {
  config->Clear();
  if (text.size() > kMaxConfigFileBytes) {
    return base::ErrStatus("%s: larger than %zu bytes", file_name.c_str(),
                           kMaxConfigFileBytes);
  }
  FirstErrorCollector errors;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  // Defaults spelled out: an unknown field or extension is an error.
  parser.AllowUnknownField(false);
  parser.AllowUnknownExtension(false);
  if (parser.ParseFromString(text, config))
    return base::OkStatus();
  if (!errors.has_error()) {
    // The parser failed without saying where (it always says today).
    return base::ErrStatus("%s: not a valid text TraceConfig",
                           file_name.c_str());
  }
  const std::vector<Token> tokens = Tokenize(text);
  const std::string first = Locate(tokens, file_name, errors.line(),
                                   errors.column(), errors.message());
  std::vector<std::string> lines = EveryProblem(text, file_name, tokens);
  if (lines.size() <= 1)
    return base::ErrStatus("%s", first.c_str());
  // The strict parse's error first (it may be one the lenient parse does
  // not repeat, e.g. a syntax error after an unknown field), then the rest.
  std::string out = std::to_string(lines.size()) + " problems:\n" + first;
  size_t shown = 1;
  for (const std::string& line : lines) {
    if (line == first)
      continue;
    if (shown == kMaxConfigProblemsShown) {
      out += "\n... and more";
      break;
    }
    out += "\n" + line;
    ++shown;
  }
  return base::ErrStatus("%s", out.c_str());
}

base::Status ParseBinaryTraceConfig(const std::string& bytes,
                                    const std::string& file_name,
                                    perfetto::protos::TraceConfig* config) {
  config->Clear();
  if (!config->ParseFromString(bytes)) {
    return base::ErrStatus(
        "%s: not a binary TraceConfig (a text config needs --txt)",
        file_name.c_str());
  }
  base::Status status = CheckNoUnknownFields(*config, "TraceConfig");
  if (!status.ok()) {
    return base::ErrStatus("%s: %s", file_name.c_str(),
                           status.message().c_str());
  }
  return base::OkStatus();
}

base::Status ReadConfigFile(const std::string& path, std::string* contents) {
  contents->clear();
  base::ScopedFd owned;
  int fd = STDIN_FILENO;
  if (path != "-") {
    owned.reset(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!owned.valid()) {
      return base::ErrStatus("cannot open config %s: %s", path.c_str(),
                             strerror(errno));
    }
    fd = owned.get();
  }
  const char* name = path == "-" ? "<stdin>" : path.c_str();
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return base::ErrStatus("cannot read %s: %s", name, strerror(errno));
    if (n == 0)
      return base::OkStatus();
    if (contents->size() + static_cast<size_t>(n) > kMaxConfigFileBytes) {
      return base::ErrStatus("%s: larger than %zu bytes, not a config", name,
                             kMaxConfigFileBytes);
    }
    contents->append(buf, static_cast<size_t>(n));
  }
}

}  // namespace consumer
}  // namespace ringtrace
