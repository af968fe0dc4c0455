/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The sessions their owners detached (Perfetto's `--detach=KEY`): which
// session each (uid, key) names, and for one that ended while detached, the
// tracing_ended event its owner would have received, kept until someone of
// that uid attaches. docs/sessions.md, "Detached sessions".
//
// Invariants: a key names at most one entry per uid; a session is in at
// most one entry; at most kMaxEndedPerUid ended entries per uid (the
// oldest ended one is forgotten first). A live detached session is bounded
// by the session limits (it still counts as its user's session).
//
// Thread model: the service thread only.

#ifndef SRC_TRACING_SERVICE_TRACED_DETACHED_SESSIONS_H_
#define SRC_TRACING_SERVICE_TRACED_DETACHED_SESSIONS_H_

#include <stddef.h>
#include <stdint.h>

#include <deque>
#include <map>
#include <string>
#include <utility>

#include "protos/ringtrace/ipc/consumer_port.pb.h"
#include "ringtrace/status.h"
#include "src/tracing/service/traced/service_core.h"

namespace ringtrace {
namespace traced {

class DetachedSessions {
 public:
  static constexpr size_t kMaxEndedPerUid = 16;

  struct Entry {
    SessionId id = 0;
    bool ended = false;
    // ended: the tracing_ended event (request_id 0, the summary).
    protos::ConsumerResponse end;
  };

  // Records |id| under (|uid|, |key|). Error: that uid detached another
  // session under |key| (live, or ended and not attached yet).
  base::Status Add(uint32_t uid, const std::string& key, SessionId id);
  // The entry of (|uid|, |key|), or null.
  const Entry* Find(uint32_t uid, const std::string& key) const;
  // Removes the entry of (|uid|, |key|) into |*out|; false if none.
  bool Take(uint32_t uid, const std::string& key, Entry* out);
  // Session |id| ended: its entry keeps |end| for the attach. Returns false
  // if |id| is not detached.
  bool OnEnded(SessionId id, const protos::ConsumerResponse& end);

  size_t size() const { return entries_.size(); }

 private:
  using Key = std::pair<uint32_t, std::string>;
  std::map<Key, Entry> entries_;
  std::map<SessionId, Key> by_session_;  // the live entries
  // Per uid, the keys of its ended entries, oldest first.
  std::map<uint32_t, std::deque<std::string>> ended_;
};

}  // namespace traced
}  // namespace ringtrace

#endif  // SRC_TRACING_SERVICE_TRACED_DETACHED_SESSIONS_H_
