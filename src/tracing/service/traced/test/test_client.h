/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Test support for the tracing service: a raw protocol client (UnixSocket +
// wire_protocol encoders, no producer library) that can behave or misbehave,
// a packet format the tests can recognise in the trace file, and a
// self-removing temporary directory.
//
// Thread model: one thread per TestClient.

#ifndef SRC_TRACING_SERVICE_TRACED_TEST_TEST_CLIENT_H_
#define SRC_TRACING_SERVICE_TRACED_TEST_TEST_CLIENT_H_

#include <stddef.h>
#include <stdint.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "protos/perfetto/trace/trace.pb.h"
#include "protos/perfetto/trace/trace_packet.pb.h"

#include "ringtrace/trace_writer_v2.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/core/shm_ring/shm_region.h"
#include "src/tracing/core/shm_ring/writer_id_allocator.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/ipc/wire_protocol.h"

namespace ringtrace {
namespace traced {
namespace test {

// Generous: only reached when something is broken.
constexpr int kTestTimeoutMs = 20000;

class TestClient {
 public:
  TestClient() = default;
  ~TestClient();

  bool Connect(const std::string& socket_path);
  // Sends |hello|, waits for the HelloReply and, on kOk, maps the ring it
  // carried (SharedRingRegion::MapFd). Returns false if no valid reply came
  // (the connection closed, a timeout, a malformed reply, a kOk without
  // fd or with an unmappable one).
  bool Hello(const ipc::HelloMsg& hello);
  bool Hello(const std::string& name) {
    ipc::HelloMsg hello;
    hello.name = name;
    return Hello(hello);
  }

  bool SendRaw(const void* data, size_t size, int fd = -1);
  bool SendDrainRequest();
  // Waits until the service closes the connection (EOF), discarding any
  // message that comes first. False on timeout.
  bool WaitForClose(int timeout_ms = kTestTimeoutMs);
  void Disconnect() { socket_.reset(); }

  // A writer on the mapped ring with a fresh WriterID, targeting the reply's
  // buffer.
  std::unique_ptr<shm_ring::TraceWriterV2> NewWriter();
  // A writer whose chunks target |target_buffer| (a data source instance's).
  std::unique_ptr<shm_ring::TraceWriterV2> NewWriter(uint32_t target_buffer);
  // The next message the service sends (after the HelloReply); false on
  // timeout, EOF or an undecodable datagram.
  bool ReceiveMessage(ipc::Message* msg, int timeout_ms = kTestTimeoutMs);

  const ipc::HelloReplyMsg& reply() const { return reply_; }
  shm_ring::SharedRingRegion* region() const { return region_.get(); }
  ipc::UnixSocket* socket() const { return socket_.get(); }

 private:
  std::unique_ptr<ipc::UnixSocket> socket_;
  ipc::HelloReplyMsg reply_;
  std::unique_ptr<shm_ring::SharedRingRegion> region_;
  shm_ring::WriterIdAllocator writer_ids_;
};

// Writes |count| packets: TracePacket{timestamp = seq, for_testing =
// TestEvent{str = |tag|, seq_value = seq}} for seq = first .. first+count-1.
void WriteTestPackets(shm_ring::TraceWriterV2* writer,
                      const std::string& tag,
                      uint32_t first,
                      uint32_t count);

// What a trace file holds for one tag of WriteTestPackets.
struct TaggedPackets {
  std::vector<uint32_t> seqs;  // seq_value of each packet, in file order
  std::set<int32_t> trusted_pids;
  std::set<int32_t> trusted_uids;
};

// Parses the file with libprotobuf; false if it cannot be read or parsed.
bool ReadTraceFile(const std::string& path, perfetto::protos::Trace* trace);
// Groups the for_testing packets of |trace| by their tag.
std::map<std::string, TaggedPackets> CollectTestPackets(
    const perfetto::protos::Trace& trace);
// first, first + 1, ..., first + count - 1.
std::vector<uint32_t> Seqs(uint32_t first, uint32_t count);

// The service's metadata of one trace file (ExpectServiceMetadata).
using ServiceEventCase = perfetto::protos::TracingServiceEvent::EventTypeCase;
struct ServiceMetadata {
  int64_t uuid_msb = 0;
  int64_t uuid_lsb = 0;
  // The TracingServiceEvents in file order, with their timestamps.
  std::vector<ServiceEventCase> events;
  std::vector<uint64_t> event_timestamps;
  // BOOTTIME of the first and of the last ClockSnapshot.
  uint64_t first_clock_boottime = 0;
  uint64_t last_clock_boottime = 0;
};
// Checks (gtest expectations) what every trace file the service writes
// carries: it starts with TraceConfig, SystemInfo (uname() of this machine),
// TraceUuid (non-zero), ClockSnapshot; there is exactly one SystemInfo and
// one TraceUuid; those, the ClockSnapshots and the service events are on
// sequence 1; the events' timestamps never go back and lie between the
// first and the last ClockSnapshot; the trace ends with
// read_tracing_buffers_completed, TraceStats, ClockSnapshot. Returns what
// it found.
ServiceMetadata ExpectServiceMetadata(const perfetto::protos::Trace& trace);
// Shorthands for the expected event lists.
constexpr ServiceEventCase kEvStarted =
    perfetto::protos::TracingServiceEvent::kTracingStarted;
constexpr ServiceEventCase kEvAllStarted =
    perfetto::protos::TracingServiceEvent::kAllDataSourcesStarted;
constexpr ServiceEventCase kEvFlushed =
    perfetto::protos::TracingServiceEvent::kAllDataSourcesFlushed;
constexpr ServiceEventCase kEvDisabled =
    perfetto::protos::TracingServiceEvent::kTracingDisabled;
constexpr ServiceEventCase kEvReadDone =
    perfetto::protos::TracingServiceEvent::kReadTracingBuffersCompleted;

}  // namespace test
}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_TEST_TEST_CLIENT_H_
