/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// ServiceCore's per-user limits (user_limits.h): producers and ring bytes at
// admission, sessions and buffer bytes at StartSession; one uid at its limit
// is refused with the limit's flag named, the others are not affected.

#include <fcntl.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "src/base/test/temp_dir.h"
#include "src/tracing/service/traced/service_core.h"
#include "src/tracing/service/traced/test/core_fixture.h"
#include "src/tracing/service/traced/test/sessions_fixture.h"

namespace ringtrace {
namespace traced {
namespace {

using test::Identity;
using test::MakeCore;
using test::MakeHello;
using trace_buffer::ProducerID;

constexpr uint32_t kMiB = 1u << 20;

uint64_t RingBytesOf(const ServiceCore::Admission& a) {
  return uint64_t{a.reply.chunk_size} * a.reply.num_chunks;
}

TEST(FitRingLimitsToBudgetTest, NarrowsToTheLargestPowerOfTwoThatFits) {
  RingLimits limits;  // 16 KiB .. 1 MiB default .. 16 MiB
  RingLimits fitted = limits;
  ASSERT_TRUE(FitRingLimitsToBudget(uint64_t{64} * kMiB, &fitted));
  EXPECT_EQ(fitted.max_ring_bytes, limits.max_ring_bytes);  // unchanged

  fitted = limits;
  ASSERT_TRUE(FitRingLimitsToBudget(3 * kMiB, &fitted));
  EXPECT_EQ(fitted.max_ring_bytes, 2 * kMiB);
  EXPECT_EQ(fitted.default_ring_bytes, 1 * kMiB);
  EXPECT_TRUE(ValidateRingLimits(fitted).ok());

  fitted = limits;
  ASSERT_TRUE(FitRingLimitsToBudget(20 << 10, &fitted));
  EXPECT_EQ(fitted.max_ring_bytes, 16u << 10);
  EXPECT_EQ(fitted.default_ring_bytes, 16u << 10);
  EXPECT_LE(fitted.max_chunk_size, 8u << 10);  // two chunks fit
  EXPECT_TRUE(ValidateRingLimits(fitted).ok());

  fitted = limits;
  EXPECT_FALSE(FitRingLimitsToBudget((16 << 10) - 1, &fitted));
  EXPECT_FALSE(FitRingLimitsToBudget(0, &fitted));
}

class UserLimitsCoreTest : public testing::Test {
 protected:
  static ServiceCore::Options Limited() {
    ServiceCore::Options options = test::CoreOptions();
    options.service_uid = 990;
    options.user_limits.max_producers = 3;
    options.user_limits.max_ring_bytes = 3 * kMiB;
    return options;
  }

  ServiceCore::Admission Admit(ServiceCore* core,
                               int32_t uid,
                               uint32_t ring_bytes) {
    ServiceCore::Admission a =
        core->Admit(MakeHello(ring_bytes), Identity(100, uid));
    if (a.reply.status == ipc::HelloStatus::kOk)
      admitted_.push_back(static_cast<ProducerID>(a.reply.producer_id));
    return a;
  }

  std::vector<ProducerID> admitted_;
};

TEST_F(UserLimitsCoreTest, OneUidsProducersAreBoundedNotOthers) {
  std::unique_ptr<ServiceCore> core = MakeCore(Limited());
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(Admit(core.get(), 1000, 64 << 10).reply.status,
              ipc::HelloStatus::kOk);
  const ServiceCore::Admission refused = Admit(core.get(), 1000, 64 << 10);
  EXPECT_EQ(refused.reply.status, ipc::HelloStatus::kUserLimit);
  EXPECT_NE(refused.refusal.find("uid 1000: 3 producers are connected"),
            std::string::npos)
      << refused.refusal;
  EXPECT_NE(refused.refusal.find("--max-producers-per-uid"), std::string::npos);
  // Another user is admitted; one of the first user's leaving makes room.
  EXPECT_EQ(Admit(core.get(), 1001, 64 << 10).reply.status,
            ipc::HelloStatus::kOk);
  core->RemoveProducer(admitted_[0]);
  EXPECT_EQ(Admit(core.get(), 1000, 64 << 10).reply.status,
            ipc::HelloStatus::kOk);
  EXPECT_EQ(core->producers()->stats().hellos_rejected_user_limit, 1u);
}

TEST_F(UserLimitsCoreTest, RingsAreClampedToWhatIsLeftOfTheUidsBudget) {
  std::unique_ptr<ServiceCore> core = MakeCore(Limited());
  const ServiceCore::Admission a1 = Admit(core.get(), 1000, 2 * kMiB);
  ASSERT_EQ(a1.reply.status, ipc::HelloStatus::kOk);
  EXPECT_EQ(RingBytesOf(a1), 2 * kMiB);
  // 1 MiB left: served 1 MiB instead of 2.
  const ServiceCore::Admission a2 = Admit(core.get(), 1000, 2 * kMiB);
  ASSERT_EQ(a2.reply.status, ipc::HelloStatus::kOk);
  EXPECT_EQ(RingBytesOf(a2), 1 * kMiB);
  EXPECT_EQ(core->producers()->stats().rings_clamped_to_budget, 1u);
  // Nothing left: refused, naming the ring limit.
  const ServiceCore::Admission a3 = Admit(core.get(), 1000, 16 << 10);
  EXPECT_EQ(a3.reply.status, ipc::HelloStatus::kUserLimit);
  EXPECT_NE(a3.refusal.find("--max-ring-mb-per-uid"), std::string::npos)
      << a3.refusal;
  // Another user gets what it asks for.
  const ServiceCore::Admission b = Admit(core.get(), 1001, 2 * kMiB);
  ASSERT_EQ(b.reply.status, ipc::HelloStatus::kOk);
  EXPECT_EQ(RingBytesOf(b), 2 * kMiB);
}

TEST_F(UserLimitsCoreTest, EveryRingTogetherIsBoundedByTheTotal) {
  ServiceCore::Options options = Limited();
  options.max_total_ring_bytes = 4 * kMiB;
  std::unique_ptr<ServiceCore> core = MakeCore(options);
  ASSERT_EQ(Admit(core.get(), 1000, 2 * kMiB).reply.status,
            ipc::HelloStatus::kOk);
  ASSERT_EQ(Admit(core.get(), 1001, 2 * kMiB).reply.status,
            ipc::HelloStatus::kOk);
  const ServiceCore::Admission refused = Admit(core.get(), 1002, 2 * kMiB);
  EXPECT_EQ(refused.reply.status, ipc::HelloStatus::kUserLimit);
  EXPECT_NE(refused.refusal.find("--max-total-ring-mb"), std::string::npos)
      << refused.refusal;
}

TEST_F(UserLimitsCoreTest, RootAndTheServiceUidGetThePrivilegedFactor) {
  ServiceCore::Options options = Limited();
  options.user_limits.max_producers = 1;
  options.user_limits.privileged_factor = 2;
  std::unique_ptr<ServiceCore> core = MakeCore(options);
  for (int32_t uid : {0, 990}) {
    EXPECT_EQ(Admit(core.get(), uid, 64 << 10).reply.status,
              ipc::HelloStatus::kOk);
    EXPECT_EQ(Admit(core.get(), uid, 64 << 10).reply.status,
              ipc::HelloStatus::kOk);
    EXPECT_EQ(Admit(core.get(), uid, 64 << 10).reply.status,
              ipc::HelloStatus::kUserLimit);
  }
  EXPECT_EQ(Admit(core.get(), 5, 64 << 10).reply.status, ipc::HelloStatus::kOk);
  EXPECT_EQ(Admit(core.get(), 5, 64 << 10).reply.status,
            ipc::HelloStatus::kUserLimit);
}

class UserLimitsSessionsTest : public test::SessionsFixture {
 protected:
  void SetUp() override {
    ServiceCore::Options options = test::SessionOptions();
    options.user_limits.max_sessions = 2;
    options.user_limits.max_buffer_bytes = 1 * kMiB;
    core_ = MakeCore(options);
  }

  base::Status StartAs(int32_t uid, uint32_t buffer_kb) {
    SessionId id = 0;
    return core_->sessions()->StartSession(
        test::OneBufferConfig(buffer_kb),
        test::OpenOut(dir_.File("s" + std::to_string(next_++))), uid,
        /*consumer_id=*/7, now_, &id);
  }

  int next_ = 0;
};

TEST_F(UserLimitsSessionsTest, OneUidsSessionsAreBoundedNotOthers) {
  ASSERT_TRUE(StartAs(200, 64).ok());
  ASSERT_TRUE(StartAs(200, 64).ok());
  const base::Status refused = StartAs(200, 64);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("uid 200: 2 sessions are active"),
            std::string::npos)
      << refused.message();
  EXPECT_NE(refused.message().find("--max-sessions-per-uid"),
            std::string::npos);
  EXPECT_TRUE(StartAs(201, 64).ok());
}

TEST_F(UserLimitsSessionsTest, OneUidsBufferBytesAreBounded) {
  ASSERT_TRUE(StartAs(300, 512).ok());
  const base::Status refused = StartAs(300, 768);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("--max-buffer-mb-per-uid"),
            std::string::npos)
      << refused.message();
  EXPECT_TRUE(StartAs(300, 512).ok());  // exactly the limit
  EXPECT_TRUE(StartAs(301, 1024).ok());
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
