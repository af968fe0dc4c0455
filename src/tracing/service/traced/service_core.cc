/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/service_core.h"

#include "protos/perfetto/trace/trace_packet.rtzero.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "ringtrace/logging.h"
#include "src/base/checked_math.h"
#include "src/base/time.h"
#include "src/tracing/core/shm_ring/writer_loss_area.h"
#include "src/tracing/service/trace_export/proto_wire.h"
#include "src/tracing/service/trace_export/trace_file_writer.h"

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

// The smallest power of two >= |x| (x <= 2^32: at most 33 steps).
uint64_t RoundUpToPowerOfTwo(uint64_t x) {
  uint64_t p = 1;
  while (p < x)
    p <<= 1;
  return p;
}

// A ring's payload bytes (the mapping adds the control header).
uint64_t RingBytes(const shm_ring::RingGeometry& g) {
  return uint64_t{g.chunk_size} * g.num_chunks;
}

uint32_t Clamp(uint64_t v, uint32_t lo, uint32_t hi) {
  return static_cast<uint32_t>(
      std::min<uint64_t>(std::max<uint64_t>(v, lo), hi));
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

void AddBufferStats(const trace_buffer::TraceBufferStats& s,
                    trace_buffer::TraceBufferStats* t) {
#define RT_ADD(f) t->f += s.f
  RT_ADD(bytes_written);
  RT_ADD(bytes_overwritten);
  RT_ADD(bytes_read);
  RT_ADD(padding_bytes_written);
  RT_ADD(padding_bytes_cleared);
  RT_ADD(chunks_written);
  RT_ADD(chunks_rewritten);
  RT_ADD(chunks_overwritten);
  RT_ADD(chunks_discarded);
  RT_ADD(chunks_read);
  RT_ADD(chunk_bytes_read);
  RT_ADD(chunks_committed_out_of_order);
  RT_ADD(write_wrap_count);
  RT_ADD(patches_succeeded);
  RT_ADD(patches_failed);
  RT_ADD(abi_violations);
  RT_ADD(trace_writer_packet_loss);
  RT_ADD(packets_overwritten);
  RT_ADD(sequence_losses_forgotten);
  RT_ADD(late_chunks_dropped);
  RT_ADD(readaheads_succeeded);
  RT_ADD(readaheads_failed);
#undef RT_ADD
}

namespace {

// One last drain of a ring whose producer is gone (or is being dropped):
// DrainMode::kFlush resolves every reserved position, scraping open chunks,
// so what the producer wrote before is kept.
void FinalDrain(RingDrainer* drainer, RingId id, uint32_t num_chunks) {
  DrainBounded(drainer, id, num_chunks, DrainMode::kFlush);
}

}  // namespace

std::string EncodeServiceCounters(const ServiceCounters& c,
                                  const ProducerStats& p) {
  std::string out;
  trace_export::ProtoBuilder b(&out);
  using Fields = perfetto::protos::rtzero::TraceStats;
  b.AppendVarInt(Fields::kRingtraceConnectionsRefusedFieldNumber,
                 c.connections_refused);
  b.AppendVarInt(Fields::kRingtraceConnectionsRefusedPerUidFieldNumber,
                 c.connections_refused_per_uid);
  b.AppendVarInt(Fields::kRingtraceHelloTimeoutsFieldNumber, c.hello_timeouts);
  b.AppendVarInt(Fields::kRingtraceProtocolViolationsFieldNumber,
                 c.protocol_violations);
  b.AppendVarInt(Fields::kRingtraceProducersDisconnectedRingErrorFieldNumber,
                 c.producers_disconnected_ring_error);
  b.AppendVarInt(Fields::kRingtraceHellosRejectedFieldNumber,
                 p.hellos_rejected_version + p.hellos_rejected_too_many +
                     p.hellos_rejected_user_limit +
                     p.hellos_rejected_service_error);
  b.AppendVarInt(Fields::kRingtraceProducerIdsReusedFieldNumber,
                 p.producer_ids_reused);
  b.AppendVarInt(Fields::kRingtraceRingsStoppedProtocolErrorFieldNumber,
                 p.rings_stopped_protocol_error);
  b.AppendVarInt(Fields::kRingtraceLossEntriesUnattributedFieldNumber,
                 p.loss_entries_unattributed);
  return out;
}

std::string EncodeBufferLoss(
    const std::vector<const trace_buffer::TraceBufferV2*>& buffers,
    uint64_t packets_discarded) {
  uint64_t overwritten = 0;
  for (const trace_buffer::TraceBufferV2* buffer : buffers)
    overwritten += buffer->stats().packets_overwritten;
  std::string out;
  trace_export::ProtoBuilder b(&out);
  using Fields = perfetto::protos::rtzero::TraceStats;
  b.AppendVarInt(Fields::kRingtracePacketsOverwrittenFieldNumber, overwritten);
  b.AppendVarInt(Fields::kRingtracePacketsDiscardedFieldNumber,
                 packets_discarded);
  return out;
}

std::string EncodeSessionCounters(const SessionCounters& s) {
  std::string out;
  trace_export::ProtoBuilder b(&out);
  using Fields = perfetto::protos::rtzero::TraceStats;
  b.AppendVarInt(Fields::kRingtraceDataSourceStopTimeoutsFieldNumber,
                 s.data_source_stop_timeouts);
  b.AppendVarInt(Fields::kRingtraceFlushTimeoutsFieldNumber, s.flush_timeouts);
  b.AppendVarInt(Fields::kRingtraceLateAcksFieldNumber, s.late_acks);
  return out;
}

base::Status ValidateRingLimits(const RingLimits& l) {
  const uint32_t values[] = {l.default_ring_bytes, l.min_ring_bytes,
                             l.max_ring_bytes,     l.default_chunk_size,
                             l.min_chunk_size,     l.max_chunk_size};
  for (uint32_t v : values) {
    if (!base::IsPowerOfTwo(v))
      return base::ErrStatus("ring sizes must be powers of two (got %u)", v);
  }
  if (l.min_chunk_size < shm_ring::kMinChunkSize ||
      l.max_chunk_size > shm_ring::kMaxChunkSize) {
    return base::ErrStatus("chunk sizes must be in [%u, %u]",
                           shm_ring::kMinChunkSize, shm_ring::kMaxChunkSize);
  }
  if (l.default_chunk_size < l.min_chunk_size ||
      l.default_chunk_size > l.max_chunk_size) {
    return base::ErrStatus("default chunk size %u not in [%u, %u]",
                           l.default_chunk_size, l.min_chunk_size,
                           l.max_chunk_size);
  }
  if (l.default_ring_bytes < l.min_ring_bytes ||
      l.default_ring_bytes > l.max_ring_bytes) {
    return base::ErrStatus("default ring size %u not in [%u, %u]",
                           l.default_ring_bytes, l.min_ring_bytes,
                           l.max_ring_bytes);
  }
  if (l.max_ring_bytes > kMaxRingKb * 1024u) {
    return base::ErrStatus(
        "max ring size %u above %u KiB, the most a default producer accepts",
        l.max_ring_bytes, kMaxRingKb);
  }
  // Every served ring has at least two chunks (ChooseRingGeometry grows a
  // ring to two chunks), which must fit the maximum.
  if (uint64_t{l.max_ring_bytes} < 2 * uint64_t{l.max_chunk_size}) {
    return base::ErrStatus("max ring size %u below two chunks of %u",
                           l.max_ring_bytes, l.max_chunk_size);
  }
  return base::OkStatus();
}

shm_ring::RingGeometry ChooseRingGeometry(const RingLimits& limits,
                                          uint32_t requested_ring_bytes,
                                          uint32_t requested_chunk_size) {
  RT_DCHECK(ValidateRingLimits(limits).ok());
  const uint32_t chunk_size = Clamp(
      RoundUpToPowerOfTwo(requested_chunk_size ? requested_chunk_size
                                               : limits.default_chunk_size),
      limits.min_chunk_size, limits.max_chunk_size);
  uint32_t ring_bytes = Clamp(
      RoundUpToPowerOfTwo(requested_ring_bytes ? requested_ring_bytes
                                               : limits.default_ring_bytes),
      limits.min_ring_bytes, limits.max_ring_bytes);
  // <= max_ring_bytes by ValidateRingLimits.
  ring_bytes = std::max(ring_bytes, 2 * chunk_size);
  const shm_ring::RingGeometry g(chunk_size, ring_bytes / chunk_size);
  RT_CHECK(g.IsValid());
  return g;
}

bool FitRingLimitsToBudget(uint64_t budget_bytes, RingLimits* limits) {
  RT_DCHECK(ValidateRingLimits(*limits).ok());
  if (budget_bytes >= limits->max_ring_bytes)
    return true;
  uint32_t fit = limits->max_ring_bytes;
  while (fit > budget_bytes)
    fit /= 2;  // stays a power of two; ends: budget_bytes < max_ring_bytes
  if (fit < limits->min_ring_bytes || fit < 2 * limits->min_chunk_size)
    return false;
  limits->max_ring_bytes = fit;
  limits->default_ring_bytes = std::min(limits->default_ring_bytes, fit);
  limits->max_chunk_size = std::min(limits->max_chunk_size, fit / 2);
  limits->default_chunk_size =
      std::min(limits->default_chunk_size, limits->max_chunk_size);
  RT_DCHECK(ValidateRingLimits(*limits).ok());
  return true;
}

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
  if (next_producer_id_ <= kMaxProducerId)
    return static_cast<trace_buffer::ProducerID>(next_producer_id_++);
  if (reusable_ids_.empty() && !departed_ids_.empty() &&
      (!scanned_since_departure_ ||
       ++admissions_since_scan_ >= kRecycleScanInterval)) {
    RefillReusableIds();
  }
  if (reusable_ids_.empty())
    return 0;
  const trace_buffer::ProducerID id = reusable_ids_.back();
  reusable_ids_.pop_back();
  ++stats_.producer_ids_reused;
  return id;
}

void ServiceCore::RefillReusableIds() {
  admissions_since_scan_ = 0;
  scanned_since_departure_ = true;
  std::vector<bool> held(kMaxProducerId + 1, false);
  // The buffer is only consistent on the drain thread.
  std::vector<const TraceBufferV2*> buffers;
  for (const auto& kv : sessions_) {
    for (const auto& b : kv.second->buffers)
      buffers.push_back(b->buffer.get());
  }
  loop_->RunSync([&](RingDrainer*) {
    for (const TraceBufferV2* buffer : buffers) {
      buffer->ForEachSequenceProducer(
          [&](trace_buffer::ProducerID id) { held[id] = true; });
    }
  });
  size_t kept = 0;
  for (trace_buffer::ProducerID id : departed_ids_) {
    if (held[id])
      departed_ids_[kept++] = id;
    else
      reusable_ids_.push_back(id);
  }
  departed_ids_.resize(kept);
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
    departed_ids_.push_back(id);  // never used: reusable at the next scan
    scanned_since_departure_ = false;
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
  departed_ids_.push_back(id);
  scanned_since_departure_ = false;
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

std::string ServiceCore::EncodeExtraStatsFields(
    trace_export::TraceExporter* exporter,
    const SessionCounters& session_counters,
    const ProducerLossTable& losses) const {
  std::string out = EncodeServiceCounters(counters_, stats_);
  out += EncodeSessionCounters(session_counters);
  out += losses.EncodeTraceStatsFields(
      [this, exporter](trace_buffer::ProducerID producer, uint32_t writer,
                       bool connected) -> uint32_t {
        // A departed producer whose id a connected one holds now: the
        // buffer's sequences of that id are the newcomer's.
        if (!exporter || (!connected && producers_.count(producer) != 0))
          return 0;
        return exporter->SequenceIdFor(
            producer, static_cast<trace_buffer::WriterID>(writer));
      });
  return out;
}

trace_export::TraceExporter::ServiceStats ServiceCore::MakeServiceStats(
    uint32_t producers_connected,
    uint64_t chunks_discarded,
    const SessionCounters& session_counters,
    const ProducerLossTable& losses,
    const std::vector<BufferID>& buffer_ids) const {
  trace_export::TraceExporter::ServiceStats s;
  s.producers_connected = producers_connected;
  s.producers_seen = stats_.producers_seen;
  s.chunks_discarded = chunks_discarded;
  for (BufferID id : buffer_ids)
    s.producer_packets_dropped.push_back(losses.PacketsDroppedFor(id));
  uint64_t data_sources = 0;
  for (const auto& kv : producers_)
    data_sources += kv.second.data_sources.size();
  s.data_sources_registered = static_cast<uint32_t>(data_sources);
  s.data_sources_seen = stats_.data_sources_seen;
  s.tracing_sessions = static_cast<uint32_t>(sessions_.size());
  uint64_t buffers = 0;
  for (const auto& kv : sessions_)
    buffers += kv.second->buffers.size();
  s.total_buffers = static_cast<uint32_t>(buffers);
  s.flushes_requested = session_counters.flushes_requested;
  s.flushes_succeeded = session_counters.flushes_succeeded;
  s.flushes_failed = session_counters.flushes_failed;
  s.final_flush = session_counters.final_flush;
  return s;
}

// static
void ServiceCore::WriteTraceHeader(trace_export::TraceExporter* exporter,
                                   const TraceHeader& header) {
  using Event = trace_export::TraceExporter::ServiceEvent;
  exporter->WriteTraceConfig(header.trace_config->data(),
                             header.trace_config->size());
  exporter->WriteSystemInfo(trace_export::TraceExporter::ReadSystemInfo());
  exporter->WriteTraceUuid(header.uuid);
  exporter->WriteClockSnapshot(header.clocks);
  const TraceLifecycle& l = header.lifecycle;
  const struct {
    Event event;
    uint64_t ts;
  } events[] = {
      {Event::kTracingStarted, l.tracing_started},
      {Event::kAllDataSourcesStarted, l.all_data_sources_started},
      {Event::kAllDataSourcesFlushed, l.all_data_sources_flushed},
      {Event::kTracingDisabled, l.tracing_disabled},
  };
  for (const auto& e : events) {
    if (e.ts != 0)
      exporter->WriteServiceEvent(e.event, e.ts);
  }
}

base::Status ServiceCore::Export(const std::vector<TraceBufferV2*>& buffers,
                                 const std::vector<BufferID>& buffer_ids,
                                 const TraceHeader& header,
                                 uint32_t producers_connected,
                                 uint64_t chunks_discarded,
                                 const SessionCounters& session_counters,
                                 const ProducerLossTable& losses,
                                 int out_fd,
                                 ExportSummary* summary) const {
  const off_t start_offset = lseek(out_fd, 0, SEEK_CUR);
  trace_export::TraceFileWriter file_writer(out_fd);
  trace_export::TraceExporter exporter(&file_writer);
  WriteTraceHeader(&exporter, header);
  const base::Status status =
      ExportTail(&exporter, buffers, buffer_ids, producers_connected,
                 chunks_discarded, session_counters, losses, summary);
  struct stat st = {};
  if (fstat(out_fd, &st) == 0)
    summary->file_size = static_cast<uint64_t>(st.st_size);
  const off_t end_offset = lseek(out_fd, 0, SEEK_CUR);
  if (start_offset >= 0 && end_offset >= start_offset)
    summary->bytes_written = static_cast<uint64_t>(end_offset - start_offset);
  return status;
}

// static
void ServiceCore::WriteProducerEnds(trace_export::TraceExporter* exporter,
                                    const ProducerLossTable& losses) {
  losses.ForEachRecord([exporter](const ProducerLossTable::Record& r) {
    if (r.connected || r.final_report || r.removed_boottime_ns == 0)
      return;
    trace_export::TraceExporter::ProducerEnd end;
    end.pid = r.identity.pid;
    end.uid = r.identity.uid;
    end.producer_id = r.producer_id;
    end.name = r.name;
    end.boottime_ns = r.removed_boottime_ns;
    exporter->WriteProducerEnd(end);
  });
}

base::Status ServiceCore::ExportTail(trace_export::TraceExporter* exporter,
                                     const std::vector<TraceBufferV2*>& buffers,
                                     const std::vector<BufferID>& buffer_ids,
                                     uint32_t producers_connected,
                                     uint64_t chunks_discarded,
                                     const SessionCounters& session_counters,
                                     const ProducerLossTable& losses,
                                     ExportSummary* summary) const {
  std::vector<const TraceBufferV2*> const_buffers;
  for (TraceBufferV2* buffer : buffers) {
    exporter->ExportBuffer(buffer);
    const_buffers.push_back(buffer);
  }
  WriteProducerEnds(exporter, losses);
  exporter->WriteServiceEvent(
      trace_export::TraceExporter::ServiceEvent::kReadTracingBuffersCompleted,
      base::ClockNs(CLOCK_BOOTTIME));
  // chunks_discarded: only what no buffer saw. A chunk the buffer rejected
  // (the drainer's chunks_rejected_by_sink) is already in its
  // BufferStats.chunks_discarded (DISCARD full) or abi_violations
  // (malformed), and counts once.
  trace_export::TraceExporter::ServiceStats service_stats =
      MakeServiceStats(producers_connected, chunks_discarded, session_counters,
                       losses, buffer_ids);
  service_stats.extra_fields =
      EncodeExtraStatsFields(exporter, session_counters, losses);
  service_stats.extra_fields +=
      EncodeBufferLoss(const_buffers, summary->packets_discarded);
  exporter->WriteTraceStats(const_buffers, service_stats);
  exporter->WriteClockSnapshot();
  const base::Status status = exporter->Finish();
  summary->export_stats = exporter->stats();
  summary->buffer_stats = trace_buffer::TraceBufferStats();
  for (const TraceBufferV2* buffer : buffers)
    AddBufferStats(buffer->stats(), &summary->buffer_stats);
  return status;
}

}  // namespace traced
}  // namespace ringtrace
