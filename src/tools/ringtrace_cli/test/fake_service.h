/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. FakeService: a stand-in for ringtraced's consumer socket, so
// that the CLI's unit tests run it through the real ringtrace::
// TracingSession and ConsumerClient while choosing what the service says.
// It listens on a socket in a private directory; each Serve() accepts one
// connection and answers its requests on a thread of its own, as the test
// set it up beforehand, until the client closes it; it records what the
// client asked. The "trace" it writes is the test's strings, into the fd
// the request carries.
//
// Thread model: the public fields are set by the test before Serve() (the
// thread's start publishes them) and not touched until Join(). The
// accessors, Release() and WaitForDisable() may be called at any time,
// from any thread (on_query runs on the service's thread).

#ifndef SRC_TOOLS_RINGTRACE_CLI_TEST_FAKE_SERVICE_H_
#define SRC_TOOLS_RINGTRACE_CLI_TEST_FAKE_SERVICE_H_

#include <stdint.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protos/ringtrace/ipc/consumer_port.pb.h"
#include "ringtrace/status.h"
#include "src/base/scoped_fd.h"
#include "src/base/test/temp_dir.h"
#include "src/tracing/ipc/unix_socket.h"

namespace ringtrace {
namespace cli {

class FakeService {
 public:
  // The id of the one session it runs.
  static constexpr uint64_t kSessionId = 7;

  FakeService();
  ~FakeService();  // Join()s
  FakeService(const FakeService&) = delete;
  FakeService& operator=(const FakeService&) = delete;

  const std::string& path() const { return path_; }

  // ---- What it does (set before Serve()) ----
  base::Status enable_status;
  base::Status disable_status;
  // DisableTracing is never answered: only the client's hang-up ends it.
  bool disable_blocks = false;
  // DisableTracing waits for Release() (then answers) or the hang-up.
  bool disable_waits_for_release = false;
  std::string trace_on_enable;   // written into the fd at EnableTracing
  std::string trace_on_disable;  // written at DisableTracing
  std::vector<std::string> start_warnings;
  ringtrace::protos::SessionSummary summary;
  ringtrace::protos::ServiceState state;
  // Runs (on the service's thread) inside each QueryServiceState.
  std::function<void()> on_query;
  base::Status clone_status;
  base::Status query_status;
  // QueryServiceState is answered with bytes that are no response: the
  // client's connection breaks (a protocol violation).
  bool query_breaks = false;
  base::Status detach_status;
  base::Status attach_status;
  uint64_t attach_session_id = kSessionId;
  // Sent right after the answer to EnableTracing, to a non-probe Attach,
  // and before the answer to DisableTracing.
  std::vector<ringtrace::protos::ConsumerResponse> events_after_enable;
  std::vector<ringtrace::protos::ConsumerResponse> events_after_attach;
  std::vector<ringtrace::protos::ConsumerResponse> events_before_disable;
  // The service closes the connection right after answering EnableTracing.
  bool hang_up_after_enable = false;
  // The service closes the connection instead of answering a probe.
  bool hang_up_on_probe = false;

  // Accepts the next connection and answers it on a thread of its own.
  void Serve();
  // Waits until that connection closed (the client's end destroyed).
  void Join();

  void Release();
  // Waits until DisableTracing was received.
  void WaitForDisable();

  // ---- What the client did ----
  int disable_calls() const;
  int query_calls() const;
  int clone_calls() const;
  // The client hung up while its session ran (started or attached, not
  // ended by an event nor stopped): the service would free it unwritten.
  bool aborted() const;
  std::string detached_key() const;

 private:
  void ServeOne();
  // Answers one request; false once the connection is to end.
  bool Handle(ipc::UnixSocket* conn,
              const ringtrace::protos::ConsumerRequest& request,
              base::ScopedFd fd);
  bool Disable(ipc::UnixSocket* conn,
               const ringtrace::protos::ConsumerRequest& request);
  // Sends |events|; a tracing_ended of the session ends it. False if the
  // client is gone.
  bool SendEvents(
      ipc::UnixSocket* conn,
      const std::vector<ringtrace::protos::ConsumerResponse>& events);
  // Waits for Release() or the client's hang-up (false).
  bool WaitForReleaseOrHangup(ipc::UnixSocket* conn);

  base::TempDir dir_;
  const std::string path_;
  std::unique_ptr<ipc::UnixSocket> listener_;
  // The service thread's.
  base::ScopedFd out_fd_;  // EnableTracing's
  bool running_ = false;   // see aborted()
  std::thread thread_;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  int disable_calls_ = 0;
  int query_calls_ = 0;
  int clone_calls_ = 0;
  bool aborted_ = false;
  bool released_ = false;
  std::string detached_key_;
};

}  // namespace cli
}  // namespace ringtrace

#endif  // SRC_TOOLS_RINGTRACE_CLI_TEST_FAKE_SERVICE_H_
