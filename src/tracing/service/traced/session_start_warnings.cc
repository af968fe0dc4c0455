/*
 * Copyright (C) 2026 The ringtrace authors.
 */
#include "src/tracing/service/traced/session_start_warnings.h"

#include <algorithm>

#include "ringtrace/logging.h"

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

}  // namespace

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
