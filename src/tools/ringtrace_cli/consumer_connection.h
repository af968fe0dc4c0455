/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The ConsumerConnection of the real service: forwards to a ConsumerClient
// (src/tracing/consumer/consumer_client.h).
//
// Thread model: as ConsumerConnection (trace_session.h). The client is used
// by one thread at a time; Abort() touches only a duplicate of the socket
// fd, taken at construction, so it is safe from another thread while a call
// blocks, and stays valid even if the client closed its own fd meanwhile.
// event_fd() is that duplicate too, for the same reason; TakeEvent() reports
// a connection the client found broken even when the fd shows nothing.

#ifndef SRC_TOOLS_RINGTRACE_CLI_CONSUMER_CONNECTION_H_
#define SRC_TOOLS_RINGTRACE_CLI_CONSUMER_CONNECTION_H_

#include <memory>
#include <string>

#include "src/base/scoped_fd.h"
#include "src/tools/ringtrace_cli/trace_session.h"
#include "src/tracing/consumer/consumer_client.h"

namespace ringtrace {
namespace cli {

class ClientConnection : public ConsumerConnection {
 public:
  explicit ClientConnection(std::unique_ptr<consumer::ConsumerClient> client);
  ~ClientConnection() override;

  base::Status EnableTracing(const perfetto::protos::TraceConfig& config,
                             int out_fd,
                             uint64_t* session_id,
                             std::vector<std::string>* warnings) override;
  base::Status DisableTracing(
      uint64_t session_id,
      uint32_t timeout_ms,
      ringtrace::protos::SessionSummary* summary) override;
  base::Status CloneSession(uint64_t session_id, int out_fd) override;
  base::Status Detach(uint64_t session_id, const std::string& key) override;
  base::Status Attach(const std::string& key,
                      bool probe,
                      uint64_t* session_id) override;
  base::Status QueryServiceState(
      ringtrace::protos::ServiceState* state) override;
  int event_fd() override;
  bool TakeEvent(ringtrace::protos::ConsumerResponse* event,
                 base::Status* status) override;
  void Abort() override;

 private:
  std::unique_ptr<consumer::ConsumerClient> client_;
  base::ScopedFd abort_fd_;
};

}  // namespace cli
}  // namespace ringtrace

#endif  // SRC_TOOLS_RINGTRACE_CLI_CONSUMER_CONNECTION_H_
