/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/ftrace/event_format.h"

#include <utility>

namespace ringtrace {
namespace ftrace {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_';
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back()))
    s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

// Decimal digits only, at most |max|.
bool ParseDecimal(std::string_view s, uint64_t max, uint64_t* out) {
  if (s.empty() || s.size() > 20)
    return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (digit > max || v > (max - digit) / 10)
      return false;
    v = v * 10 + digit;
  }
  *out = v;
  return true;
}

// A name as the files print them: no blanks or control characters.
bool IsValidName(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameLength)
    return false;
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u <= ' ' || u == 0x7f)
      return false;
  }
  return true;
}

// "char prev_comm[16]" -> name "prev_comm", base "char", array "[16]";
// "__data_loc char[] name" -> name "name", base "__data_loc char[]".
bool SplitDeclaration(std::string_view decl,
                      std::string_view* base,
                      std::string_view* name,
                      std::string_view* array,
                      bool* has_array) {
  decl = Trim(decl);
  *has_array = false;
  *array = std::string_view();
  if (!decl.empty() && decl.back() == ']') {
    const size_t open = decl.rfind('[');
    if (open == std::string_view::npos)
      return false;
    *array = decl.substr(open);
    *has_array = true;
    decl = Trim(decl.substr(0, open));
  }
  size_t start = decl.size();
  while (start > 0 && IsIdentChar(decl[start - 1]))
    start--;
  *name = decl.substr(start);
  *base = Trim(decl.substr(0, start));
  if (name->empty() || name->size() > kMaxNameLength || base->empty())
    return false;
  const char first = name->front();
  return !(first >= '0' && first <= '9');
}

bool IsCharType(std::string_view base) {
  return base == "char" || base == "const char" || base == "signed char";
}

FieldKind Classify(std::string_view base,
                   std::string_view array,
                   bool has_array,
                   uint32_t size) {
  for (std::string_view loc :
       {std::string_view("__data_loc"), std::string_view("__rel_loc")}) {
    if (!StartsWith(base, loc))
      continue;
    if (has_array || size != 4)
      return FieldKind::kOther;
    // The element type: "__data_loc char[]" -> "char".
    std::string_view element = Trim(base.substr(loc.size()));
    if (element.size() < 2 || element.substr(element.size() - 2) != "[]")
      return FieldKind::kOther;
    element = Trim(element.substr(0, element.size() - 2));
    if (!IsCharType(element))
      return FieldKind::kOther;
    return loc == "__data_loc" ? FieldKind::kDataLoc : FieldKind::kRelLoc;
  }
  if (has_array) {
    if (!IsCharType(base))
      return FieldKind::kOther;
    if (array == "[]")
      return FieldKind::kTailString;
    return size > 0 ? FieldKind::kFixedString : FieldKind::kOther;
  }
  if (size == 1 || size == 2 || size == 4 || size == 8)
    return FieldKind::kInt;
  return FieldKind::kOther;
}

// Parses the part after "field:": "decl;\toffset:N;\tsize:N;\tsigned:N;".
bool ParseFieldLine(std::string_view line, FormatField* out) {
  bool have_offset = false;
  bool have_size = false;
  std::string_view decl;
  size_t segment = 0;
  while (!line.empty()) {
    const size_t semi = line.find(';');
    std::string_view part = Trim(line.substr(0, semi));
    line = semi == std::string_view::npos ? std::string_view()
                                          : line.substr(semi + 1);
    if (segment++ == 0) {
      decl = part;
      continue;
    }
    if (part.empty())
      continue;
    const size_t colon = part.find(':');
    if (colon == std::string_view::npos)
      continue;  // not a key:value; later kernels may add such parts
    const std::string_view key = Trim(part.substr(0, colon));
    const std::string_view value = Trim(part.substr(colon + 1));
    uint64_t v = 0;
    if (key == "offset") {
      if (!ParseDecimal(value, kMaxRecordSize, &v))
        return false;
      out->offset = static_cast<uint32_t>(v);
      have_offset = true;
    } else if (key == "size") {
      if (!ParseDecimal(value, kMaxRecordSize, &v))
        return false;
      out->size = static_cast<uint32_t>(v);
      have_size = true;
    } else if (key == "signed") {
      if (!ParseDecimal(value, 1, &v))
        return false;
      out->is_signed = v == 1;
    }
  }
  if (!have_offset || !have_size)
    return false;
  // Both are <= kMaxRecordSize, so the sum cannot overflow.
  if (uint64_t{out->offset} + out->size > kMaxRecordSize)
    return false;
  std::string_view base;
  std::string_view name;
  std::string_view array;
  bool has_array = false;
  if (!SplitDeclaration(decl, &base, &name, &array, &has_array))
    return false;
  out->name.assign(name.data(), name.size());
  out->type.assign(base.data(), base.size());
  out->type.append(array.data(), array.size());
  out->kind = Classify(base, array, has_array, out->size);
  return true;
}

// Calls |fn(line_number, line)| for each line, at most kMaxFormatLines;
// false if there are more.
template <typename Fn>
bool ForEachLine(std::string_view text, Fn fn) {
  size_t line_no = 0;
  while (!text.empty()) {
    if (++line_no > kMaxFormatLines)
      return false;
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text =
        nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!fn(line_no, line))
      break;
  }
  return true;
}

}  // namespace

const FormatField* EventFormat::FindField(std::string_view field_name) const {
  for (const FormatField& f : fields) {
    if (f.name == field_name)
      return &f;
  }
  for (const FormatField& f : common_fields) {
    if (f.name == field_name)
      return &f;
  }
  return nullptr;
}

base::Status ParseEventFormat(std::string_view text,
                              std::string_view group,
                              EventFormat* out) {
  EventFormat format;
  format.group.assign(group.data(), group.size());
  bool have_name = false;
  bool have_id = false;
  bool in_format = false;
  size_t bad_line = 0;
  const char* why = nullptr;
  const bool bounded =
      ForEachLine(text, [&](size_t line_no, std::string_view raw) {
        const std::string_view line = Trim(raw);
        if (StartsWith(line, "print fmt:"))
          return false;  // the rest is the printk format, not layout
        if (StartsWith(line, "name:")) {
          const std::string_view name = Trim(line.substr(5));
          if (!IsValidName(name)) {
            bad_line = line_no;
            why = "invalid event name";
            return false;
          }
          format.name.assign(name.data(), name.size());
          have_name = true;
        } else if (StartsWith(line, "ID:")) {
          uint64_t id = 0;
          if (!ParseDecimal(Trim(line.substr(3)), kMaxEventId, &id)) {
            bad_line = line_no;
            why = "ID is not a number up to 65535";
            return false;
          }
          format.id = static_cast<uint32_t>(id);
          have_id = true;
        } else if (line == "format:") {
          in_format = true;
        } else if (StartsWith(line, "field:")) {
          if (!in_format) {
            bad_line = line_no;
            why = "field before \"format:\"";
            return false;
          }
          if (format.fields.size() + format.common_fields.size() >=
              kMaxFormatFields) {
            bad_line = line_no;
            why = "too many fields";
            return false;
          }
          FormatField field;
          if (!ParseFieldLine(line.substr(6), &field)) {
            bad_line = line_no;
            why = "malformed field (declaration; offset:N; size:N;)";
            return false;
          }
          if (StartsWith(field.name, "common_"))
            format.common_fields.push_back(std::move(field));
          else
            format.fields.push_back(std::move(field));
        }
        // Blank lines and lines this parser does not know are skipped.
        return true;
      });
  if (!bounded)
    return base::ErrStatus("event format: more than %zu lines",
                           kMaxFormatLines);
  if (why)
    return base::ErrStatus("event format: line %zu: %s", bad_line, why);
  if (!have_name)
    return base::ErrStatus("event format: no \"name:\" line");
  if (!have_id)
    return base::ErrStatus("event format %s: no \"ID:\" line",
                           format.name.c_str());
  if (!in_format)
    return base::ErrStatus("event format %s: no \"format:\" section",
                           format.name.c_str());
  *out = std::move(format);
  return base::OkStatus();
}

base::Status ParseHeaderPage(std::string_view text, HeaderPage* out) {
  bool have_ts = false;
  bool have_commit = false;
  bool have_data = false;
  HeaderPage header;
  size_t bad_line = 0;
  const bool bounded =
      ForEachLine(text, [&](size_t line_no, std::string_view raw) {
        const std::string_view line = Trim(raw);
        if (!StartsWith(line, "field:"))
          return true;
        FormatField field;
        if (!ParseFieldLine(line.substr(6), &field)) {
          bad_line = line_no;
          return false;
        }
        if (field.name == "timestamp") {
          header.timestamp_offset = field.offset;
          header.timestamp_size = field.size;
          have_ts = true;
        } else if (field.name == "commit") {
          header.commit_offset = field.offset;
          header.commit_size = field.size;
          have_commit = true;
        } else if (field.name == "data") {
          header.data_offset = field.offset;
          header.data_size = field.size;
          have_data = true;
        }
        // "overwrite" shares commit's bytes; nothing to keep.
        return true;
      });
  if (!bounded)
    return base::ErrStatus("header_page: more than %zu lines", kMaxFormatLines);
  if (bad_line)
    return base::ErrStatus("header_page: line %zu: malformed field", bad_line);
  if (!have_ts || !have_commit || !have_data)
    return base::ErrStatus(
        "header_page: missing the %s field",
        !have_ts ? "timestamp" : (!have_commit ? "commit" : "data"));
  if (header.timestamp_size != 8)
    return base::ErrStatus("header_page: timestamp is %u bytes, not 8",
                           header.timestamp_size);
  if (header.commit_size != 4 && header.commit_size != 8)
    return base::ErrStatus("header_page: commit is %u bytes, not 4 or 8",
                           header.commit_size);
  // Offsets and sizes are each <= kMaxRecordSize: no overflow below.
  const uint32_t ts_end = header.timestamp_offset + header.timestamp_size;
  const uint32_t commit_end = header.commit_offset + header.commit_size;
  const bool overlap =
      header.timestamp_offset < commit_end && header.commit_offset < ts_end;
  if (overlap || header.data_offset < ts_end ||
      header.data_offset < commit_end || header.data_size == 0)
    return base::ErrStatus(
        "header_page: timestamp [%u, +%u), commit [%u, +%u) and data at %u "
        "overlap or data is empty",
        header.timestamp_offset, header.timestamp_size, header.commit_offset,
        header.commit_size, header.data_offset);
  *out = header;
  return base::OkStatus();
}

EventFormatTable::EventFormatTable() = default;
EventFormatTable::~EventFormatTable() = default;

base::Status EventFormatTable::Add(EventFormat format) {
  if (format.id > kMaxEventId)
    return base::ErrStatus("event %s/%s: ID %u above %u", format.group.c_str(),
                           format.name.c_str(), format.id, kMaxEventId);
  if (Find(format.id))
    return base::ErrStatus("event %s/%s: ID %u already taken by %s/%s",
                           format.group.c_str(), format.name.c_str(), format.id,
                           by_id_[format.id]->group.c_str(),
                           by_id_[format.id]->name.c_str());
  const FormatField* type = format.FindField("common_type");
  if (!type || type->kind != FieldKind::kInt)
    return base::ErrStatus("event %s/%s: no integer common_type field",
                           format.group.c_str(), format.name.c_str());
  if (by_id_.size() <= format.id)
    by_id_.resize(format.id + 1, nullptr);
  formats_.push_back(std::make_unique<EventFormat>(std::move(format)));
  by_id_[formats_.back()->id] = formats_.back().get();
  return base::OkStatus();
}

const EventFormat* EventFormatTable::FindByName(std::string_view group,
                                                std::string_view name) const {
  for (const auto& f : formats_) {
    if (f->group == group && f->name == name)
      return f.get();
  }
  return nullptr;
}

}  // namespace ftrace
}  // namespace ringtrace
