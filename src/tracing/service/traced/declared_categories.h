/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// DeclaredCategories: the categories each connected producer declared for
// its data sources (DataSourceCategories messages, wire_protocol.h;
// Perfetto's TrackEventDescriptor), kept while the producer is connected.
// ProducerTable owns one: it checks that the data source is registered,
// stores through Add() and forgets a producer with RemoveProducer(); its
// ListDataSources() joins them with the registrations, for `ringtrace
// --query` and for telling a user which enabled patterns match nothing.
//
// Invariants: per producer at most ipc::kMaxDeclaredCategoriesPerProducer
// categories in all its data sources, names distinct per data source,
// each entry valid as the decoder checked it (the producer is hostile: a
// repeated name or one too many is an error, and nothing of that message
// is kept).
//
// Thread model: the service thread only (as ProducerTable).

#ifndef SRC_TRACING_SERVICE_TRACED_DECLARED_CATEGORIES_H_
#define SRC_TRACING_SERVICE_TRACED_DECLARED_CATEGORIES_H_

#include <stddef.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ringtrace/status.h"
#include "src/tracing/ipc/wire_protocol.h"
#include "src/tracing/service/trace_buffer_v2/trace_buffer_v2.h"

namespace ringtrace {
namespace traced {

// A connected producer's data sources, in registration order, each with the
// categories it declared (in the order declared; none for a data source
// that declares none).
struct ProducerDataSources {
  trace_buffer::ProducerID producer_id = 0;
  std::string producer_name;
  struct DataSource {
    std::string name;
    std::vector<ipc::CategoryDescriptor> categories;
  };
  std::vector<DataSource> data_sources;
};

class DeclaredCategories {
 public:
  // Appends |categories| to what |producer| declared for |data_source|.
  // Errors (nothing is added): a name |producer| declared for
  // |data_source| already, or declared twice in |categories|, or more
  // than ipc::kMaxDeclaredCategoriesPerProducer for |producer| in all.
  base::Status Add(trace_buffer::ProducerID producer,
                   const std::string& data_source,
                   const std::vector<ipc::CategoryDescriptor>& categories);

  // Forgets everything |producer| declared.
  void RemoveProducer(trace_buffer::ProducerID producer);

  // What |producer| declared for |data_source| (empty: nothing).
  const std::vector<ipc::CategoryDescriptor>& Of(
      trace_buffer::ProducerID producer,
      const std::string& data_source) const;
  // The number of categories |producer| declared, all data sources.
  size_t CountOf(trace_buffer::ProducerID producer) const;
  // Producers that declared anything.
  size_t num_producers() const { return producers_.size(); }

 private:
  struct DataSource {
    std::vector<ipc::CategoryDescriptor> categories;
    std::set<std::string> names;
  };
  struct Producer {
    size_t count = 0;
    std::map<std::string, DataSource> data_sources;
  };
  std::map<trace_buffer::ProducerID, Producer> producers_;
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_DECLARED_CATEGORIES_H_
