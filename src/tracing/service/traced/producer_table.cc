/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/producer_table.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "ringtrace/logging.h"
#include "src/tracing/core/shm_ring/writer_loss_area.h"
#include "src/tracing/service/traced/session_config.h"

namespace ringtrace {
namespace traced {

namespace {

using ring_drainer::DrainMode;
using ring_drainer::PassResult;
using ring_drainer::RingDrainer;
using ring_drainer::RingId;
using ring_drainer::TargetBuffer;
using trace_buffer::ProducerID;

// A ring's payload bytes (the mapping adds the control header).
uint64_t RingBytes(const shm_ring::RingGeometry& g) {
  return uint64_t{g.chunk_size} * g.num_chunks;
}

// Slot |slot| of a writer loss area copy as a loss entry.
ipc::WriterLossEntry ParseLossSlot(const uint8_t* slot) {
  uint32_t ids = 0;
  memcpy(&ids, slot + shm_ring::kLossSlotIdsOffset, sizeof(ids));
  ipc::WriterLossEntry e;
  e.writer_id = ids & 0xffff;
  e.target_buffer = ids >> 16;
  uint64_t counters[4];
  memcpy(counters, slot + shm_ring::kLossSlotCountersOffset, sizeof(counters));
  e.packets_dropped_before_end = counters[0];
  e.packets_dropped_after_end = counters[1];
  e.bytes_dropped = counters[2];
  e.stall_timeouts = counters[3];
  return e;
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

ProducerTable::ProducerTable(const Options& options,
                             ring_drainer::DrainLoop* loop,
                             StoppedRings* stopped,
                             SequenceScan scan)
    : options_(options),
      loop_(loop),
      stopped_(stopped),
      scan_(std::move(scan)) {}

const ProducerTable::Producer* ProducerTable::Find(ProducerID id) const {
  auto it = producers_.find(id);
  return it == producers_.end() ? nullptr : &it->second;
}

size_t ProducerTable::num_data_sources() const {
  size_t n = 0;
  for (const auto& kv : producers_)
    n += kv.second.data_sources.size();
  return n;
}

std::vector<ProducerID> ProducerTable::TakeStoppedProducers() {
  const std::vector<RingId> rings = stopped_->Take();
  stats_.rings_stopped_protocol_error += rings.size();
  // By ring, not by ProducerID: a ring that stopped in the final drain of a
  // producer already removed has no producer now, and its id may belong to
  // a newcomer already.
  std::vector<ProducerID> ids;
  for (RingId ring : rings) {
    for (const auto& kv : producers_) {
      if (kv.second.ring_id == ring)
        ids.push_back(kv.first);
    }
  }
  return ids;
}

ProducerID ProducerTable::AllocateProducerId() {
  bool reused = false;
  const uint32_t id = producer_ids_.Allocate(scan_, &reused);
  if (reused)
    ++stats_.producer_ids_reused;
  return static_cast<ProducerID>(id);
}

bool ProducerTable::CheckHello(const ipc::HelloMsg& hello,
                               Admission* admission) {
  ipc::HelloReplyMsg& reply = admission->reply;
  if (hello.protocol_version != ipc::kProtocolVersion) {
    ++stats_.hellos_rejected_version;
    reply.status = ipc::HelloStatus::kVersionMismatch;
    admission->refusal = "protocol version " +
                         std::to_string(hello.protocol_version) + ", not " +
                         std::to_string(ipc::kProtocolVersion);
    return false;
  }
  if (closed_) {
    ++stats_.hellos_rejected_service_error;
    reply.status = ipc::HelloStatus::kServiceError;
    admission->refusal = "the trace was already written";
    return false;
  }
  if (producers_.size() >= options_.max_producers) {
    ++stats_.hellos_rejected_too_many;
    reply.status = ipc::HelloStatus::kTooManyProducers;
    admission->refusal = "max_producers (" +
                         std::to_string(options_.max_producers) +
                         ") are connected";
    return false;
  }
  return true;
}

ProducerTable::Admission ProducerTable::Admit(
    const ipc::HelloMsg& hello,
    const ring_drainer::ClientIdentity& identity,
    trace_buffer::BufferID target_buffer,
    const std::function<std::vector<TargetBuffer>(ProducerID)>& allowed) {
  Admission admission;
  ipc::HelloReplyMsg& reply = admission.reply;
  if (!CheckHello(hello, &admission))
    return admission;
  RingLimits ring_limits = options_.ring_limits;
  if (!AdmitWithinUserLimits(identity, &ring_limits, &admission))
    return admission;
  const ProducerID id = AllocateProducerId();
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
  config.allowed_buffers = allowed(id);
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
  reply.target_buffer = target_buffer;
  return admission;
}

bool ProducerTable::AdmitWithinUserLimits(
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

void ProducerTable::OnDrainRequest(ProducerID id) {
  auto it = producers_.find(id);
  if (it == producers_.end())
    return;
  ++stats_.drain_requests;
  loop_->Notify(it->second.ring_id);
}

base::Status ProducerTable::AddDataSource(ProducerID id,
                                          const std::string& name) {
  Producer& p = producers_.at(id);
  if (!IsPrintableName(name, ipc::kMaxDataSourceNameSize))
    return base::ErrStatus("invalid data source name");
  if (std::find(p.data_sources.begin(), p.data_sources.end(), name) !=
      p.data_sources.end()) {
    return base::ErrStatus("data source \"%s\" registered twice", name.c_str());
  }
  if (p.data_sources.size() >= ipc::kMaxDataSourcesPerProducer) {
    return base::ErrStatus("more than %zu data sources registered",
                           ipc::kMaxDataSourcesPerProducer);
  }
  p.data_sources.push_back(name);
  ++stats_.data_sources_seen;
  return base::OkStatus();
}

base::Status ProducerTable::DeclareCategories(
    ProducerID id,
    const ipc::DataSourceCategoriesMsg& msg) {
  auto it = producers_.find(id);
  if (it == producers_.end())
    return base::OkStatus();
  const std::vector<std::string>& registered = it->second.data_sources;
  if (std::find(registered.begin(), registered.end(), msg.data_source) ==
      registered.end()) {
    return base::ErrStatus(
        "categories declared for data source \"%s\", never registered",
        msg.data_source.c_str());
  }
  return declared_categories_.Add(id, msg.data_source, msg.categories);
}

std::vector<ProducerDataSources> ProducerTable::ListDataSources() const {
  std::vector<ProducerDataSources> out;
  for (const auto& [id, producer] : producers_) {
    ProducerDataSources p;
    p.producer_id = id;
    p.producer_name = producer.name;
    for (const std::string& name : producer.data_sources) {
      ProducerDataSources::DataSource ds;
      ds.name = name;
      ds.categories = declared_categories_.Of(id, name);
      p.data_sources.push_back(std::move(ds));
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<ProducerInfo> ProducerTable::ListProducers() const {
  std::vector<ProducerInfo> out;
  for (const auto& kv : producers_) {
    ProducerInfo info;
    info.id = kv.first;
    info.name = kv.second.name;
    info.identity = kv.second.identity;
    info.data_sources = kv.second.data_sources;
    info.ring_bytes = RingBytes(kv.second.region->view().geometry());
    out.push_back(std::move(info));
  }
  return out;
}

void ProducerTable::SetAllowedBuffers(
    std::vector<std::pair<ProducerID, std::vector<TargetBuffer>>> updates) {
  std::vector<std::pair<RingId, std::vector<TargetBuffer>>> rings;
  for (auto& u : updates) {
    auto it = producers_.find(u.first);
    if (it != producers_.end())
      rings.emplace_back(it->second.ring_id, std::move(u.second));
  }
  if (rings.empty())
    return;
  loop_->RunSync([&](RingDrainer* d) {
    for (auto& r : rings)
      d->SetAllowedBuffers(r.first, std::move(r.second));
  });
}

std::pair<RingId, uint32_t> ProducerTable::RingOf(ProducerID id) const {
  const Producer& p = producers_.at(id);
  return {p.ring_id, p.region->view().geometry().num_chunks};
}

std::vector<ipc::WriterLossEntry> ProducerTable::ReadLossArea(ProducerID id) {
  std::vector<ipc::WriterLossEntry> out;
  const shm_ring::SharedRingRegion& region = *producers_.at(id).region;
  if (region.fd() < 0 ||
      region.trailer_bytes() != shm_ring::kWriterLossAreaSize)
    return out;
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
    return out;
  }
  for (size_t i = 0; i < shm_ring::kWriterLossSlots; i++) {
    const uint8_t* slot = copy.get() + i * shm_ring::kWriterLossSlotSize;
    uint32_t ids = 0;
    memcpy(&ids, slot + shm_ring::kLossSlotIdsOffset, sizeof(ids));
    if (ids == 0)
      continue;  // unused
    const ipc::WriterLossEntry e = ParseLossSlot(slot);
    if (!e.packets_dropped_before_end && !e.packets_dropped_after_end &&
        !e.bytes_dropped && !e.stall_timeouts) {
      continue;  // nothing lost (or a slot of a writer that lost nothing)
    }
    out.push_back(e);
  }
  return out;
}

void ProducerTable::DetachRing(ProducerID id) {
  const std::pair<RingId, uint32_t> ring = RingOf(id);
  loop_->RunSync([&](RingDrainer* d) {
    DrainBounded(d, ring.first, ring.second, DrainMode::kFlush);
    d->RemoveRing(ring.first);
  });
}

void ProducerTable::Erase(ProducerID id) {
  // The drainer no longer references the ring (DetachRing): unmap it.
  producers_.erase(id);
  declared_categories_.RemoveProducer(id);
  producer_ids_.Release(id);
  stats_.producers_connected = static_cast<uint32_t>(producers_.size());
}

}  // namespace traced
}  // namespace ringtrace
