/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tools/ringtrace_cli/trace_session.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "src/base/test/other_user.h"
#include "src/base/test/temp_dir.h"
#include "src/tools/ringtrace_cli/cli_options.h"
#include "src/tools/ringtrace_cli/output_file.h"
#include "src/tools/ringtrace_cli/service_state_format.h"
#include "src/tools/ringtrace_cli/test/pipe_capture.h"

namespace ringtrace {
namespace cli {
namespace {

using perfetto::protos::TraceConfig;
using ringtrace::protos::ConsumerResponse;
using ringtrace::protos::ServiceState;
using ringtrace::protos::SessionSummary;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr uint64_t kSessionId = 7;
// How messages name that session.
const std::string kSessionName = std::string("session") + " 7";

// A service stand-in: what it answers is set by the test; what the CLI
// asked is recorded. The "trace" it writes is a fixed string.
class FakeConnection : public ConsumerConnection {
 public:
  FakeConnection() {
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
    event_read_ = fds[0];
    event_write_ = fds[1];
  }
  ~FakeConnection() override {
    close(event_read_);
    if (event_write_ >= 0)
      close(event_write_);
  }

  // ---- What the fake does (set before the run) ----
  base::Status enable_status;
  base::Status disable_status;
  // DisableTracing waits for Abort() (and then fails).
  bool disable_blocks = false;
  // DisableTracing waits for Release() (then succeeds) or Abort().
  bool disable_waits_for_release = false;
  std::string trace_on_enable;   // written into the fd by EnableTracing
  std::string trace_on_disable;  // written by DisableTracing
  std::vector<std::string> start_warnings;  // EnableTracing's
  SessionSummary summary;
  ServiceState state;
  // Runs inside QueryServiceState.
  std::function<void()> on_query;
  base::Status clone_status;
  base::Status query_status;
  base::Status detach_status;
  base::Status attach_status;
  uint64_t attach_session_id = kSessionId;
  // Events queued by a successful Attach (an end while detached).
  std::vector<ConsumerResponse> events_on_attach;
  std::string detached_key;  // what Detach was given
  // The connection failed without its fd showing it (the client closed its
  // socket after a protocol violation).
  base::Status broken;

  // Queues an unsolicited event.
  void SendEvent(const ConsumerResponse& event) {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(event);
    const char byte = 1;
    EXPECT_EQ(write(event_write_, &byte, 1), 1);
  }
  // The connection fails: event_fd reads as closed.
  void Hangup() {
    close(event_write_);
    event_write_ = -1;
  }

  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    cv_.notify_all();
  }

  // Waits until DisableTracing was entered.
  void WaitForDisable() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return disable_calls_ > 0; });
  }

  // ---- What the CLI did ----
  int disable_calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return disable_calls_;
  }
  uint32_t last_disable_timeout_ms() {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_disable_timeout_ms_;
  }
  bool aborted() {
    std::lock_guard<std::mutex> lock(mutex_);
    return aborted_;
  }
  int query_calls() const { return query_calls_; }

  // ---- ConsumerConnection ----
  base::Status EnableTracing(const TraceConfig&,
                             int out_fd,
                             uint64_t* session_id,
                             std::vector<std::string>* warnings) override {
    if (!enable_status.ok())
      return enable_status;
    out_fd_ = out_fd;
    Write(trace_on_enable);
    *session_id = kSessionId;
    *warnings = start_warnings;
    return base::OkStatus();
  }
  base::Status DisableTracing(uint64_t session_id,
                              uint32_t timeout_ms,
                              SessionSummary* out) override {
    std::unique_lock<std::mutex> lock(mutex_);
    EXPECT_EQ(session_id, kSessionId);
    disable_calls_++;
    last_disable_timeout_ms_ = timeout_ms;
    cv_.notify_all();
    if (disable_blocks || disable_waits_for_release) {
      cv_.wait(lock, [&] { return aborted_ || released_; });
      if (aborted_)
        return base::ErrStatus("connection shut down");
    }
    if (!disable_status.ok())
      return disable_status;
    Write(trace_on_disable);
    *out = summary;
    return base::OkStatus();
  }
  base::Status CloneSession(uint64_t session_id, int out_fd) override {
    EXPECT_EQ(session_id, kSessionId);
    if (!clone_status.ok())
      return clone_status;
    const std::string data = "snapshot";
    EXPECT_EQ(write(out_fd, data.data(), data.size()),
              static_cast<ssize_t>(data.size()));
    return base::OkStatus();
  }
  base::Status Detach(uint64_t session_id, const std::string& key) override {
    EXPECT_EQ(session_id, kSessionId);
    detached_key = key;
    return detach_status;
  }
  base::Status Attach(const std::string& key,
                      bool probe,
                      uint64_t* session_id) override {
    detached_key = key;
    if (!attach_status.ok())
      return attach_status;
    *session_id = attach_session_id;
    if (!probe) {
      for (const ConsumerResponse& event : events_on_attach)
        SendEvent(event);
    }
    return base::OkStatus();
  }
  base::Status QueryServiceState(ServiceState* out) override {
    query_calls_++;
    if (on_query)
      on_query();
    if (!query_status.ok())
      return query_status;
    *out = state;
    return base::OkStatus();
  }
  int event_fd() override { return event_read_; }
  bool TakeEvent(ConsumerResponse* event, base::Status* status) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken.ok()) {
      *status = broken;
      return false;
    }
    char byte;
    const ssize_t n = read(event_read_, &byte, 1);
    if (n == 0) {
      *status = base::ErrStatus("hung up");
      return false;
    }
    if (n < 0 || events_.empty())
      return false;
    *event = events_.front();
    events_.pop_front();
    return true;
  }
  void Abort() override {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
    cv_.notify_all();
  }

 private:
  void Write(const std::string& data) {
    if (!data.empty()) {
      EXPECT_EQ(write(out_fd_, data.data(), data.size()),
                static_cast<ssize_t>(data.size()));
    }
  }

  int event_read_ = -1;
  int event_write_ = -1;
  int out_fd_ = -1;
  int query_calls_ = 0;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<ConsumerResponse> events_;
  int disable_calls_ = 0;
  uint32_t last_disable_timeout_ms_ = 0;
  bool aborted_ = false;
  bool released_ = false;
};

std::string ReadFile(const std::string& path) {
  std::string data;
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return "<missing>";
  char buf[256];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0)
    data.append(buf, static_cast<size_t>(n));
  close(fd);
  return data;
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

ConsumerResponse TracingEnded(bool ok, const std::string& error) {
  ConsumerResponse event;
  event.set_request_id(0);
  event.set_tracing_ended(true);
  event.set_ok(ok);
  event.set_session_id(kSessionId);
  if (!error.empty())
    event.set_error(error);
  event.mutable_summary()->set_packets_written(3);
  return event;
}

class TraceSessionTest : public ::testing::Test {
 protected:
  TraceSessionTest() {
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0);
    stop_read_ = fds[0];
    stop_write_ = fds[1];
    err_ = open_memstream(&err_buf_, &err_size_);
    // A previous trace that a failed run must leave alone.
    const int fd = open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    EXPECT_EQ(write(fd, "previous", 8), 8);
    close(fd);
    config_.add_buffers()->set_size_kb(1024);
    connection_.summary.set_packets_written(12);
    connection_.summary.set_duration_ms(1500);
  }
  ~TraceSessionTest() override {
    close(stop_read_);
    if (stop_write_ >= 0)
      close(stop_write_);
    fclose(err_);
    free(err_buf_);
  }

  // One stop request (or |signo|), as a signalfd would deliver it.
  void RequestStop(uint32_t signo = SIGINT) {
    signalfd_siginfo record = {};
    record.ssi_signo = signo;
    ASSERT_EQ(write(stop_write_, &record, sizeof(record)),
              static_cast<ssize_t>(sizeof(record)));
  }

  int Run() {
    std::unique_ptr<TraceOutput> file;
    EXPECT_TRUE(TraceOutput::ForFile(out_, false, false, &file).ok());
    return RunTraceSession(&connection_, config_, file.get(), stop_read_,
                           options_, err_);
  }

  // Run() with -o -: stdout is a pipe, whose bytes land in |*out|.
  int RunToStdout(std::string* out) {
    PipeCapture pipe;
    EXPECT_TRUE(pipe.ok());
    int code = -1;
    {
      std::unique_ptr<TraceOutput> output;
      EXPECT_TRUE(
          TraceOutput::ForStdout(pipe.write_fd(), &output, dir_.path()).ok());
      code = RunTraceSession(&connection_, config_, output.get(), stop_read_,
                             options_, err_);
    }
    *out = pipe.Finish();
    return code;
  }

  std::string Err() {
    fflush(err_);
    return std::string(err_buf_, err_size_);
  }

  base::TempDir dir_;
  const std::string out_ = dir_.File("t.pftrace");
  FakeConnection connection_;
  TraceConfig config_;
  TraceSessionOptions options_;
  int stop_read_ = -1;
  int stop_write_ = -1;
  char* err_buf_ = nullptr;
  size_t err_size_ = 0;
  FILE* err_ = nullptr;
};

TEST_F(TraceSessionTest, ServiceEndsTheSession) {
  connection_.trace_on_enable = "whole trace";
  connection_.SendEvent(TracingEnded(true, ""));
  EXPECT_EQ(Run(), kExitOk) << Err();
  EXPECT_EQ(ReadFile(out_), "whole trace");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_EQ(connection_.disable_calls(), 0);
  EXPECT_THAT(Err(), HasSubstr("wrote " + out_ + ": 11 B, 3 packets"));
}

TEST_F(TraceSessionTest, EventOfAnotherSessionIsIgnored) {
  ConsumerResponse other = TracingEnded(false, "other session failed");
  other.set_session_id(kSessionId + 1);
  connection_.SendEvent(other);
  connection_.SendEvent(TracingEnded(true, ""));
  connection_.trace_on_enable = "t";
  EXPECT_EQ(Run(), kExitOk) << Err();
  EXPECT_EQ(ReadFile(out_), "t");
  EXPECT_THAT(Err(), ::testing::Not(HasSubstr("other session failed")));
}

TEST_F(TraceSessionTest, StopRequestDisablesAndWrites) {
  config_.set_data_source_stop_timeout_ms(700);
  options_.disable_slack_ms = 1000;
  connection_.trace_on_disable = "stopped trace";
  RequestStop();
  EXPECT_EQ(Run(), kExitOk) << Err();
  EXPECT_EQ(connection_.disable_calls(), 1);
  EXPECT_EQ(connection_.last_disable_timeout_ms(), 1700u);
  EXPECT_EQ(ReadFile(out_), "stopped trace");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("stopping (Ctrl-C again to abort)"));
  EXPECT_THAT(Err(), HasSubstr("13 B, 12 packets in 1.5s"));
}

// --detach KEY: the session starts, is detached under KEY, and its file is
// put in place at once (the service goes on writing into it).
TEST_F(TraceSessionTest, DetachPutsTheFileInPlaceAndLeaves) {
  connection_.trace_on_enable = "begun";
  std::unique_ptr<TraceOutput> file;
  ASSERT_TRUE(TraceOutput::ForFile(out_, false, false, &file).ok());
  EXPECT_EQ(
      RunDetachedSession(&connection_, config_, "nightly", file.get(), err_),
      kExitOk)
      << Err();
  EXPECT_EQ(connection_.detached_key, "nightly");
  EXPECT_EQ(connection_.disable_calls(), 0);
  EXPECT_EQ(ReadFile(out_), "begun");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr(kSessionName + " detached as nightly"));
  EXPECT_THAT(Err(), HasSubstr("`--attach nightly --stop` ends it"));
}

TEST_F(TraceSessionTest, FailedDetachWritesNothing) {
  connection_.trace_on_enable = "begun";
  connection_.detach_status = base::ErrStatus("key k: in use");
  std::unique_ptr<TraceOutput> file;
  ASSERT_TRUE(TraceOutput::ForFile(out_, false, false, &file).ok());
  EXPECT_EQ(RunDetachedSession(&connection_, config_, "k", file.get(), err_),
            kExitFailure);
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("detaching " + kSessionName +
                               " failed: key k: in use; it is freed"));
}

// --attach KEY: waits for the end (here already queued: it ended while
// detached) and reports it; --stop stops it unless it had ended.
TEST_F(TraceSessionTest, AttachReportsTheEnd) {
  connection_.events_on_attach.push_back(TracingEnded(true, ""));
  EXPECT_EQ(
      RunAttach(&connection_, "k", /*stop=*/false, stop_read_, options_, err_),
      kExitOk)
      << Err();
  EXPECT_EQ(connection_.disable_calls(), 0);
  EXPECT_THAT(Err(), HasSubstr("attached to " + kSessionName + " (k)"));
  EXPECT_THAT(Err(), HasSubstr(kSessionName + " ended: 3 packets"));

  connection_.events_on_attach.clear();
  EXPECT_EQ(
      RunAttach(&connection_, "k", /*stop=*/true, stop_read_, options_, err_),
      kExitOk)
      << Err();
  EXPECT_EQ(connection_.disable_calls(), 1);
  EXPECT_THAT(Err(), HasSubstr(kSessionName + " ended: 12 packets"));

  // An ended session is not stopped again.
  connection_.events_on_attach.push_back(TracingEnded(true, ""));
  EXPECT_EQ(
      RunAttach(&connection_, "k", /*stop=*/true, stop_read_, options_, err_),
      kExitOk);
  EXPECT_EQ(connection_.disable_calls(), 1);
}

TEST_F(TraceSessionTest, AttachAndIsDetachedOfAnUnknownKey) {
  connection_.attach_status =
      base::ErrStatus("no detached session of this user by the key k");
  EXPECT_EQ(RunAttach(&connection_, "k", false, stop_read_, options_, err_),
            kExitFailure);
  EXPECT_THAT(Err(), HasSubstr("attaching to k failed: no detached session"));
  EXPECT_EQ(RunIsDetached(&connection_, "k", err_), kExitNotDetached);
  connection_.attach_status = base::ErrStatus("the service closed the socket");
  EXPECT_EQ(RunIsDetached(&connection_, "k", err_), kExitFailure);
  connection_.attach_status = base::OkStatus();
  EXPECT_EQ(RunIsDetached(&connection_, "k", err_), kExitOk);
}

TEST_F(TraceSessionTest, LostPacketsAreReported) {
  connection_.summary.set_packets_lost(5);
  RequestStop();
  EXPECT_EQ(Run(), kExitOk);
  EXPECT_THAT(Err(), HasSubstr("warning: 5 packets were lost"));
}

TEST_F(TraceSessionTest, StartWarningsFollowTheStartLine) {
  connection_.start_warnings = {"data source \"linux.ftrace\": nobody",
                                "second"};
  config_.set_duration_ms(2000);
  RequestStop();
  EXPECT_EQ(Run(), kExitOk);
  const std::string err = Err();
  const size_t first =
      err.find("warning: data source \"linux.ftrace\": nobody");
  const size_t second = err.find("warning: second");
  const size_t tracing = err.find(" tracing for 2.0s (Ctrl-C");
  ASSERT_NE(first, std::string::npos) << err;
  ASSERT_NE(second, std::string::npos) << err;
  ASSERT_NE(tracing, std::string::npos) << err;
  EXPECT_LT(tracing, first);
  EXPECT_LT(first, second);
}

TEST_F(TraceSessionTest, EmptySessionIsReportedAndExitsZero) {
  config_.add_data_sources()->mutable_config()->set_name("track_event");
  config_.add_data_sources()->mutable_config()->set_name("linux.ftrace");
  connection_.summary.set_packets_written(0);
  connection_.trace_on_disable = "metadata only";
  RequestStop();
  EXPECT_EQ(Run(), kExitOk);
  EXPECT_EQ(ReadFile(out_), "metadata only");
  EXPECT_THAT(Err(), HasSubstr("warning: the session recorded no packet from "
                               "any producer (data sources: track_event, "
                               "linux.ftrace)"));
}

TEST_F(TraceSessionTest, FailOnEmptyExitsThreeAndStillWrites) {
  options_.fail_on_empty = true;
  connection_.summary.set_packets_written(0);
  connection_.trace_on_disable = "metadata only";
  RequestStop();
  EXPECT_EQ(Run(), kExitEmpty);
  EXPECT_EQ(ReadFile(out_), "metadata only");
  EXPECT_THAT(Err(), HasSubstr("recorded no packet from any producer (data "
                               "sources: none)"));
}

TEST_F(TraceSessionTest, FailOnEmptyKeepsZeroWhenPacketsWereRecorded) {
  options_.fail_on_empty = true;
  RequestStop();
  EXPECT_EQ(Run(), kExitOk);
  EXPECT_THAT(Err(), ::testing::Not(HasSubstr("recorded no packet")));
}

TEST_F(TraceSessionTest, SecondStopRequestAbortsABlockedDisable) {
  connection_.disable_blocks = true;
  connection_.trace_on_enable = "partial";
  RequestStop();
  std::thread second([&] {
    connection_.WaitForDisable();
    RequestStop();
  });
  EXPECT_EQ(Run(), kExitFailure);
  second.join();
  EXPECT_TRUE(connection_.aborted());
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("aborted: no trace written"));
}

TEST_F(TraceSessionTest, TwoQueuedStopRequestsAbort) {
  connection_.disable_blocks = true;
  RequestStop();
  RequestStop();
  EXPECT_EQ(Run(), kExitFailure);
  EXPECT_TRUE(connection_.aborted());
  EXPECT_EQ(connection_.disable_calls(), 1);
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
}

TEST_F(TraceSessionTest, RefusedSessionLeavesPreviousOut) {
  connection_.enable_status = base::ErrStatus("buffers[0].size_kb: too big");
  EXPECT_EQ(Run(), kExitFailure);
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("buffers[0].size_kb: too big"));
}

TEST_F(TraceSessionTest, FailedSessionLeavesPreviousOut) {
  connection_.trace_on_enable = "half";
  connection_.SendEvent(TracingEnded(false, "write error: No space left"));
  EXPECT_EQ(Run(), kExitFailure);
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("the session failed: write error"));
}

TEST_F(TraceSessionTest, FailedDisableLeavesPreviousOut) {
  connection_.disable_status = base::ErrStatus("no such session");
  RequestStop();
  EXPECT_EQ(Run(), kExitFailure);
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("stopping the session failed: no such"));
}

TEST_F(TraceSessionTest, DisableRacingTheServiceEndUsesTheEvent) {
  // The service ended the session as the stop request was sent: the
  // request fails, the event says the trace was written.
  connection_.disable_status = base::ErrStatus("no such session");
  connection_.trace_on_enable = "complete";
  RequestStop();
  connection_.SendEvent(TracingEnded(true, ""));
  // The stop request is read first (its fd is polled first).
  EXPECT_EQ(Run(), kExitOk) << Err();
  EXPECT_EQ(connection_.disable_calls(), 1);
  EXPECT_EQ(ReadFile(out_), "complete");
}

TEST_F(TraceSessionTest, LostConnectionLeavesPreviousOut) {
  connection_.Hangup();
  EXPECT_EQ(Run(), kExitFailure);
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("lost the connection to the service: hung up"));
}

TEST_F(TraceSessionTest, ClosedStopFdIsNotWatchedAnyMore) {
  // The stop fd reads end-of-file at once; the run must still end when the
  // service ends the session rather than spin or stop.
  close(stop_write_);
  stop_write_ = -1;
  connection_.trace_on_enable = "t";
  connection_.SendEvent(TracingEnded(true, ""));
  EXPECT_EQ(Run(), kExitOk);
  EXPECT_EQ(connection_.disable_calls(), 0);
  EXPECT_EQ(ReadFile(out_), "t");
}

TEST_F(TraceSessionTest, ServiceMissingItsDeadlineIsStopped) {
  config_.set_duration_ms(1);
  config_.set_data_source_stop_timeout_ms(1);
  options_.end_grace_ms = 0;
  connection_.trace_on_disable = "t";
  EXPECT_EQ(Run(), kExitOk) << Err();
  EXPECT_EQ(connection_.disable_calls(), 1);
  EXPECT_THAT(Err(), HasSubstr("did not end " + kSessionName));
  EXPECT_EQ(ReadFile(out_), "t");
}

TEST_F(TraceSessionTest, ProgressLineWhileTracing) {
  options_.show_progress = true;
  options_.progress_period_ms = 1;
  auto* session = connection_.state.add_sessions();
  session->set_id(kSessionId);
  session->set_elapsed_ms(2000);
  // The second query asks to stop: one line was printed by then.
  connection_.on_query = [&] {
    if (connection_.query_calls() == 2)
      RequestStop();
  };
  EXPECT_EQ(Run(), kExitOk);
  EXPECT_GE(connection_.query_calls(), 2);
  EXPECT_THAT(Err(), HasSubstr("\r\033[K" + kSessionName + "  2.0s  buffer"));
  // Later messages clear the progress line first.
  EXPECT_THAT(Err(), HasSubstr("\r\033[Kringtrace: stopping"));
}

TEST_F(TraceSessionTest, FailedProgressQueryOnABrokenConnection) {
  options_.show_progress = true;
  options_.progress_period_ms = 1;
  connection_.query_status = base::ErrStatus("consumer socket: bad datagram");
  connection_.broken = base::ErrStatus("consumer socket: bad datagram");
  EXPECT_EQ(Run(), kExitFailure);
  EXPECT_EQ(connection_.query_calls(), 1);
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(Err(), HasSubstr("lost the connection to the service: "
                               "consumer socket: bad datagram"));
}

TEST_F(TraceSessionTest, FailedProgressQueryAloneGoesOn) {
  options_.show_progress = true;
  options_.progress_period_ms = 1;
  connection_.query_status = base::ErrStatus("busy");
  connection_.on_query = [&] {
    if (connection_.query_calls() == 3)
      RequestStop();
  };
  EXPECT_EQ(Run(), kExitOk);
  EXPECT_GE(connection_.query_calls(), 3);
}

TEST_F(TraceSessionTest, NoProgressLineUnlessAsked) {
  config_.set_duration_ms(1);
  config_.set_data_source_stop_timeout_ms(1);
  options_.end_grace_ms = 0;
  EXPECT_EQ(Run(), kExitOk);
  EXPECT_EQ(connection_.query_calls(), 0);
}

TEST_F(TraceSessionTest, Sigusr1WritesNumberedSnapshots) {
  connection_.trace_on_disable = "final";
  RequestStop(SIGUSR1);
  RequestStop(SIGUSR1);
  RequestStop(SIGTERM);
  EXPECT_EQ(Run(), kExitOk) << Err();
  EXPECT_EQ(ReadFile(out_ + ".snapshot-1"), "snapshot");
  EXPECT_EQ(ReadFile(out_ + ".snapshot-2"), "snapshot");
  EXPECT_THAT(base::TempFilesBeside(out_ + ".snapshot-1"), IsEmpty());
  EXPECT_EQ(ReadFile(out_), "final");
  EXPECT_THAT(Err(), HasSubstr("wrote snapshot " + out_ + ".snapshot-2: 8 B"));
}

TEST_F(TraceSessionTest, FailedSnapshotDoesNotEndTheSession) {
  connection_.clone_status = base::ErrStatus("clone refused");
  connection_.trace_on_disable = "final";
  RequestStop(SIGUSR1);
  RequestStop(SIGINT);
  EXPECT_EQ(Run(), kExitOk) << Err();
  EXPECT_FALSE(Exists(out_ + ".snapshot-1"));
  EXPECT_THAT(base::TempFilesBeside(out_ + ".snapshot-1"), IsEmpty());
  EXPECT_EQ(ReadFile(out_), "final");
  EXPECT_THAT(Err(), HasSubstr("snapshot 1 failed: clone refused"));
}

TEST_F(TraceSessionTest, Sigusr1WhileStoppingDoesNotAbort) {
  connection_.trace_on_disable = "final";
  connection_.disable_waits_for_release = true;
  RequestStop(SIGINT);
  std::thread usr1([&] {
    connection_.WaitForDisable();
    RequestStop(SIGUSR1);
    // Release DisableTracing only once the stopping loop read SIGUSR1.
    int pending = 1;
    while (ioctl(stop_read_, FIONREAD, &pending) == 0 && pending > 0)
      usleep(1000);
    connection_.Release();
  });
  EXPECT_EQ(Run(), kExitOk) << Err();
  usr1.join();
  EXPECT_FALSE(connection_.aborted());
  EXPECT_EQ(ReadFile(out_), "final");
  EXPECT_FALSE(Exists(out_ + ".snapshot-1"));
}

TEST_F(TraceSessionTest, Clone) {
  std::unique_ptr<TraceOutput> file;
  ASSERT_TRUE(TraceOutput::ForFile(out_, false, false, &file).ok());
  EXPECT_EQ(RunClone(&connection_, kSessionId, file.get(), err_), kExitOk);
  EXPECT_EQ(ReadFile(out_), "snapshot");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("snapshot of " + kSessionName));
}

TEST_F(TraceSessionTest, FailedCloneLeavesPreviousOut) {
  connection_.clone_status = base::ErrStatus("no such session");
  std::unique_ptr<TraceOutput> file;
  ASSERT_TRUE(TraceOutput::ForFile(out_, false, false, &file).ok());
  EXPECT_EQ(RunClone(&connection_, kSessionId, file.get(), err_), kExitFailure);
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("no such session"));
}

// -o -: the same session writes the same bytes to a pipe as to a file
// (several copy blocks, more than a pipe holds: the reader must keep up),
// and the messages stay on |err|.
TEST_F(TraceSessionTest, StdoutGetsTheSameBytesAsAFile) {
  std::string head(TraceOutput::kCopyBlockBytes + 1000, '\0');
  for (size_t i = 0; i < head.size(); i++)
    head[i] = static_cast<char>((i * 131) >> 3);
  connection_.trace_on_enable = head;
  connection_.trace_on_disable = std::string(70000, 'x') + "end";
  RequestStop();
  ASSERT_EQ(Run(), kExitOk) << Err();
  const std::string in_file = ReadFile(out_);
  EXPECT_EQ(in_file.size(), head.size() + 70003);
  RequestStop();
  std::string on_stdout;
  ASSERT_EQ(RunToStdout(&on_stdout), kExitOk) << Err();
  EXPECT_EQ(on_stdout.size(), in_file.size());
  EXPECT_TRUE(on_stdout == in_file);
  EXPECT_THAT(Err(), HasSubstr("wrote stdout: " + FormatBytes(in_file.size()) +
                               ", 12 packets in 1.5s"));
  EXPECT_THAT(Err(), HasSubstr("stopping (Ctrl-C again to abort)"));
}

// Whole or nothing: a failed session leaves stdout empty.
TEST_F(TraceSessionTest, FailedSessionWritesNothingToStdout) {
  connection_.trace_on_enable = "half";
  connection_.SendEvent(TracingEnded(false, "write error: No space left"));
  std::string on_stdout;
  EXPECT_EQ(RunToStdout(&on_stdout), kExitFailure);
  EXPECT_EQ(on_stdout, "");
  EXPECT_THAT(Err(), HasSubstr("the session failed: write error"));
}

// SIGUSR1 has no FILE.snapshot-N to write with -o -: it is refused, said
// so, and the session goes on to write stdout.
TEST_F(TraceSessionTest, Sigusr1WithStdoutIsRefusedAndTheSessionGoesOn) {
  connection_.trace_on_disable = "final";
  RequestStop(SIGUSR1);
  RequestStop(SIGINT);
  std::string on_stdout;
  EXPECT_EQ(RunToStdout(&on_stdout), kExitOk) << Err();
  EXPECT_EQ(on_stdout, "final");
  EXPECT_THAT(Err(), HasSubstr("snapshot 1 not written: the trace goes to "
                               "stdout (-o -), so there is no "
                               "FILE.snapshot-N; `ringtrace --clone 7 -o "
                               "FILE` writes one"));
  EXPECT_FALSE(Exists("-.snapshot-1"));
  EXPECT_FALSE(Exists(dir_.File("-.snapshot-1")));
}

TEST_F(TraceSessionTest, CloneToStdout) {
  PipeCapture pipe;
  ASSERT_TRUE(pipe.ok());
  {
    std::unique_ptr<TraceOutput> output;
    ASSERT_TRUE(
        TraceOutput::ForStdout(pipe.write_fd(), &output, dir_.path()).ok());
    EXPECT_EQ(RunClone(&connection_, kSessionId, output.get(), err_), kExitOk);
  }
  EXPECT_EQ(pipe.Finish(), "snapshot");
  EXPECT_THAT(Err(), HasSubstr("snapshot of " + kSessionName + " to stdout"));
}

TEST_F(TraceSessionTest, QueryPrintsTables) {
  connection_.state.set_max_sessions(8);
  char* buf = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&buf, &size);
  EXPECT_EQ(RunQuery(&connection_, out, err_), kExitOk);
  fclose(out);
  const std::string printed(buf, size);
  free(buf);
  EXPECT_THAT(printed, HasSubstr("Producers: none\n"));
  EXPECT_THAT(printed, HasSubstr("Limits: 8 sessions"));
}

TEST_F(TraceSessionTest, Stop) {
  EXPECT_EQ(RunStop(&connection_, kSessionId, err_), kExitOk);
  EXPECT_EQ(connection_.disable_calls(), 1);
  EXPECT_THAT(Err(),
              HasSubstr("stopped " + kSessionName + ": 12 packets, 0 lost"));
  connection_.disable_status = base::ErrStatus("not yours");
  EXPECT_EQ(RunStop(&connection_, kSessionId, err_), kExitFailure);
  EXPECT_THAT(Err(), HasSubstr("not yours"));
}

}  // namespace
}  // namespace cli
}  // namespace ringtrace
