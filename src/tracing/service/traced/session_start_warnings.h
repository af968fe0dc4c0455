/*
 * Copyright (C) 2026 The ringtrace authors.
 */
// What a session's start tells its consumer beyond "ok": each data source of
// the config that no connected producer serves, each enabled category or
// tag pattern that matches nothing the serving producers declare, and a
// linux.process_stats that describes processes on demand in a session whose
// linux.ftrace does not record task/task_rename, so a config that records
// nothing from a source (or a misspelled category, or command lines that
// stay stale) is never accepted silently (docs/sessions.md, "Nothing
// silent"). The session still starts: an instance begins on any producer
// that registers the data source later, as in Perfetto.
//
// Pure functions over copies of the service's state; no locking, no I/O.

#ifndef SRC_TRACING_SERVICE_TRACED_SESSION_START_WARNINGS_H_
#define SRC_TRACING_SERVICE_TRACED_SESSION_START_WARNINGS_H_

#include <stddef.h>

#include <string>
#include <vector>

#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/service/traced/session_config.h"

namespace ringtrace {
namespace traced {

// A connected producer as the warnings see it.
struct ProducerOffer {
  std::string name;
  std::vector<std::string> data_sources;  // registered
  // What it declared for each data source (DataSourceCategories), in the
  // order of |data_sources|; empty for one it declared nothing for.
  std::vector<std::vector<ipc::CategoryDescriptor>> categories;
};

// At most this many warnings per start (the rest are summed up in a last
// one): a config has at most kMaxDataSources data sources, but a reply
// should stay readable.
constexpr size_t kMaxStartWarnings = 16;

// One line per data source of |config| that started no instance
// (|started[i]| false for config.data_sources[i]): either no connected
// producer registered it, or those that did are all excluded by its
// producer_name_filter (named, up to four). |started| has one entry per
// data source.
std::vector<std::string> UnstartedDataSourceWarnings(
    const SessionConfig& config,
    const std::vector<bool>& started,
    const std::vector<ProducerOffer>& producers);

// One line per enabled_categories or enabled_tags entry of a data source
// of |config| that matches no category (no tag) declared by the producers
// that serve it (registered it and pass producer_name_filter). Only when
// each of them declared categories for it: a producer that declared none
// (another SDK, a handler of its own) may record any name. The declared
// names are listed, up to eight.
std::vector<std::string> UndeclaredCategoryWarnings(
    const SessionConfig& config,
    const std::vector<ProducerOffer>& producers);

// One line (or none) when a linux.process_stats data source of |config|
// describes processes on demand (its ProcessStatsConfig has
// scan_all_processes_on_start and its quirks lack DISABLE_ON_DEMAND, as
// ringtrace_probes reads them) and |config| has a linux.ftrace data source,
// but none of them enables task/task_rename: a process described between its
// fork and its exec then keeps its parent's command line in the trace
// (docs/probes.md, "linux.process_stats"). The ftrace_events entries that
// enable it are those ringtrace_probes accepts for it: "task/task_rename"
// and "task/*" (a bare "task_rename" it refuses). A data source whose
// config does not parse is left out, as ringtrace_probes would not start
// it.
std::vector<std::string> TaskRenameWarnings(const SessionConfig& config);

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_SESSION_START_WARNINGS_H_
