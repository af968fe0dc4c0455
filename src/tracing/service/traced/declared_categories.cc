/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/declared_categories.h"

namespace ringtrace {
namespace traced {

base::Status DeclaredCategories::Add(
    trace_buffer::ProducerID producer,
    const std::string& data_source,
    const std::vector<ipc::CategoryDescriptor>& categories) {
  auto it = producers_.find(producer);
  const size_t count = it == producers_.end() ? 0 : it->second.count;
  // count <= the limit always: the subtraction cannot wrap.
  if (categories.size() > ipc::kMaxDeclaredCategoriesPerProducer - count) {
    return base::ErrStatus(
        "more than %zu categories declared (%zu, then %zu more)",
        ipc::kMaxDeclaredCategoriesPerProducer, count, categories.size());
  }
  // Checked whole before anything is kept.
  std::set<std::string> added;
  const DataSource* known = nullptr;
  if (it != producers_.end()) {
    auto ds = it->second.data_sources.find(data_source);
    if (ds != it->second.data_sources.end())
      known = &ds->second;
  }
  for (const ipc::CategoryDescriptor& c : categories) {
    if ((known && known->names.count(c.name) != 0) ||
        !added.insert(c.name).second) {
      return base::ErrStatus(
          "category \"%s\" of data source \"%s\" declared twice",
          c.name.c_str(), data_source.c_str());
    }
  }
  Producer& p = producers_[producer];
  DataSource& ds = p.data_sources[data_source];
  ds.categories.insert(ds.categories.end(), categories.begin(),
                       categories.end());
  ds.names.insert(added.begin(), added.end());
  p.count += categories.size();
  return base::OkStatus();
}

void DeclaredCategories::RemoveProducer(trace_buffer::ProducerID producer) {
  producers_.erase(producer);
}

const std::vector<ipc::CategoryDescriptor>& DeclaredCategories::Of(
    trace_buffer::ProducerID producer,
    const std::string& data_source) const {
  static const std::vector<ipc::CategoryDescriptor>* const kNone =
      new std::vector<ipc::CategoryDescriptor>();  // never destroyed
  auto it = producers_.find(producer);
  if (it == producers_.end())
    return *kNone;
  auto ds = it->second.data_sources.find(data_source);
  return ds == it->second.data_sources.end() ? *kNone : ds->second.categories;
}

size_t DeclaredCategories::CountOf(trace_buffer::ProducerID producer) const {
  auto it = producers_.find(producer);
  return it == producers_.end() ? 0 : it->second.count;
}

}  // namespace traced
}  // namespace ringtrace
