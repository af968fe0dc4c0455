/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TEST ONLY. The fixture of the session end-to-end tests that run the
// ringtraced daemon, ringtrace_session_app processes and ConsumerClient:
// starting and stopping the daemon, the apps and consumers, trace files,
// and the hostile consumers of the hostile-consumer test.

#ifndef SRC_TRACING_TEST_SESSIONS_LIFECYCLE_FIXTURE_H_
#define SRC_TRACING_TEST_SESSIONS_LIFECYCLE_FIXTURE_H_

#include <stdint.h>

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/base/scoped_fd.h"
#include "src/base/test/subprocess.h"
#include "src/tracing/consumer/consumer_client.h"
#include "src/tracing/ipc/unix_socket.h"
#include "src/tracing/producer/hello_client.h"
#include "src/tracing/test/ringtraced_process.h"
#include "src/tracing/test/session_app.h"

namespace ringtrace {
namespace test {

// Deadlines against hangs on a loaded machine, not timing assertions.
constexpr int kTimeoutMs = 120000;

// |v| with |n| added to each element.
std::vector<uint64_t> Plus(std::vector<uint64_t> v, uint64_t n);

class SessionsLifecycleFixture : public EndToEndFixture {
 protected:
  SessionsLifecycleFixture() : consumer_socket_(dir_ + "/consumer.sock") {}

  // Starts ringtraced on socket_ and consumer_socket_ with |extra| flags.
  // Null (and a test failure) if it did not come up.
  std::unique_ptr<base::Subprocess> StartService(
      const std::vector<std::string>& extra);
  // SIGTERM; expects exit 0 and |expected| in its summary.
  void StopService(base::Subprocess* service, const std::string& expected);
  bool StartApp(SessionApp* app,
                uint32_t threads,
                const std::vector<std::string>& extra);
  std::unique_ptr<consumer::ConsumerClient> ConnectConsumer();
  // A new file at |path|, open for writing.
  base::ScopedFd CreateTraceFile(const std::string& path);

  // Another local user, for the multi-user tests: a uid the test can switch
  // a child to (|n|: 1, 2, ... distinct uids, counting down from nobody's
  // 65534), or this process's own uid when it is not root (said once on
  // stdout: the test then proves less).
  static uid_t OtherUid(uint32_t n);
  // Forks a child that switches to |uid| (setresgid/setresuid; from root
  // only) and exits with |body|'s result (0: it did what it should).
  // Returns its pid, or -1.
  static pid_t ForkAs(uid_t uid, const std::function<int()>& body);
  // ForkAs(OtherUid(1)) a hostile producer: it connects to socket_, says
  // Hello as |name| and runs |body| on the connection.
  pid_t ForkHostileProducer(
      const std::string& name,
      const std::function<int(ipc::UnixSocket*, producer::HandshakeResult*)>&
          body);
  // Waits for |pid|: true if it exited with 0.
  static bool ExitedWith0(pid_t pid);

  // The hostile consumers, each against the running daemon:
  // a datagram that is no request: the connection is closed.
  void ExpectMalformedDatagramCloses();
  // A config the client would refuse, sent raw: answered with an error
  // naming the field; the connection stays usable.
  void ExpectInvalidConfigRefused();
  // Buffers over --max-buffer-mb (64) and sessions over --max-sessions (3,
  // one of them the good session): refused, naming the limit.
  void ExpectLimitsRefused();
  // Sends requests and never reads the answers: the service drops it.
  void ExpectNonReaderDropped();

  const std::string consumer_socket_;
};

}  // namespace test
}  // namespace ringtrace

#endif  // SRC_TRACING_TEST_SESSIONS_LIFECYCLE_FIXTURE_H_
