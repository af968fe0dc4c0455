/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/test/ringtraced_process.h"

#include "ringtrace/status.h"
#include "src/tracing/ipc/unix_socket.h"

namespace ringtrace {
namespace test {

std::string StartRingtraced(base::Subprocess* service,
                            const std::string& socket,
                            int timeout_ms) {
  std::string error;
  if (!service->Start(&error))
    return error;
  for (int i = 0; i < timeout_ms / 10; i++) {
    base::Status status;
    if (ipc::UnixSocket::Connect(socket, &status))
      return "";
    if (service->Wait(10))
      return "ringtraced exited early:\n" + service->output();
  }
  return "ringtraced never listened on " + socket;
}

}  // namespace test
}  // namespace ringtrace
