/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "ringtrace/track_event_data_source.h"

#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "ringtrace/logging.h"
#include "src/tracing/track_event/track_event_instances.h"

namespace ringtrace {
namespace track_event {

struct TrackEventDataSource::Instances {
  std::mutex mutex;
  std::map<uint32_t, InstanceHandle> by_id;  // guarded by mutex
  uint64_t start_failures = 0;               // guarded by mutex
};

TrackEventDataSource::TrackEventDataSource()
    : instances_(std::make_unique<Instances>()) {}

TrackEventDataSource::~TrackEventDataSource() {
  std::map<uint32_t, InstanceHandle> instances;
  {
    std::lock_guard<std::mutex> lock(instances_->mutex);
    instances.swap(instances_->by_id);
  }
  for (const auto& [key, handle] : instances)
    StopInstance(handle);
}

void TrackEventDataSource::OnStart(const DataSourceInstanceConfig& config) {
  {
    std::lock_guard<std::mutex> lock(instances_->mutex);
    if (instances_->by_id.count(config.instance_id)) {
      instances_->start_failures++;
      RT_ELOG("track_event: instance %u is running already (two connections?)",
              config.instance_id);
      return;
    }
  }
  std::weak_ptr<Producer> producer;
  if (config.producer)
    producer = config.producer->weak_from_this();
  if (producer.expired()) {
    RT_ELOG(
        "track_event: instance %u started by a Producer that is not "
        "shared-owned: its threads get no writers",
        config.instance_id);
  }
  InstanceConfig instance;
  instance.instance_id = config.instance_id;
  instance.categories.enabled_categories = config.enabled_categories;
  instance.categories.disabled_categories = config.disabled_categories;
  instance.categories.enabled_tags = config.enabled_tags;
  instance.categories.disabled_tags = config.disabled_tags;
  instance.clear_period_ms = config.clear_period_ms;
  const shm_ring::BufferID target = config.target_buffer;
  instance.new_writer =
      [producer, target](
          base::Status* status) -> std::unique_ptr<shm_ring::TraceWriterV2> {
    // The writer keeps the Producer alive (AttachOwner); this reference
    // only bridges the call.
    std::shared_ptr<Producer> strong = producer.lock();
    if (!strong) {
      *status = base::ErrStatus("track_event: the connection is gone");
      return nullptr;
    }
    return strong->NewTraceWriter(target, status);
  };
  base::Status status;
  const InstanceHandle handle = StartInstance(std::move(instance), &status);
  std::lock_guard<std::mutex> lock(instances_->mutex);
  if (!handle.valid()) {
    instances_->start_failures++;
    RT_ELOG("%s", status.message().c_str());
    return;
  }
  instances_->by_id[config.instance_id] = handle;
}

void TrackEventDataSource::OnStop(uint32_t instance_id) {
  InstanceHandle handle;
  {
    std::lock_guard<std::mutex> lock(instances_->mutex);
    auto it = instances_->by_id.find(instance_id);
    if (it == instances_->by_id.end())
      return;  // its start failed
    handle = it->second;
    instances_->by_id.erase(it);
  }
  StopInstance(handle);
}

void TrackEventDataSource::OnFlush(uint32_t) {
  // Nothing to do: see the header.
}

std::vector<DataSourceCategory> TrackEventDataSource::Categories() const {
  std::vector<DataSourceCategory> out;
  for (const Category& category : DeclaredCategories()) {
    DataSourceCategory c;
    c.name = category.name();
    if (category.description())
      c.description = category.description();
    bool slow = false;
    for (size_t i = 0; i < category.tag_count(); i++) {
      c.tags.emplace_back(category.tag(i));
      slow = slow || c.tags.back() == "slow";
    }
    // Matched as tagged "slow" (track_event_instances.h), so published so.
    if (!slow && c.tags.size() < Category::kMaxTags &&
        c.name.rfind("disabled-by-default-", 0) == 0) {
      c.tags.emplace_back("slow");
    }
    out.push_back(std::move(c));
  }
  return out;
}

size_t TrackEventDataSource::running_instances() const {
  std::lock_guard<std::mutex> lock(instances_->mutex);
  return instances_->by_id.size();
}

uint64_t TrackEventDataSource::start_failures() const {
  std::lock_guard<std::mutex> lock(instances_->mutex);
  return instances_->start_failures;
}

namespace {

// The process-wide data source both registrations use (never destroyed:
// threads may still be inside events at exit).
TrackEventDataSource* ProcessDataSource() {
  static TrackEventDataSource* data_source = new TrackEventDataSource();
  return data_source;
}

}  // namespace

base::Status RegisterTrackEventDataSource(Tracing* tracing) {
  return tracing->RegisterDataSource(TrackEventDataSource::kName,
                                     ProcessDataSource());
}

base::Status RegisterTrackEventDataSource(
    const std::shared_ptr<Producer>& producer) {
  if (!producer)
    return base::ErrStatus(
        "track_event: no producer (Producer::Connect failed?)");
  return producer->RegisterDataSource(TrackEventDataSource::kName,
                                      ProcessDataSource());
}

}  // namespace track_event
}  // namespace ringtrace
