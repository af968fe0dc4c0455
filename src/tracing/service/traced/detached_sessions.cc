/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/detached_sessions.h"

#include <algorithm>

namespace ringtrace {
namespace traced {

base::Status DetachedSessions::Add(uint32_t uid,
                                   const std::string& key,
                                   SessionId id) {
  const Key k(uid, key);
  if (entries_.count(k) != 0) {
    return base::ErrStatus(
        "key %s: this user has a detached session by that key already",
        key.c_str());
  }
  if (by_session_.count(id) != 0)
    return base::ErrStatus("session %llu is detached already",
                           static_cast<unsigned long long>(id));
  Entry entry;
  entry.id = id;
  entries_.emplace(k, std::move(entry));
  by_session_.emplace(id, k);
  return base::OkStatus();
}

const DetachedSessions::Entry* DetachedSessions::Find(
    uint32_t uid,
    const std::string& key) const {
  auto it = entries_.find(Key(uid, key));
  return it == entries_.end() ? nullptr : &it->second;
}

bool DetachedSessions::Take(uint32_t uid, const std::string& key, Entry* out) {
  auto it = entries_.find(Key(uid, key));
  if (it == entries_.end())
    return false;
  *out = std::move(it->second);
  entries_.erase(it);
  if (out->ended) {
    std::deque<std::string>& order = ended_[uid];
    order.erase(std::find(order.begin(), order.end(), key));
    if (order.empty())
      ended_.erase(uid);
  } else {
    by_session_.erase(out->id);
  }
  return true;
}

bool DetachedSessions::OnEnded(SessionId id,
                               const protos::ConsumerResponse& end) {
  auto s = by_session_.find(id);
  if (s == by_session_.end())
    return false;
  const Key k = s->second;
  by_session_.erase(s);
  Entry& entry = entries_.at(k);
  entry.ended = true;
  entry.end = end;
  std::deque<std::string>& order = ended_[k.first];
  order.push_back(k.second);
  // The bound: the oldest ended entry of this uid goes first.
  while (order.size() > kMaxEndedPerUid) {
    entries_.erase(Key(k.first, order.front()));
    order.pop_front();
  }
  return true;
}

}  // namespace traced
}  // namespace ringtrace
