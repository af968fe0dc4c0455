/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ConsumerClient: the blocking client of ringtraced's consumer socket
// (docs/sessions.md, "Consumer protocol"), the one implementation of that
// protocol: ringtrace::TracingSession, the public consumer API, is built on
// it, and the `ringtrace` CLI uses it directly only for --clone and --stop
// (a session of another process, by its id).
//
// Every call sends one ConsumerRequest (consumer_protocol.h) with the next
// request id and waits, at most its timeout, for the response with that id.
// The service may send, at any time, the unsolicited tracing_ended event
// (request_id 0: it ended a session itself); one arriving while a call waits
// is queued, and TakeEvent()/WaitForEvent() hand events out in order.
//
// The service is treated as hostile, like any peer: nothing it sends can
// crash the client or make a call wait past its timeout (sends are
// non-blocking and bounded by the same deadline). A datagram that is not a
// valid response (bad framing, a response to a request never sent, an fd
// attached, control characters in a string, a flood of events) is a
// protocol violation; like a hang-up it breaks the connection: the call
// returns an error naming it, and every later call returns that error at
// once. A response that arrives after its call timed out is recognised by
// its id and dropped.
//
// A refusal by the service (ok = false) is returned as an error carrying the
// service's message unchanged (it names the config field or limit at
// fault); transport errors start with "consumer socket".
//
// Thread model: one thread uses a client at a time (TracingSession
// serializes its calls).

#ifndef SRC_TRACING_CONSUMER_CONSUMER_CLIENT_H_
#define SRC_TRACING_CONSUMER_CONSUMER_CLIENT_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "protos/ringtrace/ipc/consumer_port.pb.h"
#include "ringtrace/status.h"
#include "src/tracing/ipc/unix_socket.h"

namespace perfetto {
namespace protos {
class TraceConfig;
}  // namespace protos
}  // namespace perfetto

namespace ringtrace {
namespace consumer {

class ConsumerClient {
 public:
  // Wait for the responses of calls without a timeout argument
  // (EnableTracing, GetTraceStats, CloneSession, QueryServiceState).
  static constexpr int kDefaultTimeoutMs = 30000;
  // Flush(): what the client waits beyond the flush timeout it sends (the
  // service drains the rings after the producers' acks).
  static constexpr int kFlushMarginMs = 5000;
  // Unsolicited events queued and not yet taken; more is a flood, a
  // protocol violation.
  static constexpr size_t kMaxQueuedEvents = 1024;

  // Connects to the consumer socket at |path| within |timeout_ms|. Null and
  // an error in |status| on failure, also when the process serving the
  // socket is neither this user nor root (CheckServiceUid): the client
  // hands the service its trace files.
  static std::unique_ptr<ConsumerClient> Connect(const std::string& path,
                                                 int timeout_ms,
                                                 base::Status* status);
  // OK if a service running as |service_uid| may be trusted by a client
  // running as |client_uid|: the same user, or root.
  static base::Status CheckServiceUid(uid_t service_uid, uid_t client_uid);
  // A client on an already connected socket (tests).
  static std::unique_ptr<ConsumerClient> FromSocket(
      std::unique_ptr<ipc::UnixSocket> socket);

  ~ConsumerClient();
  ConsumerClient(const ConsumerClient&) = delete;
  ConsumerClient& operator=(const ConsumerClient&) = delete;

  // The timeout of the calls without a timeout argument (> 0).
  void set_timeout_ms(int timeout_ms) { timeout_ms_ = timeout_ms; }

  // Starts a session tracing into |out_fd| (a regular file open for
  // writing; the service gets a duplicate, |out_fd| stays ours). The config
  // and the fd are checked here first (ValidateTraceConfig,
  // CheckTraceFileFd), so a defect is reported without a round trip.
  // |warnings| (may be null) receives what the service says the session
  // will not record as asked (ConsumerResponse.warnings).
  base::Status EnableTracing(const perfetto::protos::TraceConfig& config,
                             int out_fd,
                             uint64_t* session_id,
                             std::vector<std::string>* warnings = nullptr);
  // Stops the session and waits, at most |timeout_ms|, until its trace is
  // written; |summary| (may be null) receives the service's summary.
  base::Status DisableTracing(uint64_t session_id,
                              int timeout_ms,
                              protos::SessionSummary* summary);
  // Asks the service to flush the session, giving producers |timeout_ms|
  // (0: the session's flush_timeout_ms or 5000) to ack; waits that long
  // plus kFlushMarginMs (0: the longest flush timeout a config may set).
  base::Status Flush(uint64_t session_id, uint32_t timeout_ms);
  // |stats_bytes|: a serialized perfetto.protos.TraceStats, unparsed (the
  // caller parses it, as untrusted bytes).
  base::Status GetTraceStats(uint64_t session_id, std::string* stats_bytes);
  // Writes a snapshot of the session into |fd| (checked like out_fd).
  base::Status CloneSession(uint64_t session_id, int fd);
  base::Status QueryServiceState(protos::ServiceState* state);
  // Leaves session |session_id| (this connection's) running under |key|:
  // this connection may close without ending it (docs/sessions.md,
  // "Detached sessions"). The key is checked here first (CheckDetachKey).
  base::Status Detach(uint64_t session_id, const std::string& key);
  // Becomes the owner of this user's session detached under |key|
  // (|*session_id|). If it ended while detached, its tracing_ended event is
  // queued right after (TakeEvent, WaitForEvent). |probe|: only looks it
  // up, nothing changes.
  base::Status Attach(const std::string& key, bool probe, uint64_t* session_id);
  // Whether this user has a session detached under |key| (a probe: nothing
  // changes). The service refuses the probe of a key it does not know: that
  // answer is |*detached| = false, not an error; a transport failure or a
  // timeout is.
  base::Status IsDetached(const std::string& key, bool* detached);

  // The socket, for poll(2): when it is readable, WaitForEvent(0, ...)
  // reads what is pending without blocking.
  int fd() const;
  // Moves the oldest queued event into |event|; false if none is queued.
  bool TakeEvent(protos::ConsumerResponse* event);
  // Reads from the socket until an event is queued or |timeout_ms| (>= 0)
  // passed. Ok with |*got_event| telling which; an error if the connection
  // broke. Responses to timed-out calls that arrive here are dropped.
  base::Status WaitForEvent(int timeout_ms, bool* got_event);

  // The error that broke the connection; ok while it is usable.
  const base::Status& broken() const { return broken_; }

 private:
  explicit ConsumerClient(std::unique_ptr<ipc::UnixSocket> socket);

  // Sends |request| (with |fd| attached if >= 0) under a fresh request id
  // and waits until |timeout_ms| for its response, into |response|. Ok only
  // for a response with ok = true.
  base::Status Call(protos::ConsumerRequest* request,
                    int fd,
                    int timeout_ms,
                    protos::ConsumerResponse* response);
  base::Status SendUntil(const std::vector<uint8_t>& datagram,
                         int fd,
                         uint64_t deadline_ms);
  // Reads one datagram, waiting until |deadline_ms|: a response for
  // |want_id| goes into |response| (and |*got| is set), an event is queued,
  // a late response is dropped. Ok with |*got| false on timeout or when
  // nothing for |want_id| came; an error breaks the connection.
  base::Status ReadOne(uint64_t deadline_ms,
                       uint64_t want_id,
                       protos::ConsumerResponse* response,
                       bool* got,
                       bool* timed_out);
  // Records |status| as the reason the connection is broken, closes the
  // socket and returns it.
  base::Status Break(base::Status status);

  std::unique_ptr<ipc::UnixSocket> socket_;
  base::Status broken_;
  int timeout_ms_ = kDefaultTimeoutMs;
  uint64_t next_request_id_ = 1;
  // Ids of calls that timed out: their responses may still come.
  std::set<uint64_t> abandoned_ids_;
  std::deque<protos::ConsumerResponse> events_;
  std::vector<uint8_t> recv_buf_;
};

}  // namespace consumer
}  // namespace ringtrace

#endif  // SRC_TRACING_CONSUMER_CONSUMER_CLIENT_H_
