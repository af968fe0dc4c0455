/*
 * Copyright (C) 2026 The ringtrace authors.
 */
// What a session's start tells its consumer beyond "ok": each data source of
// the config that no connected producer serves, and each enabled category
// or tag pattern that matches nothing the serving producers declare, so a
// config that records nothing from a source (or a misspelled category) is
// never accepted silently (docs/sessions.md, "Nothing silent"). The session
// still starts: an instance begins on any producer that registers the data
// source later, as in Perfetto.
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

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_SESSION_START_WARNINGS_H_
