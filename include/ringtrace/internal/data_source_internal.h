/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// What ringtrace/data_source.h expands to: the type-erased state of the
// DataSource<T> template (namespace internal, not API). Included by
// data_source.h; implemented in src/tracing/data_source/data_source.cc,
// whose header comment has the stop protocol these pieces take part in.

#ifndef INCLUDE_RINGTRACE_INTERNAL_DATA_SOURCE_INTERNAL_H_
#define INCLUDE_RINGTRACE_INTERNAL_DATA_SOURCE_INTERNAL_H_

#ifndef INCLUDE_RINGTRACE_DATA_SOURCE_H_
#error "include ringtrace/data_source.h, not this file"
#endif

#include <stdint.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

#include "ringtrace/status.h"
#include "ringtrace/trace_writer_v2.h"

namespace ringtrace {

class DataSourceBase;
struct DataSourceDescriptor;
struct DataSourceStats;
class Tracing;

namespace internal {

// Instances of one data source type running at once in the process.
constexpr uint32_t kMaxDataSourceInstances = 8;
// Data source types (DataSource<T> classes registered) in the process.
constexpr uint32_t kMaxDataSourceTypes = 32;

// What a running instance shares with the threads that trace into it: the
// app's DataSource object and the lock of GetDataSourceLocked().
struct DataSourceInstanceShared {
  // Held around every callback of |object| and by GetDataSourceLocked();
  // recursive, so that a Trace() lambda run from OnStart may take it.
  std::recursive_mutex mutex;
  // Set before the instance accepts Trace(), destroyed (under |mutex|) only
  // after no Trace() lambda can run for it any more.
  std::unique_ptr<DataSourceBase> object;
};

// The calling thread's state for one instance of one type: its writer (its
// packet sequence) and its incremental state. Only that thread touches it.
struct DataSourceThreadInstance {
  uint64_t generation = 0;  // of the instance it writes for; 0: none
  std::shared_ptr<DataSourceInstanceShared> instance;
  std::unique_ptr<shm_ring::TraceWriterV2> writer;
  // The app's incremental state (Traits::IncrementalStateType), created on
  // first use, destroyed at every reset with |delete_incremental_state|.
  void* incremental_state = nullptr;
  void (*delete_incremental_state)(void*) = nullptr;
  // The next packet is the first of a new incremental-state generation.
  bool incremental_state_cleared = true;
  uint64_t loss_events_seen = 0;
  uint64_t last_reset_ns = 0;
  // The instance's clear period; 0: none.
  uint64_t clear_period_ns = 0;
};

// Gives StopArgs its closure (data_source.cc).
class DataSourceStopper;

// Deletes the incremental state (if any) and marks the next packet
// SEQ_INCREMENTAL_STATE_CLEARED.
void ResetIncrementalState(DataSourceThreadInstance* ti);

// One DataSource<T> class: the inline fast path reads |enabled| only.
struct DataSourceTypeState {
  // Bit i is set while instance slot i accepts Trace() (from its OnStart
  // until its stop completes). Set with a release RMW that pairs with the
  // acquire load in Trace(); otherwise a hint that spares a disabled
  // Trace() the work: the slot generations (data_source.cc) decide what is
  // written.
  std::atomic<uint32_t> enabled{0};
  // The registered type (data_source.cc); null until Register(), then
  // never changed. Stored with release by Register(), loaded with acquire
  // by the out-of-line paths (a bit in |enabled| implies it is set).
  std::atomic<void*> impl{nullptr};
};

// Registers the type: creates its impl (once) and registers its handler
// with |tracing| under descriptor.name.
base::Status RegisterDataSourceType(
    DataSourceTypeState* type,
    Tracing* tracing,
    const DataSourceDescriptor& descriptor,
    std::function<std::unique_ptr<DataSourceBase>()> factory,
    bool has_incremental_state);

// The instances of one Trace() call on the calling thread. Construction
// marks the thread as tracing the instances of |mask| (W1 of the stop
// protocol); Next() returns the thread's state of the next one that still
// runs (W2), with its writer created and its incremental state reset as
// due, or null when none is left; destruction ends the call (W3).
class TraceScope {
 public:
  TraceScope(DataSourceTypeState* type, uint32_t mask);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

  DataSourceThreadInstance* Next();
  // The slot of the instance Next() returned last.
  uint32_t instance_index() const { return index_; }

 private:
  DataSourceTypeState* const type_;
  void* thread_ = nullptr;  // the thread's state of this type; null: none
  uint32_t pending_ = 0;
  uint32_t index_ = 0;
};

DataSourceStats GetDataSourceStats(const DataSourceTypeState* type);

}  // namespace internal
}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_INTERNAL_DATA_SOURCE_INTERNAL_H_
