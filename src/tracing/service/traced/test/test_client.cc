/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/test/test_client.h"
#include "src/tracing/core/shm_ring/trace_writer_v2_owner.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <utility>

#include "protos/perfetto/trace/trace_packet.pb.h"
#include "protos/perfetto/trace/trace_packet.rtzero.h"

namespace ringtrace {
namespace traced {
namespace test {

TestClient::~TestClient() {
  // The writers are gone by now (they reference region_); close the socket
  // before unmapping, as a producer process exiting would.
  socket_.reset();
  region_.reset();
}

bool TestClient::Connect(const std::string& socket_path) {
  base::Status status;
  socket_ = ipc::UnixSocket::Connect(socket_path, &status);
  return socket_ != nullptr;
}

bool TestClient::Hello(const ipc::HelloMsg& hello) {
  uint8_t buf[ipc::kMaxMessageSize];
  const size_t size = ipc::EncodeHello(hello, buf, sizeof(buf));
  if (size == 0 || !SendRaw(buf, size))
    return false;
  if (!socket_->WaitReadable(kTestTimeoutMs))
    return false;
  size_t got = 0;
  base::ScopedFd fd;
  base::Status status;
  if (socket_->Receive(buf, sizeof(buf), &got, &fd, &status) !=
      ipc::UnixSocket::RecvResult::kMessage) {
    return false;
  }
  ipc::Message msg;
  if (!ipc::DecodeMessage(buf, got, &msg).ok() ||
      msg.type != ipc::MessageType::kHelloReply) {
    return false;
  }
  reply_ = msg.hello_reply;
  if (reply_.status != ipc::HelloStatus::kOk)
    return !fd.valid();
  region_ = shm_ring::SharedRingRegion::MapFd(
      fd.release(),
      shm_ring::RingGeometry(reply_.chunk_size, reply_.num_chunks), &status);
  return region_ != nullptr;
}

bool TestClient::SendRaw(const void* data, size_t size, int fd) {
  return socket_ &&
         socket_->Send(static_cast<const uint8_t*>(data), size, fd).ok();
}

bool TestClient::SendDrainRequest() {
  uint8_t buf[ipc::kMaxMessageSize];
  const size_t size = ipc::EncodeDrainRequest(buf, sizeof(buf));
  return size > 0 && SendRaw(buf, size);
}

bool TestClient::WaitForClose(int timeout_ms) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  uint8_t buf[ipc::kMaxMessageSize];
  // Bounded by the deadline: each iteration waits or consumes a datagram.
  while (socket_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0 || !socket_->WaitReadable(static_cast<int>(left)))
      return false;
    size_t got = 0;
    base::Status status;
    const ipc::UnixSocket::RecvResult r =
        socket_->Receive(buf, sizeof(buf), &got, nullptr, &status);
    if (r == ipc::UnixSocket::RecvResult::kClosed)
      return true;
    if (r == ipc::UnixSocket::RecvResult::kError ||
        r == ipc::UnixSocket::RecvResult::kTooLong ||
        r == ipc::UnixSocket::RecvResult::kTooManyFds) {
      return false;
    }
  }
  return false;
}

std::unique_ptr<shm_ring::TraceWriterV2> TestClient::NewWriter() {
  return NewWriter(reply_.target_buffer);
}

bool TestClient::ReceiveMessage(ipc::Message* msg, int timeout_ms) {
  if (!socket_ || !socket_->WaitReadable(timeout_ms))
    return false;
  std::vector<uint8_t> buf(ipc::kMaxMessageSize);
  size_t got = 0;
  base::Status status;
  if (socket_->Receive(buf.data(), buf.size(), &got, nullptr, &status) !=
      ipc::UnixSocket::RecvResult::kMessage) {
    return false;
  }
  return ipc::DecodeMessage(buf.data(), got, msg).ok();
}

std::unique_ptr<shm_ring::TraceWriterV2> TestClient::NewWriter(
    uint32_t target_buffer) {
  shm_ring::WriterID id = 0;
  if (!region_ || !writer_ids_.Allocate(&id))
    return nullptr;
  shm_ring::TraceWriterV2::Options options;
  options.writer_id = id;
  options.target_buffer = static_cast<shm_ring::BufferID>(target_buffer);
  // Tests write far less than a ring; never wait for room.
  options.policy = shm_ring::BufferExhaustedPolicy::kDrop;
  return shm_ring::TraceWriterV2Owner::Create(region_->view(), options);
}

void WriteTestPackets(shm_ring::TraceWriterV2* writer,
                      const std::string& tag,
                      uint32_t first,
                      uint32_t count) {
  for (uint32_t seq = first; seq < first + count; ++seq) {
    auto handle = writer->NewTracePacket();
    perfetto::protos::rtzero::TracePacket packet(handle);
    packet.set_timestamp(seq);
    perfetto::protos::rtzero::TestEvent ev = packet.set_for_testing();
    ev.set_str(tag);
    ev.set_seq_value(seq);
  }
}

bool ReadTraceFile(const std::string& path, perfetto::protos::Trace* trace) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::stringstream ss;
  ss << in.rdbuf();
  return trace->ParseFromString(ss.str());
}

std::map<std::string, TaggedPackets> CollectTestPackets(
    const perfetto::protos::Trace& trace) {
  std::map<std::string, TaggedPackets> out;
  for (const perfetto::protos::TracePacket& p : trace.packet()) {
    if (!p.has_for_testing())
      continue;
    TaggedPackets& t = out[p.for_testing().str()];
    t.seqs.push_back(p.for_testing().seq_value());
    t.trusted_pids.insert(p.trusted_pid());
    t.trusted_uids.insert(p.trusted_uid());
  }
  return out;
}

ServiceMetadata ExpectServiceMetadata(const perfetto::protos::Trace& trace) {
  ServiceMetadata md;
  const int n = trace.packet_size();
  EXPECT_GE(n, 7);
  if (n < 7)
    return md;
  EXPECT_TRUE(trace.packet(0).has_trace_config());
  EXPECT_TRUE(trace.packet(1).has_system_info());
  EXPECT_TRUE(trace.packet(2).has_trace_uuid());
  EXPECT_TRUE(trace.packet(3).has_clock_snapshot());
  EXPECT_EQ(trace.packet(n - 3).service_event().event_type_case(), kEvReadDone);
  EXPECT_TRUE(trace.packet(n - 2).has_trace_stats());
  EXPECT_TRUE(trace.packet(n - 1).has_clock_snapshot());

  int system_infos = 0;
  int uuids = 0;
  std::vector<uint64_t> clocks;
  for (const perfetto::protos::TracePacket& p : trace.packet()) {
    const bool service = p.has_system_info() || p.has_trace_uuid() ||
                         p.has_service_event() || p.has_clock_snapshot();
    if (service) {
      EXPECT_EQ(p.trusted_packet_sequence_id(), 1u);
    }
    if (p.has_system_info()) {
      ++system_infos;
      struct utsname uts = {};
      EXPECT_EQ(uname(&uts), 0);
      const perfetto::protos::Utsname& u = p.system_info().utsname();
      EXPECT_EQ(u.sysname(), uts.sysname);
      EXPECT_EQ(u.version(), uts.version);
      EXPECT_EQ(u.release(), uts.release);
      EXPECT_EQ(u.machine(), uts.machine);
    }
    if (p.has_trace_uuid()) {
      ++uuids;
      md.uuid_msb = p.trace_uuid().msb();
      md.uuid_lsb = p.trace_uuid().lsb();
    }
    if (p.has_service_event()) {
      md.events.push_back(p.service_event().event_type_case());
      md.event_timestamps.push_back(p.timestamp());
    }
    if (p.has_clock_snapshot()) {
      for (const auto& c : p.clock_snapshot().clocks()) {
        if (c.clock_id() == perfetto::protos::BUILTIN_CLOCK_BOOTTIME)
          clocks.push_back(c.timestamp());
      }
    }
  }
  EXPECT_EQ(system_infos, 1);
  EXPECT_EQ(uuids, 1);
  EXPECT_TRUE(md.uuid_msb != 0 || md.uuid_lsb != 0);
  EXPECT_GE(clocks.size(), 2u);
  if (clocks.size() >= 2) {
    md.first_clock_boottime = clocks.front();
    md.last_clock_boottime = clocks.back();
  }
  uint64_t prev = md.first_clock_boottime;
  for (uint64_t ts : md.event_timestamps) {
    EXPECT_GE(ts, prev);
    prev = ts;
  }
  EXPECT_LE(prev, md.last_clock_boottime);
  return md;
}

std::vector<uint32_t> Seqs(uint32_t first, uint32_t count) {
  std::vector<uint32_t> v;
  for (uint32_t i = 0; i < count; ++i)
    v.push_back(first + i);
  return v;
}

}  // namespace test
}  // namespace traced
}  // namespace ringtrace
