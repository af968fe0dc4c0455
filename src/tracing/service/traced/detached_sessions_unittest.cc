/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/detached_sessions.h"

#include <gtest/gtest.h>

#include <string>

namespace ringtrace {
namespace traced {
namespace {

protos::ConsumerResponse EndOf(SessionId id) {
  protos::ConsumerResponse end;
  end.set_ok(true);
  end.set_tracing_ended(true);
  end.set_session_id(id);
  end.mutable_summary()->set_packets_written(id * 10);
  return end;
}

TEST(DetachedSessionsTest, KeysArePerUid) {
  DetachedSessions d;
  ASSERT_TRUE(d.Add(1000, "k", 7).ok());
  // Another uid may use the same key; the same uid may not, nor may one
  // session be detached twice.
  ASSERT_TRUE(d.Add(1001, "k", 8).ok());
  EXPECT_FALSE(d.Add(1000, "k", 9).ok());
  EXPECT_FALSE(d.Add(1000, "other", 7).ok());
  ASSERT_NE(d.Find(1000, "k"), nullptr);
  EXPECT_EQ(d.Find(1000, "k")->id, 7u);
  EXPECT_EQ(d.Find(1001, "k")->id, 8u);
  EXPECT_EQ(d.Find(1002, "k"), nullptr);
  EXPECT_EQ(d.Find(1000, "K"), nullptr);

  DetachedSessions::Entry e;
  ASSERT_TRUE(d.Take(1000, "k", &e));
  EXPECT_EQ(e.id, 7u);
  EXPECT_FALSE(e.ended);
  EXPECT_FALSE(d.Take(1000, "k", &e));
  // Taken: the key and the session are free again.
  EXPECT_TRUE(d.Add(1000, "k", 7).ok());
  EXPECT_EQ(d.size(), 2u);
}

TEST(DetachedSessionsTest, AnEndIsKeptForTheAttach) {
  DetachedSessions d;
  ASSERT_TRUE(d.Add(1000, "k", 7).ok());
  EXPECT_FALSE(d.OnEnded(99, EndOf(99))) << "not detached";
  ASSERT_TRUE(d.OnEnded(7, EndOf(7)));
  EXPECT_FALSE(d.OnEnded(7, EndOf(7))) << "ended once";
  const DetachedSessions::Entry* found = d.Find(1000, "k");
  ASSERT_NE(found, nullptr);
  EXPECT_TRUE(found->ended);
  // The key stays taken until the attach.
  EXPECT_FALSE(d.Add(1000, "k", 8).ok());
  DetachedSessions::Entry e;
  ASSERT_TRUE(d.Take(1000, "k", &e));
  EXPECT_TRUE(e.ended);
  EXPECT_EQ(e.end.summary().packets_written(), 70u);
  EXPECT_EQ(d.size(), 0u);
  EXPECT_TRUE(d.Add(1000, "k", 8).ok());
}

// At most kMaxEndedPerUid ended entries per uid: the oldest goes first,
// live entries and other uids' are untouched.
TEST(DetachedSessionsTest, EndedEntriesAreBoundedPerUid) {
  DetachedSessions d;
  const size_t n = DetachedSessions::kMaxEndedPerUid;
  ASSERT_TRUE(d.Add(2000, "other-user", 1).ok());
  ASSERT_TRUE(d.OnEnded(1, EndOf(1)));
  ASSERT_TRUE(d.Add(1000, "live", 2).ok());
  for (SessionId id = 10; id < 10 + n + 2; id++) {
    ASSERT_TRUE(d.Add(1000, "k" + std::to_string(id), id).ok());
    ASSERT_TRUE(d.OnEnded(id, EndOf(id)));
  }
  EXPECT_EQ(d.Find(1000, "k10"), nullptr);
  EXPECT_EQ(d.Find(1000, "k11"), nullptr);
  for (SessionId id = 12; id < 10 + n + 2; id++)
    EXPECT_NE(d.Find(1000, "k" + std::to_string(id)), nullptr) << id;
  EXPECT_NE(d.Find(1000, "live"), nullptr);
  EXPECT_NE(d.Find(2000, "other-user"), nullptr);
  EXPECT_EQ(d.size(), n + 2);
  // Taking an ended one in the middle keeps the order of the rest.
  DetachedSessions::Entry e;
  ASSERT_TRUE(d.Take(1000, "k15", &e));
  ASSERT_TRUE(d.Add(1000, "k100", 100).ok());
  ASSERT_TRUE(d.OnEnded(100, EndOf(100)));
  EXPECT_NE(d.Find(1000, "k12"), nullptr) << "there was room again";
  ASSERT_TRUE(d.Add(1000, "k101", 101).ok());
  ASSERT_TRUE(d.OnEnded(101, EndOf(101)));
  EXPECT_EQ(d.Find(1000, "k12"), nullptr) << "the oldest went";
  EXPECT_NE(d.Find(1000, "k13"), nullptr);
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
