/*
 * Copyright (C) 2026 The ringtrace authors.
 */
#include "src/tracing/service/traced/session_start_warnings.h"

#include <algorithm>
#include <string>
#include <utility>

#include "protos/perfetto/config/trace_config.pb.h"
#include "ringtrace/logging.h"
#include "src/base/name_pattern.h"

namespace ringtrace {
namespace traced {
namespace {

constexpr size_t kMaxNamedProducers = 4;

bool Registers(const ProducerOffer& p, const std::string& data_source) {
  return std::find(p.data_sources.begin(), p.data_sources.end(), data_source) !=
         p.data_sources.end();
}

// "a", "a, b", ..., the first kMaxNamedProducers and "and N more".
std::string NameList(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < kMaxNamedProducers; ++i) {
    if (i)
      out += ", ";
    out += "\"" + names[i] + "\"";
  }
  if (names.size() > kMaxNamedProducers)
    out +=
        " and " + std::to_string(names.size() - kMaxNamedProducers) + " more";
  return out;
}

std::string DescribeOne(const SessionConfig::DataSource& ds,
                        const std::vector<ProducerOffer>& producers) {
  std::vector<std::string> excluded;
  for (const ProducerOffer& p : producers) {
    if (Registers(p, ds.name))
      excluded.push_back(p.name);
  }
  if (excluded.empty()) {
    return "data source \"" + ds.name +
           "\": no connected producer provides it (it starts on any "
           "producer that registers it during the session)";
  }
  return "data source \"" + ds.name + "\": producer_name_filter excludes " +
         std::string(excluded.size() == 1 ? "the producer" : "every producer") +
         " that provides it (" + NameList(excluded) + ")";
}

constexpr size_t kMaxNamedCategories = 8;

bool Serves(const ProducerOffer& p, const SessionConfig::DataSource& ds) {
  return Registers(p, ds.name) &&
         (ds.producer_name_filter.empty() ||
          std::find(ds.producer_name_filter.begin(),
                    ds.producer_name_filter.end(),
                    p.name) != ds.producer_name_filter.end());
}

// The categories |p| declared for |data_source|; null if none.
const std::vector<ipc::CategoryDescriptor>* DeclaredFor(
    const ProducerOffer& p,
    const std::string& data_source) {
  for (size_t i = 0; i < p.data_sources.size() && i < p.categories.size();
       ++i) {
    if (p.data_sources[i] == data_source)
      return p.categories[i].empty() ? nullptr : &p.categories[i];
  }
  return nullptr;
}

std::string CategoryNames(
    const std::vector<const ipc::CategoryDescriptor*>& declared) {
  std::vector<std::string> names;
  for (const ipc::CategoryDescriptor* c : declared) {
    if (std::find(names.begin(), names.end(), c->name) == names.end())
      names.push_back(c->name);
  }
  std::string out;
  for (size_t i = 0; i < names.size() && i < kMaxNamedCategories; ++i)
    out += (i ? ", \"" : "\"") + names[i] + "\"";
  if (names.size() > kMaxNamedCategories)
    out +=
        " and " + std::to_string(names.size() - kMaxNamedCategories) + " more";
  return out;
}

// The data sources ringtrace_probes serves (probes_data_sources.h).
constexpr char kFtraceDataSource[] = "linux.ftrace";
constexpr char kProcessStatsDataSource[] = "linux.process_stats";

// As ProcessStatsOptionsFromConfig() sets ProcessStatsOptions::on_demand.
bool DescribesOnDemand(const perfetto::protos::ProcessStatsConfig& config) {
  if (!config.scan_all_processes_on_start())
    return false;
  for (int quirk : config.quirks()) {
    if (quirk == perfetto::protos::ProcessStatsConfig::DISABLE_ON_DEMAND)
      return false;
  }
  return true;
}

// Whether FtraceSource::EnableEvents() enables task/task_rename for the
// ftrace_events entry |entry|: "group/*" is the group's every event, and
// any other entry must be "group/name" exactly (ftrace::SplitEventName()),
// so a bare "task_rename", or "task/task_*", enables nothing.
bool EnablesTaskRename(const std::string& entry) {
  return entry == "task/task_rename" || entry == "task/*";
}

}  // namespace

std::vector<std::string> TaskRenameWarnings(const SessionConfig& config) {
  bool on_demand = false;
  bool ftrace = false;
  bool renames = false;
  for (const SessionConfig::DataSource& ds : config.data_sources) {
    const bool is_ftrace = ds.name == kFtraceDataSource;
    if (!is_ftrace && ds.name != kProcessStatsDataSource)
      continue;
    // Hostile bytes: one that does not parse is not started by the
    // probes either, and says nothing here.
    perfetto::protos::DataSourceConfig parsed;
    if (!parsed.ParseFromString(ds.config))
      continue;
    if (!is_ftrace) {
      on_demand |= DescribesOnDemand(parsed.process_stats_config());
      continue;
    }
    ftrace = true;
    for (const std::string& entry : parsed.ftrace_config().ftrace_events())
      renames |= EnablesTaskRename(entry);
  }
  if (!on_demand || !ftrace || renames)
    return {};
  return {std::string("data source \"") + kProcessStatsDataSource +
          "\": it describes processes on demand, but no " + kFtraceDataSource +
          " data source of this session records task/task_rename: a process "
          "first seen between its fork and its exec keeps its parent's "
          "command line in the trace; add \"task/task_rename\" to "
          "ftrace_events"};
}

std::vector<std::string> UndeclaredCategoryWarnings(
    const SessionConfig& config,
    const std::vector<ProducerOffer>& producers) {
  std::vector<std::string> out;
  for (const SessionConfig::DataSource& ds : config.data_sources) {
    if (ds.enabled_categories.empty() && ds.enabled_tags.empty())
      continue;
    std::vector<const ipc::CategoryDescriptor*> declared;
    bool any = false, all_declared = true;
    for (const ProducerOffer& p : producers) {
      if (!Serves(p, ds))
        continue;
      any = true;
      const std::vector<ipc::CategoryDescriptor>* mine =
          DeclaredFor(p, ds.name);
      if (!mine) {
        all_declared = false;
        break;
      }
      for (const ipc::CategoryDescriptor& c : *mine)
        declared.push_back(&c);
    }
    if (!any || !all_declared)
      continue;
    const std::string names = CategoryNames(declared);
    for (const std::string& entry : ds.enabled_categories) {
      const bool matched =
          std::any_of(declared.begin(), declared.end(),
                      [&](const ipc::CategoryDescriptor* c) {
                        return base::NameOrPatternMatches(entry, c->name);
                      });
      if (!matched) {
        std::string line = "data source \"" + ds.name;
        line += "\": enabled_categories \"";
        line += entry;
        line += "\" matches no category the connected producers declare (";
        line += names;
        line += ")";
        out.push_back(std::move(line));
      }
    }
    for (const std::string& entry : ds.enabled_tags) {
      const bool matched = std::any_of(
          declared.begin(), declared.end(),
          [&](const ipc::CategoryDescriptor* c) {
            return std::any_of(c->tags.begin(), c->tags.end(),
                               [&](const std::string& tag) {
                                 return base::NameOrPatternMatches(entry, tag);
                               });
          });
      if (!matched) {
        std::string line = "data source \"" + ds.name;
        line += "\": enabled_tags \"";
        line += entry;
        line +=
            "\" matches no tag of a category the connected producers "
            "declare (";
        line += names;
        line += ")";
        out.push_back(std::move(line));
      }
    }
  }
  return out;
}

std::vector<std::string> UnstartedDataSourceWarnings(
    const SessionConfig& config,
    const std::vector<bool>& started,
    const std::vector<ProducerOffer>& producers) {
  RT_CHECK(started.size() == config.data_sources.size());
  std::vector<std::string> out;
  size_t more = 0;
  for (size_t i = 0; i < config.data_sources.size(); ++i) {
    if (started[i])
      continue;
    // Kept as the last line, for the ones beyond the limit.
    if (out.size() + 1 >= kMaxStartWarnings) {
      ++more;
      continue;
    }
    out.push_back(DescribeOne(config.data_sources[i], producers));
  }
  if (more)
    out.push_back(std::to_string(more) +
                  " more data sources: no connected producer serves them");
  return out;
}

}  // namespace traced
}  // namespace ringtrace
