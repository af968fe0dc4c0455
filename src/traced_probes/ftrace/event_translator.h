/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Raw kernel records -> Perfetto's FtraceEventBundle / FtraceEvent, written
// through the rtzero typed writers (docs/ftrace.md, "Translation").
//
// Each record is decoded with the tracefs format of its common_type
// (EventFormatTable): fields are found by name, so the offsets of the
// running kernel are used, never compiled-in ones. These events get their
// typed message, each field filled from the format's field of the same
// name (a field the kernel lacks is left out):
//
//   sched/sched_switch        prev_comm prev_pid prev_prio prev_state
//                             next_comm next_pid next_prio
//   sched/sched_waking        comm pid prio success target_cpu
//   sched/sched_process_fork  parent_comm parent_pid child_comm child_pid
//   sched/sched_process_exit  comm pid tgid prio
//   sched/sched_process_free  comm pid prio
//   task/task_newtask         pid comm clone_flags oom_score_adj
//   task/task_rename          pid oldcomm newcomm oom_score_adj
//   ftrace/print              ip buf
//
// Every other event in the table becomes a GenericFtraceEvent: its name and
// each of its own fields (not the common_* ones) as str_value (strings),
// int_value (signed integers) or uint_value (unsigned ones); fields of
// other shapes (integer arrays) are left out.
//
// Records are untrusted (a page can be corrupt): every field read is
// checked against the record's size; a field that does not fit is left out
// and counted, a record too short for its common fields is skipped with an
// error entry in the bundle, and a record whose common_type has no format
// is skipped and counted.

#ifndef SRC_TRACED_PROBES_FTRACE_EVENT_TRANSLATOR_H_
#define SRC_TRACED_PROBES_FTRACE_EVENT_TRANSLATOR_H_

#include <stddef.h>
#include <stdint.h>

#include <array>
#include <vector>

#include "protos/perfetto/trace/ftrace/ftrace_event_bundle.rtzero.h"
#include "protos/perfetto/trace/ftrace/ftrace_stats.rtzero.h"
#include "src/traced_probes/ftrace/compact_sched.h"
#include "src/traced_probes/ftrace/event_format.h"
#include "src/traced_probes/ftrace/page_parser.h"
#include "src/traced_probes/ftrace/tracefs.h"

namespace ringtrace {
namespace ftrace {

// Totals since the translator was made.
struct TranslatorStats {
  uint64_t pages = 0;
  uint64_t pages_with_loss = 0;     // RB_MISSED_EVENTS set
  uint64_t lost_events_stored = 0;  // sum of the counts pages stored
  uint64_t corrupt_pages = 0;       // header or events malformed
  uint64_t events = 0;              // FtraceEvents written
  uint64_t compact_switches = 0;    // sched_switch in compact_sched
  uint64_t compact_wakings = 0;     // sched_waking in compact_sched
  uint64_t generic_events = 0;      // ... of which GenericFtraceEvent
  uint64_t unknown_events = 0;      // common_type without a format: skipped
  uint64_t short_records = 0;       // shorter than common_type/pid: skipped
  uint64_t unreadable_fields = 0;   // a field past its record: left out
};

// What one WriteBundle() call did.
struct BundleResult {
  uint32_t pages = 0;
  // FtraceEvents written, and events written into compact_sched.
  uint64_t events = 0;
  uint64_t compact_events = 0;
  // A page said events were lost before it (the bundle's lost_events).
  bool lost_events = false;
  // Lost events the pages counted (RB_MISSED_STORED), and whether some
  // page flagged a loss without a count (then the total is not known).
  uint64_t lost_count_stored = 0;
  bool lost_count_unknown = false;
  uint32_t corrupt_pages = 0;
};

// Which message an event is written as.
enum class EventKind : uint8_t {
  kGeneric,
  kSchedSwitch,
  kSchedWaking,
  kSchedProcessFork,
  kSchedProcessExit,
  kSchedProcessFree,
  kTaskNewtask,
  kTaskRename,
  kPrint,
};

// The bundle's FtraceError status for a page error (Perfetto's values).
perfetto::protos::rtzero::FtraceParseStatus ParseStatusFor(PageError error);

class EventTranslator {
 public:
  // |formats| must outlive the translator and not change while it lives;
  // |layout| is the page header layout (ParseHeaderPage()).
  EventTranslator(const EventFormatTable* formats, const HeaderPage& layout);
  ~EventTranslator();
  EventTranslator(const EventTranslator&) = delete;
  EventTranslator& operator=(const EventTranslator&) = delete;

  // With |on|, WriteBundle() writes sched_switch and sched_waking in
  // Perfetto's compact_sched form (compact_sched.h) when the kernel's
  // formats have every field that form needs; a record whose fields do not
  // all fit in it is written as an FtraceEvent instead.
  void SetCompactSched(bool on) { compact_enabled_ = on; }
  // With a sink, TranslateEvent() appends each translated record's
  // common_pid (the thread the kernel recorded it for; 0, the idle task, is
  // left out, and so is a repeat of the tid appended last) to |*sink|,
  // which the caller empties (linux.process_stats' on-demand dumps, see
  // seen_pids.h). Null: none.
  void SetPidSink(std::vector<int32_t>* sink) { pid_sink_ = sink; }
  // With a sink, TranslateEvent() appends the renamed task's pid of each
  // task/task_rename record (an exec renames the task that execs; prctl
  // PR_SET_NAME a thread) to |*sink|, which the caller empties: the
  // process a tid belongs to may have been described before it exec'd
  // (seen_pids.h). Null: none.
  void SetRenameSink(std::vector<int32_t>* sink) { rename_sink_ = sink; }
  // Whether compact_sched is on and applies to switches / wakings.
  bool compact_switch() const { return compact_enabled_ && compact_switch_; }
  bool compact_waking() const { return compact_enabled_ && compact_waking_; }

  // Writes |event| as bundle->add_event() (or, with |compact| and the
  // event one compact_sched takes, into |compact|). False when nothing was
  // written: its common_type has no format (counted), or the record is
  // shorter than its common fields (counted, and an error entry added).
  bool TranslateEvent(const RawEvent& event,
                      perfetto::protos::rtzero::FtraceEventBundle* bundle,
                      CompactSchedBuffer* compact = nullptr);

  // One bundle from |num_pages| pages of |page_size| bytes read from
  // |cpu|'s trace_pipe_raw: sets cpu, adds an event per record in page
  // order, sets lost_events when a page says events were lost before it,
  // and adds an error entry (timestamp, status) for each corrupt page (its
  // events before the fault are kept).
  BundleResult WriteBundle(uint32_t cpu,
                           const uint8_t* pages,
                           size_t num_pages,
                           size_t page_size,
                           perfetto::protos::rtzero::FtraceEventBundle* bundle);

  const TranslatorStats& stats() const { return stats_; }

  // How events of |id| are written; kGeneric also for an unknown id.
  EventKind KindOf(uint32_t id) const {
    return id < by_id_.size() ? by_id_[id].kind : EventKind::kGeneric;
  }

 private:
  static constexpr size_t kMaxTypedFields = 7;
  struct Resolved {
    const EventFormat* format = nullptr;
    EventKind kind = EventKind::kGeneric;
    const FormatField* common_pid = nullptr;
    const FormatField* common_flags = nullptr;
    // The typed message's fields in the order of the table in the .cc.
    std::array<const FormatField*, kMaxTypedFields> fields{};
  };

  void WriteTyped(const Resolved& r,
                  const RawEvent& event,
                  perfetto::protos::rtzero::FtraceEvent* out);
  // Adds |event| to |compact|; false (nothing added) when a field it needs
  // is past the record.
  bool AddCompact(const Resolved& r,
                  const RawEvent& event,
                  CompactSchedBuffer* compact);
  void WriteGeneric(const Resolved& r,
                    const RawEvent& event,
                    perfetto::protos::rtzero::FtraceEvent* out);

  const HeaderPage layout_;
  // Where every record has its common_type (the same in every format).
  FormatField common_type_;
  std::vector<Resolved> by_id_;
  TranslatorStats stats_;
  bool compact_enabled_ = false;
  // The formats have every field of the compact form.
  bool compact_switch_ = false;
  bool compact_waking_ = false;
  CompactSchedBuffer compact_;
  std::vector<int32_t>* pid_sink_ = nullptr;
  std::vector<int32_t>* rename_sink_ = nullptr;
};

// Writes one CPU's per_cpu/cpuN/stats as FtraceCpuStats.
void WriteCpuStats(uint32_t cpu,
                   const CpuStats& stats,
                   perfetto::protos::rtzero::FtraceCpuStats* out);

}  // namespace ftrace
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_FTRACE_EVENT_TRANSLATOR_H_
