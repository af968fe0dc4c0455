/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/service_core.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "ringtrace/logging.h"
#include "src/base/time.h"
#include "src/tracing/core/shm_ring/writer_loss_area.h"

namespace ringtrace {
namespace traced {

namespace {

using ring_drainer::DrainMode;
using ring_drainer::PassResult;
using ring_drainer::RingDrainer;
using ring_drainer::RingId;
using trace_buffer::BufferID;
using trace_buffer::TraceBufferV2;

constexpr uint32_t kMaxProducerId = kMaxProducerID;  // ringtrace/ids.h

// A ring's payload bytes (the mapping adds the control header).
uint64_t RingBytes(const shm_ring::RingGeometry& g) {
  return uint64_t{g.chunk_size} * g.num_chunks;
}

}  // namespace

void DrainBounded(RingDrainer* drainer,
                  RingId id,
                  uint32_t num_chunks,
                  DrainMode mode) {
  uint64_t resolved = 0;
  for (uint64_t pass = 0; pass < uint64_t{num_chunks} + 2; ++pass) {
    const PassResult r = drainer->DrainRing(id, mode);
    resolved += r.positions_resolved;
    if ((r.positions_resolved == 0 && !r.more) || resolved >= num_chunks)
      break;
  }
}

namespace {

// One last drain of a ring whose producer is gone (or is being dropped):
// DrainMode::kFlush resolves every reserved position, scraping open chunks,
// so what the producer wrote before is kept.
void FinalDrain(RingDrainer* drainer, RingId id, uint32_t num_chunks) {
  DrainBounded(drainer, id, num_chunks, DrainMode::kFlush);
}

}  // namespace

ServiceCore::ServiceCore(const Options& options) : options_(options) {}

std::unique_ptr<ServiceCore> ServiceCore::Create(const Options& options,
                                                 base::Status* status) {
  *status = ValidateRingLimits(options.ring_limits);
  if (!status->ok())
    return nullptr;
  if (options.max_producers == 0 || options.max_producers > kMaxProducerId) {
    *status =
        base::ErrStatus("max producers must be in [1, %u]", kMaxProducerId);
    return nullptr;
  }
  if (options.drain_tick_ns == 0) {
    *status = base::ErrStatus("the drain tick must be > 0");
    return nullptr;
  }
  if (options.max_sessions == 0 || options.max_sessions > 1024) {
    *status = base::ErrStatus("max sessions must be in [1, 1024]");
    return nullptr;
  }
  if (options.max_total_buffer_bytes == 0) {
    *status = base::ErrStatus("the total buffer limit must be > 0");
    return nullptr;
  }
  if (options.max_total_ring_bytes < options.ring_limits.min_ring_bytes) {
    *status = base::ErrStatus("the total ring limit must hold a ring of %u",
                              options.ring_limits.min_ring_bytes);
    return nullptr;
  }
  *status = options.user_limits.Validate();
  if (!status->ok())
    return nullptr;
  std::unique_ptr<ServiceCore> core(new ServiceCore(options));
  ServiceCore* raw = core.get();
  ring_drainer::DrainLoop::Options loop_options;
  loop_options.tick_ns = options.drain_tick_ns;
  loop_options.drainer.head_grace_ns = options.head_grace_ns;
  core->stopped_fd_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!core->stopped_fd_.valid()) {
    *status = base::ErrStatus("eventfd: %s", strerror(errno));
    return nullptr;
  }
  loop_options.drainer.on_ring_stopped =
      [raw](uint32_t ring_id, trace_buffer::ProducerID,
            const ring_drainer::ProtocolError&) {
        raw->OnRingStopped(ring_id);
      };
  core->loop_.reset(new ring_drainer::DrainLoop(loop_options));
  core->loop_->Start();
  *status = base::OkStatus();
  return core;
}

ServiceCore::~ServiceCore() {
  // The loop never runs again, so no ring is read after the unmapping below.
  if (loop_)
    loop_->Stop();
  producers_.clear();
}

void ServiceCore::OnRingStopped(RingId id) {
  base::MutexLock lock(&stopped_mutex_);
  stopped_.push_back(id);
  const uint64_t one = 1;
  // Cannot block (EFD_NONBLOCK) nor fail short of 2^64 - 2 pending signals.
  if (write(stopped_fd_.get(), &one, sizeof(one)) != sizeof(one))
    RT_ELOG("cannot signal a stopped ring: %s", strerror(errno));
}

std::vector<trace_buffer::ProducerID> ServiceCore::TakeStoppedProducers() {
  uint64_t count = 0;
  if (read(stopped_fd_.get(), &count, sizeof(count)) < 0 && errno != EAGAIN)
    RT_ELOG("stopped-ring eventfd: %s", strerror(errno));
  std::vector<RingId> rings;
  {
    base::MutexLock lock(&stopped_mutex_);
    rings.swap(stopped_);
  }
  stats_.rings_stopped_protocol_error += rings.size();
  // By ring, not by ProducerID: a ring that stopped in the final drain of a
  // producer already removed has no producer now, and its id may belong to
  // a newcomer already.
  std::vector<trace_buffer::ProducerID> ids;
  for (RingId ring : rings) {
    for (const auto& kv : producers_) {
      if (kv.second.ring_id == ring)
        ids.push_back(kv.first);
    }
  }
  return ids;
}

trace_buffer::ProducerID ServiceCore::AllocateProducerId() {
  bool reused = false;
  const uint32_t id = producer_ids_.Allocate(
      [this](std::vector<bool>* held) {
        std::vector<const TraceBufferV2*> buffers;
        for (const auto& kv : sessions_) {
          for (const auto& b : kv.second->buffers)
            buffers.push_back(b->buffer.get());
        }
        // The buffers are only consistent on the drain thread.
        loop_->RunSync([&](RingDrainer*) {
          for (const TraceBufferV2* buffer : buffers) {
            buffer->ForEachSequenceProducer(
                [&](trace_buffer::ProducerID p) { (*held)[p] = true; });
          }
        });
      },
      &reused);
  if (reused)
    ++stats_.producer_ids_reused;
  return static_cast<trace_buffer::ProducerID>(id);
}

ServiceCore::Admission ServiceCore::Admit(
    const ipc::HelloMsg& hello,
    const ring_drainer::ClientIdentity& identity) {
  Admission admission;
  ipc::HelloReplyMsg& reply = admission.reply;
  if (hello.protocol_version != ipc::kProtocolVersion) {
    ++stats_.hellos_rejected_version;
    reply.status = ipc::HelloStatus::kVersionMismatch;
    admission.refusal = "protocol version " +
                        std::to_string(hello.protocol_version) + ", not " +
                        std::to_string(ipc::kProtocolVersion);
    return admission;
  }
  if (finished_) {
    ++stats_.hellos_rejected_service_error;
    reply.status = ipc::HelloStatus::kServiceError;
    admission.refusal = "the trace was already written";
    return admission;
  }
  if (producers_.size() >= options_.max_producers) {
    ++stats_.hellos_rejected_too_many;
    reply.status = ipc::HelloStatus::kTooManyProducers;
    admission.refusal = "max_producers (" +
                        std::to_string(options_.max_producers) +
                        ") are connected";
    return admission;
  }
  RingLimits ring_limits = options_.ring_limits;
  if (!AdmitWithinUserLimits(identity, &ring_limits, &admission))
    return admission;
  const trace_buffer::ProducerID id = AllocateProducerId();
  if (id == 0) {
    ++stats_.hellos_rejected_too_many;
    reply.status = ipc::HelloStatus::kTooManyProducers;
    admission.refusal =
        "every ProducerID is connected or still has data in the trace buffer";
    return admission;
  }
  const shm_ring::RingGeometry geometry = ChooseRingGeometry(
      ring_limits, hello.requested_ring_bytes, hello.requested_chunk_size);
  if (RingBytes(geometry) <
      RingBytes(ChooseRingGeometry(options_.ring_limits,
                                   hello.requested_ring_bytes,
                                   hello.requested_chunk_size))) {
    ++stats_.rings_clamped_to_budget;
  }
  base::Status status;
  std::unique_ptr<shm_ring::SharedRingRegion> region =
      shm_ring::SharedRingRegion::CreateMemfd(
          geometry, shm_ring::kWriterLossAreaSize, &status);
  if (!region) {
    RT_ELOG("cannot create a ring for producer \"%s\" (pid %d): %s",
            hello.name.c_str(), identity.pid, status.message().c_str());
    ++stats_.hellos_rejected_service_error;
    reply.status = ipc::HelloStatus::kServiceError;
    admission.refusal = "cannot create its ring: " + status.message();
    producer_ids_.Release(id);  // never used: reusable at the next scan
    return admission;
  }

  ring_drainer::RingConfig config;
  config.view = region->view();  // the service's mapping and geometry
  config.producer_id = id;
  config.identity = identity;
  // A new producer has no data source instance yet: the default session's
  // buffer at most.
  config.allowed_buffers = AllowedBuffersFor(id, nullptr);
  RingId ring_id = 0;
  loop_->RunSync([&](RingDrainer* d) { ring_id = d->AddRing(config); });

  admission.ring_fd = region->fd();
  Producer& p = producers_[id];
  p.region = std::move(region);
  p.ring_id = ring_id;
  p.identity = identity;
  p.name = hello.name;
  ++stats_.producers_seen;
  stats_.producers_connected = static_cast<uint32_t>(producers_.size());

  reply.status = ipc::HelloStatus::kOk;
  reply.producer_id = id;
  reply.chunk_size = geometry.chunk_size;
  reply.num_chunks = geometry.num_chunks;
  reply.target_buffer = default_buffer_;
  return admission;
}

bool ServiceCore::AdmitWithinUserLimits(
    const ring_drainer::ClientIdentity& identity,
    RingLimits* ring_limits,
    Admission* admission) {
  const uint32_t uid = static_cast<uint32_t>(identity.uid);
  const UserLimits limits = options_.user_limits.For(uid, options_.service_uid);
  uint64_t producers_of_uid = 0;
  uint64_t ring_bytes_of_uid = 0;
  uint64_t ring_bytes = 0;
  for (const auto& kv : producers_) {
    const uint64_t bytes = RingBytes(kv.second.region->view().geometry());
    ring_bytes += bytes;
    if (static_cast<uint32_t>(kv.second.identity.uid) == uid) {
      ++producers_of_uid;
      ring_bytes_of_uid += bytes;
    }
  }
  auto refuse = [&](std::string why) {
    ++stats_.hellos_rejected_user_limit;
    admission->reply.status = ipc::HelloStatus::kUserLimit;
    admission->refusal = std::move(why);
    return false;
  };
  if (producers_of_uid >= limits.max_producers) {
    return refuse(UserLimitMessage(
        uid, std::to_string(producers_of_uid) + " producers are connected",
        limits.max_producers, "max-producers-per-uid"));
  }
  // Both are below their limits: a sum stays below 2^64.
  const uint64_t user_left = limits.max_ring_bytes > ring_bytes_of_uid
                                 ? limits.max_ring_bytes - ring_bytes_of_uid
                                 : 0;
  const uint64_t total_left = options_.max_total_ring_bytes > ring_bytes
                                  ? options_.max_total_ring_bytes - ring_bytes
                                  : 0;
  if (!FitRingLimitsToBudget(std::min(user_left, total_left), ring_limits)) {
    if (user_left <= total_left) {
      return refuse(UserLimitMessage(
          uid,
          "its rings hold " + std::to_string(ring_bytes_of_uid >> 10) +
              " KiB, no room for another ring",
          limits.max_ring_bytes >> 20, "max-ring-mb-per-uid (MiB)"));
    }
    return refuse("every producer's rings together hold " +
                  std::to_string(ring_bytes >> 20) +
                  " MiB, no room for another ring (ringtraced "
                  "--max-total-ring-mb " +
                  std::to_string(options_.max_total_ring_bytes >> 20) + ")");
  }
  return true;
}

void ServiceCore::OnDrainRequest(trace_buffer::ProducerID id) {
  auto it = producers_.find(id);
  if (it == producers_.end())
    return;
  ++stats_.drain_requests;
  loop_->Notify(it->second.ring_id);
}

ProducerLossTable* ServiceCore::LossTableFor(trace_buffer::ProducerID id,
                                             uint32_t buffer) {
  // Every producer serves the default session: its first buffer is where
  // the producers' own writers write.
  if (default_session_ != 0 && buffer == default_buffer_) {
    auto it = sessions_.find(default_session_);
    if (it != sessions_.end())
      return &it->second->losses;
  }
  // An instance's target is one of its session's buffers (StartInstances),
  // and BufferIDs are unique among live sessions.
  for (auto& kv : sessions_) {
    Session* s = kv.second.get();
    for (const Instance& inst : s->instances) {
      if (inst.producer_id == id && inst.target == buffer)
        return &s->losses;
    }
  }
  return nullptr;
}

void ServiceCore::ForEachLossTableOf(
    trace_buffer::ProducerID id,
    const std::function<void(ProducerLossTable*)>& fn) {
  for (auto& kv : sessions_) {
    Session* s = kv.second.get();
    if (s->id == default_session_) {
      fn(&s->losses);
      continue;
    }
    for (const Instance& inst : s->instances) {
      if (inst.producer_id == id) {
        fn(&s->losses);
        break;
      }
    }
  }
}

const ProducerLossTable* ServiceCore::session_loss_table(SessionId id) const {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : &it->second->losses;
}

void ServiceCore::OnLossReport(trace_buffer::ProducerID id,
                               const ipc::DrainRequestMsg& report) {
  auto it = producers_.find(id);
  if (it == producers_.end() || !report.has_loss_report)
    return;
  const Producer& p = it->second;
  if (report.flags & ipc::kLossReportFinal) {
    ForEachLossTableOf(id, [&](ProducerLossTable* table) {
      table->OnFinalReport(id, p.name, p.identity);
    });
  }
  const uint64_t now_ns = base::MonotonicNs();
  // DecodeMessage bounded num_entries by the array's size.
  for (uint32_t i = 0; i < report.num_entries; i++) {
    const ipc::WriterLossEntry& e = report.entries[i];
    ProducerLossTable* table = LossTableFor(id, e.target_buffer);
    if (!table) {
      ++stats_.loss_entries_unattributed;
      continue;
    }
    table->OnEntry(id, p.name, p.identity, e, now_ns,
                   /*from_loss_area=*/false);
  }
}

void ServiceCore::ReadLossArea(trace_buffer::ProducerID id,
                               const Producer& producer,
                               const Session* only) {
  const shm_ring::SharedRingRegion& region = *producer.region;
  if (region.fd() < 0 ||
      region.trailer_bytes() != shm_ring::kWriterLossAreaSize)
    return;
  // One copy of the producer's bytes, parsed from the copy (the producer, if
  // alive, may still change them). pread(2) reads a never-written page as
  // zeros without committing memory for it.
  std::unique_ptr<uint8_t[]> copy(new uint8_t[shm_ring::kWriterLossAreaSize]);
  const off_t offset =
      static_cast<off_t>(region.view().geometry().MappingSize());
  const ssize_t n =
      pread(region.fd(), copy.get(), shm_ring::kWriterLossAreaSize, offset);
  if (n != static_cast<ssize_t>(shm_ring::kWriterLossAreaSize)) {
    ++stats_.loss_area_read_errors;
    RT_ELOG("producer %u: cannot read its writer loss area: %s", id,
            n < 0 ? strerror(errno) : "short read");
    return;
  }
  const uint64_t now_ns = base::MonotonicNs();
  for (size_t i = 0; i < shm_ring::kWriterLossSlots; i++) {
    const uint8_t* slot = copy.get() + i * shm_ring::kWriterLossSlotSize;
    uint32_t ids = 0;
    memcpy(&ids, slot + shm_ring::kLossSlotIdsOffset, sizeof(ids));
    if (ids == 0)
      continue;  // unused
    ipc::WriterLossEntry e;
    e.writer_id = ids & 0xffff;
    e.target_buffer = ids >> 16;
    uint64_t counters[4];
    memcpy(counters, slot + shm_ring::kLossSlotCountersOffset,
           sizeof(counters));
    e.packets_dropped_before_end = counters[0];
    e.packets_dropped_after_end = counters[1];
    e.bytes_dropped = counters[2];
    e.stall_timeouts = counters[3];
    if (!e.packets_dropped_before_end && !e.packets_dropped_after_end &&
        !e.bytes_dropped && !e.stall_timeouts) {
      continue;  // nothing lost (or a slot of a writer that lost nothing)
    }
    if (only && !std::any_of(only->buffers.begin(), only->buffers.end(),
                             [&](const std::unique_ptr<SessionBuffer>& b) {
                               return b->id == e.target_buffer;
                             })) {
      continue;  // another session's (or none's): read at its own end
    }
    ProducerLossTable* table =
        e.writer_id == 0 ? nullptr : LossTableFor(id, e.target_buffer);
    if (!table) {
      ++stats_.loss_entries_unattributed;
      continue;
    }
    table->OnEntry(id, producer.name, producer.identity, e, now_ns,
                   /*from_loss_area=*/true);
  }
}

void ServiceCore::RemoveProducer(trace_buffer::ProducerID id) {
  auto it = producers_.find(id);
  if (it == producers_.end())
    return;
  const RingId ring_id = it->second.ring_id;
  const uint32_t num_chunks = it->second.region->view().geometry().num_chunks;
  loop_->RunSync([&](RingDrainer* d) {
    FinalDrain(d, ring_id, num_chunks);
    d->RemoveRing(ring_id);
  });
  // Before its instances are forgotten: they say which sessions it served.
  ReadLossArea(id, it->second, /*only=*/nullptr);
  const uint64_t removed_at = base::ClockNs(CLOCK_BOOTTIME);
  ForEachLossTableOf(id, [&](ProducerLossTable* table) {
    table->OnProducerRemoved(id, it->second.name, it->second.identity,
                             removed_at);
  });
  // The drainer no longer references the ring: unmap it.
  producers_.erase(it);
  declared_categories_.RemoveProducer(id);
  producer_ids_.Release(id);
  stats_.producers_connected = static_cast<uint32_t>(producers_.size());
  ForgetProducerInSessions(id);
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
  EndAllSessions(Clock::now());
  finished_ = true;
  while (!producers_.empty())
    RemoveProducer(producers_.begin()->first);
  loop_->Stop();
  (void)TakeStoppedProducers();  // counts rings stopped in the final drains
  // The drain thread is joined: RunSync on a stopped loop runs inline.
  loop_->RunSync([&](RingDrainer* d) { *drainer_stats = d->TotalStats(); });
  return base::OkStatus();
}

ServiceState ServiceCore::CurrentServiceState() const {
  ServiceState s;
  s.counters = counters_;
  s.producer_stats = stats_;
  s.producers_connected = static_cast<uint32_t>(producers_.size());
  uint64_t data_sources = 0;
  for (const auto& kv : producers_)
    data_sources += kv.second.data_sources.size();
  s.data_sources_registered = static_cast<uint32_t>(data_sources);
  s.tracing_sessions = static_cast<uint32_t>(sessions_.size());
  uint64_t buffers = 0;
  for (const auto& kv : sessions_)
    buffers += kv.second->buffers.size();
  s.total_buffers = static_cast<uint32_t>(buffers);
  s.is_connected = [this](trace_buffer::ProducerID id) {
    return producers_.count(id) != 0;
  };
  return s;
}

// static
TraceContents ServiceCore::ContentsOf(
    const Session& session,
    const std::vector<TraceBufferV2*>& buffers) {
  TraceContents c;
  c.buffers = buffers;
  for (const auto& b : session.buffers)
    c.buffer_ids.push_back(b->id);
  c.counters = &session.counters;
  c.losses = &session.losses;
  return c;
}

}  // namespace traced
}  // namespace ringtrace
