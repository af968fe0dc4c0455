/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/service_core.h"

#include <utility>
#include <vector>

namespace ringtrace {
namespace traced {

namespace {

using ring_drainer::RingDrainer;
using trace_buffer::ProducerID;

constexpr uint32_t kMaxProducerId = kMaxProducerID;  // ringtrace/ids.h

base::Status ValidateOptions(const ServiceCore::Options& options) {
  base::Status status = ValidateRingLimits(options.ring_limits);
  if (!status.ok())
    return status;
  if (options.max_producers == 0 || options.max_producers > kMaxProducerId)
    return base::ErrStatus("max producers must be in [1, %u]", kMaxProducerId);
  if (options.drain_tick_ns == 0)
    return base::ErrStatus("the drain tick must be > 0");
  if (options.max_sessions == 0 || options.max_sessions > 1024)
    return base::ErrStatus("max sessions must be in [1, 1024]");
  if (options.max_total_buffer_bytes == 0)
    return base::ErrStatus("the total buffer limit must be > 0");
  if (options.file_write_slice_bytes == 0)
    return base::ErrStatus("the file write slice must be > 0");
  if (options.max_total_ring_bytes < options.ring_limits.min_ring_bytes) {
    return base::ErrStatus("the total ring limit must hold a ring of %u",
                           options.ring_limits.min_ring_bytes);
  }
  return options.user_limits.Validate();
}

}  // namespace

ServiceCore::ServiceCore(const Options& options) : options_(options) {}

std::unique_ptr<ServiceCore> ServiceCore::Create(const Options& options,
                                                 base::Status* status) {
  *status = ValidateOptions(options);
  if (!status->ok())
    return nullptr;
  std::unique_ptr<ServiceCore> core(new ServiceCore(options));
  core->stopped_rings_ = StoppedRings::Create(status);
  if (!core->stopped_rings_)
    return nullptr;
  StoppedRings* stopped = core->stopped_rings_.get();
  ring_drainer::DrainLoop::Options loop_options;
  loop_options.tick_ns = options.drain_tick_ns;
  loop_options.drainer.head_grace_ns = options.head_grace_ns;
  loop_options.drainer.on_ring_stopped =
      [stopped](uint32_t ring_id, ProducerID,
                const ring_drainer::ProtocolError&) { stopped->Push(ring_id); };
  core->loop_.reset(new ring_drainer::DrainLoop(loop_options));
  ring_drainer::DrainLoop* loop = core->loop_.get();

  ProducerTable::Options producer_options;
  producer_options.ring_limits = options.ring_limits;
  producer_options.max_producers = options.max_producers;
  producer_options.max_total_ring_bytes = options.max_total_ring_bytes;
  producer_options.user_limits = options.user_limits;
  producer_options.service_uid = options.service_uid;
  ServiceCore* raw = core.get();
  core->producers_.reset(new ProducerTable(
      producer_options, loop, stopped, [raw](std::vector<bool>* held) {
        raw->table_->CollectSequenceProducers(held);
      }));
  SessionTable::Options session_options;
  session_options.max_sessions = options.max_sessions;
  session_options.max_total_buffer_bytes = options.max_total_buffer_bytes;
  session_options.user_limits = options.user_limits;
  core->table_.reset(new SessionTable(session_options, options.service_uid,
                                      loop, core->producers_.get()));
  core->writer_.reset(new SessionWriter(loop, core->producers_.get(),
                                        core->table_.get(),
                                        options.file_write_slice_bytes));
  core->sessions_.reset(
      new TracingSessions(options.service_uid, loop, core->producers_.get(),
                          core->table_.get(), core->writer_.get()));
  core->loop_->Start();
  *status = base::OkStatus();
  return core;
}

ServiceCore::~ServiceCore() {
  // The loop never runs again, so no ring is read after the unmapping (the
  // members' destruction: the sessions' buffers, then the producers'
  // rings).
  if (loop_)
    loop_->Stop();
}

ServiceCore::Admission ServiceCore::Admit(
    const ipc::HelloMsg& hello,
    const ring_drainer::ClientIdentity& identity) {
  // A new producer has no data source instance yet: the default session's
  // buffer at most.
  return producers_->Admit(
      hello, identity, table_->default_buffer(),
      [this](ProducerID id) { return table_->AllowedBuffersFor(id, nullptr); });
}

base::Status ServiceCore::RegisterDataSource(ProducerID id,
                                             const std::string& name,
                                             Clock::time_point) {
  if (!producers_->has_producer(id))
    return base::OkStatus();
  base::Status status = producers_->AddDataSource(id, name);
  if (status.ok())
    sessions_->OnDataSourceRegistered(id);
  return status;
}

void ServiceCore::OnLossReport(ProducerID id,
                               const ipc::DrainRequestMsg& report) {
  const ProducerTable::Producer* p = producers_->Find(id);
  if (!p || !report.has_loss_report)
    return;
  producers_->mutable_stats()->loss_entries_unattributed +=
      table_->RouteLossReport(id, *p, report);
}

void ServiceCore::RemoveProducer(ProducerID id) {
  if (!producers_->has_producer(id))
    return;
  producers_->DetachRing(id);
  sessions_->OnProducerRemoving(id);
  producers_->Erase(id);
  sessions_->ForgetProducer(id);
}

ring_drainer::RingStats ServiceCore::DrainerStats() {
  ring_drainer::RingStats stats;
  loop_->RunSync([&](RingDrainer* d) { stats = d->TotalStats(); });
  return stats;
}

base::Status ServiceCore::Finish(ring_drainer::RingStats* drainer_stats) {
  *drainer_stats = ring_drainer::RingStats();
  if (finished_)
    return base::ErrStatus("the service core was already finished");
  sessions_->EndAllSessions(Clock::now());
  finished_ = true;
  table_->Close();
  producers_->Close();
  while (producers_->num_producers() != 0)
    RemoveProducer(producers_->producers().begin()->first);
  loop_->Stop();
  // Counts the rings stopped in the final drains.
  (void)producers_->TakeStoppedProducers();
  // The drain thread is joined: RunSync on a stopped loop runs inline.
  loop_->RunSync([&](RingDrainer* d) { *drainer_stats = d->TotalStats(); });
  return base::OkStatus();
}

}  // namespace traced
}  // namespace ringtrace
