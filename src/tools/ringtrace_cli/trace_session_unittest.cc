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

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "src/base/test/other_user.h"
#include "src/base/test/temp_dir.h"
#include "src/tools/ringtrace_cli/cli_options.h"
#include "src/tools/ringtrace_cli/output_file.h"
#include "src/tools/ringtrace_cli/service_state_format.h"
#include "src/tools/ringtrace_cli/test/fake_service.h"
#include "src/tools/ringtrace_cli/test/pipe_capture.h"
#include "src/tracing/consumer/consumer_client.h"

namespace ringtrace {
namespace cli {
namespace {

using perfetto::protos::TraceConfig;
using ringtrace::protos::ConsumerResponse;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr uint64_t kSessionId = FakeService::kSessionId;
// How messages name that session.
const std::string kSessionName = std::string("session") + " 7";
// Far beyond any wait of these tests.
constexpr int kSafetyMs = 20000;

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

// The CLI against a FakeService, through the real TracingSession (and,
// for --clone and --stop, ConsumerClient): one connection per run.
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
    // A config the client's checks accept (one data source at least).
    config_.add_buffers()->set_size_kb(1024);
    config_.add_data_sources()->mutable_config()->set_name("track_event");
    service_.summary.set_packets_written(12);
    service_.summary.set_duration_ms(1500);
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

  // |run| on a TracingSession connected to the fake, which serves that
  // one connection until the session is gone.
  int WithSession(const std::function<int(TracingSession*)>& run) {
    service_.Serve();
    int code = -1;
    {
      base::Status status;
      std::unique_ptr<TracingSession> session = TracingSession::Connect(
          CliSessionOptions(service_.path(), config_, options_), &status);
      EXPECT_TRUE(session) << status.message();
      if (session)
        code = run(session.get());
    }
    service_.Join();
    return code;
  }

  // The same with the internal client (--clone, --stop).
  int WithClient(const std::function<int(consumer::ConsumerClient*)>& run) {
    service_.Serve();
    int code = -1;
    {
      base::Status status;
      std::unique_ptr<consumer::ConsumerClient> client =
          consumer::ConsumerClient::Connect(service_.path(), kSafetyMs,
                                            &status);
      EXPECT_TRUE(client) << status.message();
      if (client)
        code = run(client.get());
    }
    service_.Join();
    return code;
  }

  int Run() {
    std::unique_ptr<TraceOutput> file;
    EXPECT_TRUE(TraceOutput::ForFile(out_, false, false, &file).ok());
    return WithSession([&](TracingSession* session) {
      return RunTraceSession(session, config_, file.get(), stop_read_, options_,
                             err_);
    });
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
      code = WithSession([&](TracingSession* session) {
        return RunTraceSession(session, config_, output.get(), stop_read_,
                               options_, err_);
      });
    }
    *out = pipe.Finish();
    return code;
  }

  int RunAttachTo(const std::string& key, bool stop) {
    return WithSession([&](TracingSession* session) {
      return RunAttach(session, key, stop, stop_read_, options_, err_);
    });
  }
  int RunIsDetachedOf(const std::string& key) {
    return WithSession([&](TracingSession* session) {
      return RunIsDetached(session, key, err_);
    });
  }

  std::string Err() {
    fflush(err_);
    return std::string(err_buf_, err_size_);
  }

  base::TempDir dir_;
  const std::string out_ = dir_.File("t.pftrace");
  FakeService service_;
  TraceConfig config_;
  TraceSessionOptions options_;
  int stop_read_ = -1;
  int stop_write_ = -1;
  char* err_buf_ = nullptr;
  size_t err_size_ = 0;
  FILE* err_ = nullptr;
};

TEST_F(TraceSessionTest, ServiceEndsTheSession) {
  service_.trace_on_enable = "whole trace";
  service_.events_after_enable.push_back(TracingEnded(true, ""));
  EXPECT_EQ(Run(), kExitOk) << Err();
  EXPECT_EQ(ReadFile(out_), "whole trace");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_EQ(service_.disable_calls(), 0);
  EXPECT_THAT(Err(), HasSubstr("wrote " + out_ + ": 11 B, 3 packets"));
}

TEST_F(TraceSessionTest, EventOfAnotherSessionIsIgnored) {
  ConsumerResponse other = TracingEnded(false, "other session failed");
  other.set_session_id(kSessionId + 1);
  service_.events_after_enable.push_back(other);
  service_.events_after_enable.push_back(TracingEnded(true, ""));
  service_.trace_on_enable = "t";
  EXPECT_EQ(Run(), kExitOk) << Err();
  EXPECT_EQ(ReadFile(out_), "t");
  EXPECT_THAT(Err(), ::testing::Not(HasSubstr("other session failed")));
}

TEST_F(TraceSessionTest, StopRequestDisablesAndWrites) {
  config_.set_data_source_stop_timeout_ms(700);
  options_.disable_slack_ms = 1000;
  service_.trace_on_disable = "stopped trace";
  RequestStop();
  EXPECT_EQ(Run(), kExitOk) << Err();
  EXPECT_EQ(service_.disable_calls(), 1);
  // The stop waits for the data sources' stop timeout plus the slack.
  EXPECT_EQ(CliSessionOptions("", config_, options_).stop_timeout_ms, 1700);
  EXPECT_EQ(ReadFile(out_), "stopped trace");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("stopping (Ctrl-C again to abort)"));
  EXPECT_THAT(Err(), HasSubstr("13 B, 12 packets in 1.5s"));
}

// --detach KEY: the session starts, is detached under KEY, and its file is
// put in place at once (the service goes on writing into it).
TEST_F(TraceSessionTest, DetachPutsTheFileInPlaceAndLeaves) {
  service_.trace_on_enable = "begun";
  std::unique_ptr<TraceOutput> file;
  ASSERT_TRUE(TraceOutput::ForFile(out_, false, false, &file).ok());
  EXPECT_EQ(WithSession([&](TracingSession* session) {
              return RunDetachedSession(session, config_, "nightly", file.get(),
                                        err_);
            }),
            kExitOk)
      << Err();
  // Not stopped when the TracingSession went: it is the service's now.
  EXPECT_EQ(service_.detached_key(), "nightly");
  EXPECT_FALSE(service_.aborted());
  EXPECT_EQ(service_.disable_calls(), 0);
  EXPECT_EQ(ReadFile(out_), "begun");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr(kSessionName + " detached as nightly"));
  EXPECT_THAT(Err(), HasSubstr("`--attach nightly --stop` ends it"));
}

TEST_F(TraceSessionTest, FailedDetachWritesNothing) {
  service_.trace_on_enable = "begun";
  service_.detach_status = base::ErrStatus("key k: in use");
  std::unique_ptr<TraceOutput> file;
  ASSERT_TRUE(TraceOutput::ForFile(out_, false, false, &file).ok());
  EXPECT_EQ(WithSession([&](TracingSession* session) {
              return RunDetachedSession(session, config_, "k", file.get(),
                                        err_);
            }),
            kExitFailure);
  // Aborted, not stopped: the service frees it unwritten.
  EXPECT_EQ(service_.disable_calls(), 0);
  EXPECT_TRUE(service_.aborted());
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("detaching " + kSessionName +
                               " failed: key k: in use; it is freed"));
}

// --attach KEY: waits for the end (here it ended while detached: the
// service sends it right after the answer) and reports it; --stop stops it
// unless it had ended.
TEST_F(TraceSessionTest, AttachReportsTheEnd) {
  service_.events_after_attach.push_back(TracingEnded(true, ""));
  EXPECT_EQ(RunAttachTo("k", /*stop=*/false), kExitOk) << Err();
  EXPECT_EQ(service_.disable_calls(), 0);
  EXPECT_THAT(Err(), HasSubstr("attached to " + kSessionName + " (k)"));
  EXPECT_THAT(Err(), HasSubstr(kSessionName + " ended: 3 packets"));

  service_.events_after_attach.clear();
  EXPECT_EQ(RunAttachTo("k", /*stop=*/true), kExitOk) << Err();
  EXPECT_EQ(service_.disable_calls(), 1);
  EXPECT_THAT(Err(), HasSubstr(kSessionName + " ended: 12 packets"));
}

// An attached session that had ended is reported with its end's figures:
// the stop the CLI may send before it read the end is refused (the session
// is gone), and the end that came first is what counts.
TEST_F(TraceSessionTest, AttachStopOfAnEndedSessionReportsItsEnd) {
  service_.events_after_attach.push_back(TracingEnded(true, ""));
  service_.disable_status = base::ErrStatus("session_id: no such session");
  EXPECT_EQ(RunAttachTo("k", /*stop=*/true), kExitOk) << Err();
  EXPECT_LE(service_.disable_calls(), 1);
  EXPECT_THAT(Err(), HasSubstr(kSessionName + " ended: 3 packets"));
  EXPECT_THAT(Err(), ::testing::Not(HasSubstr("failed")));
}

// The service refuses the probe of a key it does not know: "not detached".
// A connection that breaks instead is an error.
TEST_F(TraceSessionTest, AttachAndIsDetachedOfAnUnknownKey) {
  service_.attach_status =
      base::ErrStatus("no detached session of this user by the key k");
  EXPECT_EQ(RunAttachTo("k", false), kExitFailure);
  EXPECT_THAT(Err(), HasSubstr("attaching to k failed: no detached session"));
  EXPECT_EQ(RunIsDetachedOf("k"), kExitNotDetached);
  service_.hang_up_on_probe = true;
  EXPECT_EQ(RunIsDetachedOf("k"), kExitFailure);
  EXPECT_THAT(Err(), HasSubstr("the service closed the connection"));
  service_.hang_up_on_probe = false;
  service_.attach_status = base::OkStatus();
  EXPECT_EQ(RunIsDetachedOf("k"), kExitOk);
  EXPECT_EQ(service_.detached_key(), "k");
}

TEST_F(TraceSessionTest, LostPacketsAreReported) {
  service_.summary.set_packets_lost(5);
  RequestStop();
  EXPECT_EQ(Run(), kExitOk);
  EXPECT_THAT(Err(), HasSubstr("warning: 5 packets were lost"));
}

TEST_F(TraceSessionTest, StartWarningsFollowTheStartLine) {
  service_.start_warnings = {"data source \"linux.ftrace\": nobody", "second"};
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
  config_.add_data_sources()->mutable_config()->set_name("linux.ftrace");
  service_.summary.set_packets_written(0);
  service_.trace_on_disable = "metadata only";
  RequestStop();
  EXPECT_EQ(Run(), kExitOk);
  EXPECT_EQ(ReadFile(out_), "metadata only");
  EXPECT_THAT(Err(), HasSubstr("warning: the session recorded no packet from "
                               "any producer (data sources: track_event, "
                               "linux.ftrace)"));
}

TEST_F(TraceSessionTest, FailOnEmptyExitsThreeAndStillWrites) {
  options_.fail_on_empty = true;
  service_.summary.set_packets_written(0);
  service_.trace_on_disable = "metadata only";
  RequestStop();
  EXPECT_EQ(Run(), kExitEmpty);
  EXPECT_EQ(ReadFile(out_), "metadata only");
  EXPECT_THAT(Err(), HasSubstr("recorded no packet from any producer (data "
                               "sources: track_event)"));
}

TEST_F(TraceSessionTest, FailOnEmptyKeepsZeroWhenPacketsWereRecorded) {
  options_.fail_on_empty = true;
  RequestStop();
  EXPECT_EQ(Run(), kExitOk);
  EXPECT_THAT(Err(), ::testing::Not(HasSubstr("recorded no packet")));
}

TEST_F(TraceSessionTest, SecondStopRequestAbortsABlockedDisable) {
  service_.disable_blocks = true;
  service_.trace_on_enable = "partial";
  RequestStop();
  std::thread second([&] {
    service_.WaitForDisable();
    RequestStop();
  });
  EXPECT_EQ(Run(), kExitFailure);
  second.join();
  EXPECT_TRUE(service_.aborted());
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("aborted: no trace written"));
}

TEST_F(TraceSessionTest, TwoQueuedStopRequestsAbort) {
  service_.disable_blocks = true;
  RequestStop();
  RequestStop();
  EXPECT_EQ(Run(), kExitFailure);
  EXPECT_TRUE(service_.aborted());
  // The abort may shut the connection before the stop request went out.
  EXPECT_LE(service_.disable_calls(), 1);
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
}

TEST_F(TraceSessionTest, RefusedSessionLeavesPreviousOut) {
  service_.enable_status = base::ErrStatus("buffers[0].size_kb: too big");
  EXPECT_EQ(Run(), kExitFailure);
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("buffers[0].size_kb: too big"));
}

TEST_F(TraceSessionTest, FailedSessionLeavesPreviousOut) {
  service_.trace_on_enable = "half";
  service_.events_after_enable.push_back(
      TracingEnded(false, "write error: No space left"));
  EXPECT_EQ(Run(), kExitFailure);
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("the session failed: write error"));
}

TEST_F(TraceSessionTest, FailedDisableLeavesPreviousOut) {
  service_.disable_status = base::ErrStatus("no such session");
  RequestStop();
  EXPECT_EQ(Run(), kExitFailure);
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("stopping the session failed: no such"));
}

TEST_F(TraceSessionTest, DisableRacingTheServiceEndUsesTheEvent) {
  // The service ended the session as the stop request was sent: the
  // request fails, the event (which came first) says the trace was written.
  service_.disable_status = base::ErrStatus("no such session");
  service_.trace_on_enable = "complete";
  RequestStop();
  service_.events_before_disable.push_back(TracingEnded(true, ""));
  EXPECT_EQ(Run(), kExitOk) << Err();
  EXPECT_EQ(service_.disable_calls(), 1);
  EXPECT_EQ(ReadFile(out_), "complete");
}

TEST_F(TraceSessionTest, LostConnectionLeavesPreviousOut) {
  service_.hang_up_after_enable = true;
  EXPECT_EQ(Run(), kExitFailure);
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("lost the connection to the service: consumer "
                               "socket: the service closed the connection"));
}

TEST_F(TraceSessionTest, ClosedStopFdIsNotWatchedAnyMore) {
  // The stop fd reads end-of-file at once; the run must still end when the
  // service ends the session rather than spin or stop.
  close(stop_write_);
  stop_write_ = -1;
  service_.trace_on_enable = "t";
  service_.events_after_enable.push_back(TracingEnded(true, ""));
  EXPECT_EQ(Run(), kExitOk);
  EXPECT_EQ(service_.disable_calls(), 0);
  EXPECT_EQ(ReadFile(out_), "t");
}

TEST_F(TraceSessionTest, ServiceMissingItsDeadlineIsStopped) {
  config_.set_duration_ms(1);
  config_.set_data_source_stop_timeout_ms(1);
  options_.end_grace_ms = 0;
  service_.trace_on_disable = "t";
  EXPECT_EQ(Run(), kExitOk) << Err();
  EXPECT_EQ(service_.disable_calls(), 1);
  EXPECT_THAT(Err(), HasSubstr("did not end " + kSessionName));
  EXPECT_EQ(ReadFile(out_), "t");
}

TEST_F(TraceSessionTest, ProgressLineWhileTracing) {
  options_.show_progress = true;
  options_.progress_period_ms = 1;
  auto* session = service_.state.add_sessions();
  session->set_id(kSessionId);
  session->set_elapsed_ms(2000);
  // The second query asks to stop: one line was printed by then.
  service_.on_query = [&] {
    if (service_.query_calls() == 2)
      RequestStop();
  };
  EXPECT_EQ(Run(), kExitOk);
  EXPECT_GE(service_.query_calls(), 2);
  EXPECT_THAT(Err(), HasSubstr("\r\033[K" + kSessionName + "  2.0s  buffer"));
  // Later messages clear the progress line first.
  EXPECT_THAT(Err(), HasSubstr("\r\033[Kringtrace: stopping"));
}

TEST_F(TraceSessionTest, FailedProgressQueryOnABrokenConnection) {
  options_.show_progress = true;
  options_.progress_period_ms = 1;
  service_.query_breaks = true;
  EXPECT_EQ(Run(), kExitFailure);
  EXPECT_EQ(service_.query_calls(), 1);
  EXPECT_EQ(ReadFile(out_), "previous");
  EXPECT_THAT(Err(), HasSubstr("lost the connection to the service: "
                               "consumer socket: protocol violation"));
}

TEST_F(TraceSessionTest, FailedProgressQueryAloneGoesOn) {
  options_.show_progress = true;
  options_.progress_period_ms = 1;
  service_.query_status = base::ErrStatus("busy");
  service_.on_query = [&] {
    if (service_.query_calls() == 3)
      RequestStop();
  };
  EXPECT_EQ(Run(), kExitOk);
  EXPECT_GE(service_.query_calls(), 3);
}

TEST_F(TraceSessionTest, NoProgressLineUnlessAsked) {
  config_.set_duration_ms(1);
  config_.set_data_source_stop_timeout_ms(1);
  options_.end_grace_ms = 0;
  EXPECT_EQ(Run(), kExitOk);
  EXPECT_EQ(service_.query_calls(), 0);
}

TEST_F(TraceSessionTest, Sigusr1WritesNumberedSnapshots) {
  service_.trace_on_disable = "final";
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
  service_.clone_status = base::ErrStatus("clone refused");
  service_.trace_on_disable = "final";
  RequestStop(SIGUSR1);
  RequestStop(SIGINT);
  EXPECT_EQ(Run(), kExitOk) << Err();
  EXPECT_FALSE(Exists(out_ + ".snapshot-1"));
  EXPECT_THAT(base::TempFilesBeside(out_ + ".snapshot-1"), IsEmpty());
  EXPECT_EQ(ReadFile(out_), "final");
  EXPECT_THAT(Err(), HasSubstr("snapshot 1 failed: clone refused"));
}

TEST_F(TraceSessionTest, Sigusr1WhileStoppingDoesNotAbort) {
  service_.trace_on_disable = "final";
  service_.disable_waits_for_release = true;
  RequestStop(SIGINT);
  std::thread usr1([&] {
    service_.WaitForDisable();
    RequestStop(SIGUSR1);
    // Release DisableTracing only once the stopping loop read SIGUSR1.
    int pending = 1;
    while (ioctl(stop_read_, FIONREAD, &pending) == 0 && pending > 0)
      usleep(1000);
    service_.Release();
  });
  EXPECT_EQ(Run(), kExitOk) << Err();
  usr1.join();
  EXPECT_FALSE(service_.aborted());
  EXPECT_EQ(ReadFile(out_), "final");
  EXPECT_FALSE(Exists(out_ + ".snapshot-1"));
}

TEST_F(TraceSessionTest, Clone) {
  std::unique_ptr<TraceOutput> file;
  ASSERT_TRUE(TraceOutput::ForFile(out_, false, false, &file).ok());
  EXPECT_EQ(WithClient([&](consumer::ConsumerClient* client) {
              return RunClone(client, kSessionId, file.get(), err_);
            }),
            kExitOk);
  EXPECT_EQ(ReadFile(out_), "snapshot");
  EXPECT_THAT(base::TempFilesBeside(out_), IsEmpty());
  EXPECT_THAT(Err(), HasSubstr("snapshot of " + kSessionName));
}

TEST_F(TraceSessionTest, FailedCloneLeavesPreviousOut) {
  service_.clone_status = base::ErrStatus("no such session");
  std::unique_ptr<TraceOutput> file;
  ASSERT_TRUE(TraceOutput::ForFile(out_, false, false, &file).ok());
  EXPECT_EQ(WithClient([&](consumer::ConsumerClient* client) {
              return RunClone(client, kSessionId, file.get(), err_);
            }),
            kExitFailure);
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
  service_.trace_on_enable = head;
  service_.trace_on_disable = std::string(70000, 'x') + "end";
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
  service_.trace_on_enable = "half";
  service_.events_after_enable.push_back(
      TracingEnded(false, "write error: No space left"));
  std::string on_stdout;
  EXPECT_EQ(RunToStdout(&on_stdout), kExitFailure);
  EXPECT_EQ(on_stdout, "");
  EXPECT_THAT(Err(), HasSubstr("the session failed: write error"));
}

// SIGUSR1 has no FILE.snapshot-N to write with -o -: it is refused, said
// so, and the session goes on to write stdout.
TEST_F(TraceSessionTest, Sigusr1WithStdoutIsRefusedAndTheSessionGoesOn) {
  service_.trace_on_disable = "final";
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
    EXPECT_EQ(WithClient([&](consumer::ConsumerClient* client) {
                return RunClone(client, kSessionId, output.get(), err_);
              }),
              kExitOk);
  }
  EXPECT_EQ(pipe.Finish(), "snapshot");
  EXPECT_THAT(Err(), HasSubstr("snapshot of " + kSessionName + " to stdout"));
}

TEST_F(TraceSessionTest, QueryPrintsTables) {
  service_.state.set_max_sessions(8);
  char* buf = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&buf, &size);
  EXPECT_EQ(WithSession([&](TracingSession* session) {
              return RunQuery(session, out, err_);
            }),
            kExitOk);
  fclose(out);
  const std::string printed(buf, size);
  free(buf);
  EXPECT_THAT(printed, HasSubstr("Producers: none\n"));
  EXPECT_THAT(printed, HasSubstr("Limits: 8 sessions"));
}

TEST_F(TraceSessionTest, Stop) {
  const auto stop = [&](consumer::ConsumerClient* client) {
    return RunStop(client, kSessionId, err_);
  };
  EXPECT_EQ(WithClient(stop), kExitOk);
  EXPECT_EQ(service_.disable_calls(), 1);
  EXPECT_THAT(Err(),
              HasSubstr("stopped " + kSessionName + ": 12 packets, 0 lost"));
  service_.disable_status = base::ErrStatus("not yours");
  EXPECT_EQ(WithClient(stop), kExitFailure);
  EXPECT_THAT(Err(), HasSubstr("not yours"));
}

}  // namespace
}  // namespace cli
}  // namespace ringtrace
