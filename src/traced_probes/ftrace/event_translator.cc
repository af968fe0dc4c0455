/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/ftrace/event_translator.h"

#include <string.h>

#include <algorithm>
#include <string_view>

#include "src/base/checked_math.h"

namespace ringtrace {
namespace ftrace {
namespace {

namespace rt = perfetto::protos::rtzero;

// The typed events and, per event, the format fields read into its
// message, in the order WriteTyped() uses them.
struct TypedSpec {
  const char* group;
  const char* name;
  EventKind kind;
  std::array<const char*, 7> fields;
};

constexpr TypedSpec kTypedSpecs[] = {
    {"sched",
     "sched_switch",
     EventKind::kSchedSwitch,
     {"prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm",
      "next_pid", "next_prio"}},
    {"sched",
     "sched_waking",
     EventKind::kSchedWaking,
     {"comm", "pid", "prio", "success", "target_cpu"}},
    {"sched",
     "sched_process_fork",
     EventKind::kSchedProcessFork,
     {"parent_comm", "parent_pid", "child_comm", "child_pid"}},
    {"sched",
     "sched_process_exit",
     EventKind::kSchedProcessExit,
     {"comm", "pid", "tgid", "prio"}},
    {"sched",
     "sched_process_free",
     EventKind::kSchedProcessFree,
     {"comm", "pid", "prio"}},
    {"task",
     "task_newtask",
     EventKind::kTaskNewtask,
     {"pid", "comm", "clone_flags", "oom_score_adj"}},
    {"task",
     "task_rename",
     EventKind::kTaskRename,
     {"pid", "oldcomm", "newcomm", "oom_score_adj"}},
    {"ftrace", "print", EventKind::kPrint, {"ip", "buf"}},
};

// Reads fields of one record, each checked against the record's size.
class RecordReader {
 public:
  RecordReader(const RawEvent& event, uint64_t* unreadable)
      : data_(event.data), size_(event.size), unreadable_(unreadable) {}

  // An integer field, sign-extended when the kernel says it is signed.
  bool Int(const FormatField* f, int64_t* out) const {
    if (!f || f->kind != FieldKind::kInt)
      return false;
    if (!base::RangeInBounds(f->offset, f->size, size_))
      return Unreadable();
    uint64_t v = 0;
    switch (f->size) {
      case 1: {
        uint8_t x;
        memcpy(&x, data_ + f->offset, 1);
        v = f->is_signed ? static_cast<uint64_t>(static_cast<int8_t>(x)) : x;
        break;
      }
      case 2: {
        uint16_t x;
        memcpy(&x, data_ + f->offset, 2);
        v = f->is_signed ? static_cast<uint64_t>(static_cast<int16_t>(x)) : x;
        break;
      }
      case 4: {
        uint32_t x;
        memcpy(&x, data_ + f->offset, 4);
        v = f->is_signed ? static_cast<uint64_t>(static_cast<int32_t>(x)) : x;
        break;
      }
      default:  // 8 (FieldKind::kInt has no other size)
        memcpy(&v, data_ + f->offset, 8);
        break;
    }
    *out = static_cast<int64_t>(v);
    return true;
  }

  // A string field of any of the string kinds, up to its first NUL.
  bool Str(const FormatField* f, std::string_view* out) const {
    if (!f)
      return false;
    size_t begin = 0;
    size_t length = 0;
    switch (f->kind) {
      case FieldKind::kFixedString:
        begin = f->offset;
        length = f->size;
        break;
      case FieldKind::kTailString:
        if (f->offset > size_)
          return Unreadable();
        begin = f->offset;
        length = size_ - f->offset;
        break;
      case FieldKind::kDataLoc:
      case FieldKind::kRelLoc: {
        if (!base::RangeInBounds(f->offset, 4, size_))
          return Unreadable();
        uint32_t loc;
        memcpy(&loc, data_ + f->offset, 4);
        begin = loc & 0xffff;
        length = loc >> 16;
        // __rel_loc counts from the end of its own u32.
        if (f->kind == FieldKind::kRelLoc)
          begin += f->offset + 4;
        break;
      }
      default:
        return false;
    }
    if (!base::RangeInBounds(begin, length, size_))
      return Unreadable();
    const char* s = reinterpret_cast<const char*>(data_ + begin);
    const void* nul = memchr(s, 0, length);
    *out = std::string_view(
        s,
        nul ? static_cast<size_t>(static_cast<const char*>(nul) - s) : length);
    return true;
  }

 private:
  bool Unreadable() const {
    ++*unreadable_;
    return false;
  }

  const uint8_t* data_;
  size_t size_;
  uint64_t* unreadable_;
};

bool IsStringKind(FieldKind kind) {
  return kind == FieldKind::kFixedString || kind == FieldKind::kTailString ||
         kind == FieldKind::kDataLoc || kind == FieldKind::kRelLoc;
}

}  // namespace

rt::FtraceParseStatus ParseStatusFor(PageError error) {
  switch (error) {
    case PageError::kNone:
      return rt::FtraceParseStatus::FTRACE_STATUS_OK;
    case PageError::kShortPage:
      return rt::FtraceParseStatus::FTRACE_STATUS_PARTIAL_PAGE_READ;
    case PageError::kInvalidPageHeader:
      return rt::FtraceParseStatus::FTRACE_STATUS_ABI_INVALID_PAGE_HEADER;
    case PageError::kShortEventHeader:
      return rt::FtraceParseStatus::FTRACE_STATUS_ABI_SHORT_EVENT_HEADER;
    case PageError::kShortPaddingLength:
      return rt::FtraceParseStatus::FTRACE_STATUS_ABI_SHORT_PADDING_LENGTH;
    case PageError::kInvalidPaddingLength:
      return rt::FtraceParseStatus::FTRACE_STATUS_ABI_INVALID_PADDING_LENGTH;
    case PageError::kShortTimeExtend:
      return rt::FtraceParseStatus::FTRACE_STATUS_ABI_SHORT_TIME_EXTEND;
    case PageError::kShortTimeStamp:
      return rt::FtraceParseStatus::FTRACE_STATUS_ABI_SHORT_TIME_STAMP;
    case PageError::kShortDataLength:
      return rt::FtraceParseStatus::FTRACE_STATUS_ABI_SHORT_DATA_LENGTH;
    case PageError::kZeroDataLength:
      return rt::FtraceParseStatus::FTRACE_STATUS_ABI_ZERO_DATA_LENGTH;
    case PageError::kInvalidDataLength:
      return rt::FtraceParseStatus::FTRACE_STATUS_ABI_INVALID_DATA_LENGTH;
    case PageError::kTimeOverflow:
      return rt::FtraceParseStatus::FTRACE_STATUS_INVALID_EVENT;
  }
  return rt::FtraceParseStatus::FTRACE_STATUS_UNSPECIFIED;
}

EventTranslator::EventTranslator(const EventFormatTable* formats,
                                 const HeaderPage& layout)
    : layout_(layout) {
  common_type_.name = "common_type";
  common_type_.offset = 0;
  common_type_.size = 2;
  common_type_.kind = FieldKind::kInt;
  for (const auto& format : formats->formats()) {
    if (const FormatField* t = format->FindField("common_type")) {
      common_type_ = *t;  // EventFormatTable::Add() checked it is kInt
      break;
    }
  }
  size_t ids = 0;
  for (const auto& format : formats->formats())
    ids = std::max(ids, static_cast<size_t>(format->id) + 1);
  by_id_.resize(ids);  // IDs are <= kMaxEventId (EventFormatTable::Add())
  for (const auto& format : formats->formats()) {
    Resolved& r = by_id_[format->id];
    r.format = format.get();
    r.common_pid = format->FindField("common_pid");
    r.common_flags = format->FindField("common_flags");
    for (const TypedSpec& spec : kTypedSpecs) {
      if (format->group != spec.group || format->name != spec.name)
        continue;
      r.kind = spec.kind;
      for (size_t i = 0; i < spec.fields.size(); i++)
        r.fields[i] =
            spec.fields[i] ? format->FindField(spec.fields[i]) : nullptr;
    }
    const auto& f = r.fields;
    // prev_state, next_comm, next_pid, next_prio; comm, pid, prio,
    // target_cpu and common_flags.
    if (r.kind == EventKind::kSchedSwitch)
      compact_switch_ = f[3] && f[4] && f[5] && f[6];
    if (r.kind == EventKind::kSchedWaking)
      compact_waking_ = f[0] && f[1] && f[2] && f[4] && r.common_flags;
  }
}

EventTranslator::~EventTranslator() = default;

bool EventTranslator::AddCompact(const Resolved& r,
                                 const RawEvent& event,
                                 CompactSchedBuffer* compact) {
  uint64_t unreadable = 0;
  const RecordReader in(event, &unreadable);
  const auto& f = r.fields;
  std::string_view comm;
  int64_t a = 0;
  int64_t b = 0;
  int64_t c = 0;
  if (r.kind == EventKind::kSchedSwitch) {
    if (!in.Int(f[3], &a) || !in.Str(f[4], &comm) || !in.Int(f[5], &b) ||
        !in.Int(f[6], &c))
      return false;
    compact->AddSwitch(event.timestamp, a, static_cast<int32_t>(b),
                       static_cast<int32_t>(c), comm);
    stats_.compact_switches++;
    return true;
  }
  int64_t cpu = 0;
  int64_t flags = 0;
  if (!in.Str(f[0], &comm) || !in.Int(f[1], &a) || !in.Int(f[2], &b) ||
      !in.Int(f[4], &cpu) || !in.Int(r.common_flags, &flags))
    return false;
  compact->AddWaking(event.timestamp, static_cast<int32_t>(a),
                     static_cast<int32_t>(cpu), static_cast<int32_t>(b), comm,
                     static_cast<uint32_t>(flags));
  stats_.compact_wakings++;
  return true;
}

bool EventTranslator::TranslateEvent(const RawEvent& event,
                                     rt::FtraceEventBundle* bundle,
                                     CompactSchedBuffer* compact) {
  uint64_t ignored = 0;
  const RecordReader reader(event, &ignored);
  int64_t id = 0;
  if (!reader.Int(&common_type_, &id)) {
    stats_.short_records++;
    rt::FtraceEventBundle::FtraceError error = bundle->add_error();
    error.set_timestamp(event.timestamp);
    error.set_status(rt::FtraceParseStatus::FTRACE_STATUS_ABI_SHORT_EVENT_ID);
    return false;
  }
  const uint64_t uid = static_cast<uint64_t>(id);
  if (uid >= by_id_.size() || !by_id_[uid].format) {
    stats_.unknown_events++;
    return false;
  }
  const Resolved& r = by_id_[uid];
  int64_t pid = 0;
  const bool have_pid = reader.Int(r.common_pid, &pid);
  if (r.common_pid && !have_pid) {
    stats_.short_records++;
    rt::FtraceEventBundle::FtraceError error = bundle->add_error();
    error.set_timestamp(event.timestamp);
    error.set_status(rt::FtraceParseStatus::FTRACE_STATUS_ABI_SHORT_EVENT_ID);
    return false;
  }
  if (pid_sink_ && have_pid && pid > 0 && pid <= INT32_MAX &&
      (pid_sink_->empty() || pid_sink_->back() != pid)) {
    pid_sink_->push_back(static_cast<int32_t>(pid));
  }
  if (rename_sink_ && r.kind == EventKind::kTaskRename) {
    // f[0] is the renamed task's pid (kTypedSpecs).
    int64_t renamed = 0;
    if (reader.Int(r.fields[0], &renamed) && renamed > 0 &&
        renamed <= INT32_MAX) {
      rename_sink_->push_back(static_cast<int32_t>(renamed));
    }
  }
  if (compact && ((r.kind == EventKind::kSchedSwitch && compact_switch()) ||
                  (r.kind == EventKind::kSchedWaking && compact_waking()))) {
    // A record whose fields do not all fit is written in full below (with
    // what it has, the rest counted as unreadable).
    if (AddCompact(r, event, compact))
      return true;
  }
  rt::FtraceEvent out = bundle->add_event();
  out.set_timestamp(event.timestamp);
  if (have_pid)
    out.set_pid(static_cast<uint32_t>(pid));
  if (r.kind == EventKind::kGeneric) {
    WriteGeneric(r, event, &out);
    stats_.generic_events++;
  } else {
    WriteTyped(r, event, &out);
  }
  stats_.events++;
  return true;
}

void EventTranslator::WriteTyped(const Resolved& r,
                                 const RawEvent& event,
                                 rt::FtraceEvent* out) {
  const RecordReader in(event, &stats_.unreadable_fields);
  const auto& f = r.fields;
  std::string_view s;
  int64_t v = 0;
  switch (r.kind) {
    case EventKind::kSchedSwitch: {
      rt::SchedSwitchFtraceEvent m = out->set_sched_switch();
      if (in.Str(f[0], &s))
        m.set_prev_comm(s);
      if (in.Int(f[1], &v))
        m.set_prev_pid(static_cast<int32_t>(v));
      if (in.Int(f[2], &v))
        m.set_prev_prio(static_cast<int32_t>(v));
      if (in.Int(f[3], &v))
        m.set_prev_state(v);
      if (in.Str(f[4], &s))
        m.set_next_comm(s);
      if (in.Int(f[5], &v))
        m.set_next_pid(static_cast<int32_t>(v));
      if (in.Int(f[6], &v))
        m.set_next_prio(static_cast<int32_t>(v));
      break;
    }
    case EventKind::kSchedWaking: {
      rt::SchedWakingFtraceEvent m = out->set_sched_waking();
      if (in.Str(f[0], &s))
        m.set_comm(s);
      if (in.Int(f[1], &v))
        m.set_pid(static_cast<int32_t>(v));
      if (in.Int(f[2], &v))
        m.set_prio(static_cast<int32_t>(v));
      if (in.Int(f[3], &v))
        m.set_success(static_cast<int32_t>(v));
      if (in.Int(f[4], &v))
        m.set_target_cpu(static_cast<int32_t>(v));
      break;
    }
    case EventKind::kSchedProcessFork: {
      rt::SchedProcessForkFtraceEvent m = out->set_sched_process_fork();
      if (in.Str(f[0], &s))
        m.set_parent_comm(s);
      if (in.Int(f[1], &v))
        m.set_parent_pid(static_cast<int32_t>(v));
      if (in.Str(f[2], &s))
        m.set_child_comm(s);
      if (in.Int(f[3], &v))
        m.set_child_pid(static_cast<int32_t>(v));
      break;
    }
    case EventKind::kSchedProcessExit: {
      rt::SchedProcessExitFtraceEvent m = out->set_sched_process_exit();
      if (in.Str(f[0], &s))
        m.set_comm(s);
      if (in.Int(f[1], &v))
        m.set_pid(static_cast<int32_t>(v));
      if (in.Int(f[2], &v))
        m.set_tgid(static_cast<int32_t>(v));
      if (in.Int(f[3], &v))
        m.set_prio(static_cast<int32_t>(v));
      break;
    }
    case EventKind::kSchedProcessFree: {
      rt::SchedProcessFreeFtraceEvent m = out->set_sched_process_free();
      if (in.Str(f[0], &s))
        m.set_comm(s);
      if (in.Int(f[1], &v))
        m.set_pid(static_cast<int32_t>(v));
      if (in.Int(f[2], &v))
        m.set_prio(static_cast<int32_t>(v));
      break;
    }
    case EventKind::kTaskNewtask: {
      rt::TaskNewtaskFtraceEvent m = out->set_task_newtask();
      if (in.Int(f[0], &v))
        m.set_pid(static_cast<int32_t>(v));
      if (in.Str(f[1], &s))
        m.set_comm(s);
      if (in.Int(f[2], &v))
        m.set_clone_flags(static_cast<uint64_t>(v));
      if (in.Int(f[3], &v))
        m.set_oom_score_adj(static_cast<int32_t>(v));
      break;
    }
    case EventKind::kTaskRename: {
      rt::TaskRenameFtraceEvent m = out->set_task_rename();
      if (in.Int(f[0], &v))
        m.set_pid(static_cast<int32_t>(v));
      if (in.Str(f[1], &s))
        m.set_oldcomm(s);
      if (in.Str(f[2], &s))
        m.set_newcomm(s);
      if (in.Int(f[3], &v))
        m.set_oom_score_adj(static_cast<int32_t>(v));
      break;
    }
    case EventKind::kPrint: {
      rt::PrintFtraceEvent m = out->set_print();
      if (in.Int(f[0], &v))
        m.set_ip(static_cast<uint64_t>(v));
      if (in.Str(f[1], &s))
        m.set_buf(s);
      break;
    }
    case EventKind::kGeneric:
      break;  // not a typed event; TranslateEvent() routes it elsewhere
  }
}

void EventTranslator::WriteGeneric(const Resolved& r,
                                   const RawEvent& event,
                                   rt::FtraceEvent* out) {
  const RecordReader in(event, &stats_.unreadable_fields);
  rt::GenericFtraceEvent m = out->set_generic();
  m.set_event_name(r.format->name);
  for (const FormatField& field : r.format->fields) {
    if (field.kind == FieldKind::kInt) {
      int64_t v = 0;
      if (!in.Int(&field, &v))
        continue;
      rt::GenericFtraceEvent::Field g = m.add_field();
      g.set_name(field.name);
      if (field.is_signed)
        g.set_int_value(v);
      else
        g.set_uint_value(static_cast<uint64_t>(v));
    } else if (IsStringKind(field.kind)) {
      std::string_view s;
      if (!in.Str(&field, &s))
        continue;
      rt::GenericFtraceEvent::Field g = m.add_field();
      g.set_name(field.name);
      g.set_str_value(s);
    }
    // FieldKind::kOther: not representable as one value; left out.
  }
}

BundleResult EventTranslator::WriteBundle(uint32_t cpu,
                                          const uint8_t* pages,
                                          size_t num_pages,
                                          size_t page_size,
                                          rt::FtraceEventBundle* bundle) {
  BundleResult result;
  bundle->set_cpu(cpu);
  CompactSchedBuffer* compact = nullptr;
  if (compact_switch() || compact_waking()) {
    compact_.Reset();
    compact = &compact_;
  }
  for (size_t i = 0; i < num_pages; i++) {
    const uint8_t* page = pages + i * page_size;
    result.pages++;
    stats_.pages++;
    PageHeader header;
    const PageError header_error =
        ParsePageHeader(page, page_size, layout_, &header);
    if (header_error != PageError::kNone) {
      result.corrupt_pages++;
      stats_.corrupt_pages++;
      rt::FtraceEventBundle::FtraceError error = bundle->add_error();
      if (base::RangeInBounds(layout_.timestamp_offset, sizeof(uint64_t),
                              page_size)) {
        uint64_t ts;
        memcpy(&ts, page + layout_.timestamp_offset, sizeof(ts));
        error.set_timestamp(ts);
      }
      error.set_status(ParseStatusFor(header_error));
      continue;
    }
    if (header.lost_events) {
      result.lost_events = true;
      stats_.pages_with_loss++;
      if (header.lost_count_stored) {
        result.lost_count_stored += header.lost_count;
        stats_.lost_events_stored += header.lost_count;
      } else {
        result.lost_count_unknown = true;
      }
    }
    PageEventIterator it(page, layout_, header);
    RawEvent event;
    while (it.Next(&event)) {
      const size_t before =
          compact ? compact->switches() + compact->wakings() : 0;
      if (!TranslateEvent(event, bundle, compact))
        continue;
      if (compact && compact->switches() + compact->wakings() != before)
        result.compact_events++;
      else
        result.events++;
    }
    if (it.error() != PageError::kNone) {
      result.corrupt_pages++;
      stats_.corrupt_pages++;
      rt::FtraceEventBundle::FtraceError error = bundle->add_error();
      error.set_timestamp(it.timestamp());
      error.set_status(ParseStatusFor(it.error()));
    }
  }
  if (compact)
    compact->WriteTo(bundle);
  if (result.lost_events)
    bundle->set_lost_events(true);
  return result;
}

void WriteCpuStats(uint32_t cpu,
                   const CpuStats& stats,
                   rt::FtraceCpuStats* out) {
  out->set_cpu(cpu);
  out->set_entries(stats.entries);
  out->set_overrun(stats.overrun);
  out->set_commit_overrun(stats.commit_overrun);
  out->set_bytes_read(stats.bytes);  // Perfetto's name for "bytes:"
  out->set_oldest_event_ts(stats.oldest_event_ts);
  out->set_now_ts(stats.now_ts);
  out->set_dropped_events(stats.dropped_events);
  out->set_read_events(stats.read_events);
}

}  // namespace ftrace
}  // namespace ringtrace
