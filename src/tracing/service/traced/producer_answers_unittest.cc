/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/service/traced/producer_answers.h"

#include <gtest/gtest.h>

namespace ringtrace {
namespace traced {
namespace {

TEST(ProducerAnswersTest, InstanceIdsArePerProducerAndRestartAfterForget) {
  ProducerAnswers answers;
  EXPECT_EQ(answers.NextInstanceId(1), 1u);
  EXPECT_EQ(answers.NextInstanceId(1), 2u);
  EXPECT_EQ(answers.NextInstanceId(2), 1u);
  answers.Forget(1);
  EXPECT_EQ(answers.NextInstanceId(1), 1u);
}

TEST(ProducerAnswersTest, TimedOutStopMakesOverdueUntilAnswered) {
  ProducerAnswers answers;
  answers.OweLateStopAck(1, 7, /*timed_out=*/true, "p", 100);
  EXPECT_TRUE(answers.IsOverdue(1));
  EXPECT_TRUE(answers.TakeOverdueMarked());
  EXPECT_FALSE(answers.TakeOverdueMarked());
  EXPECT_FALSE(answers.TakeLateStopAck(1, 8));
  EXPECT_TRUE(answers.TakeLateStopAck(1, 7));
  EXPECT_FALSE(answers.IsOverdue(1));
  EXPECT_FALSE(answers.TakeLateStopAck(1, 7));  // answered once
}

TEST(ProducerAnswersTest, AbortedStopIsOwedButNotOverdue) {
  ProducerAnswers answers;
  answers.OweLateStopAck(1, 3, /*timed_out=*/false, "p", 100);
  EXPECT_FALSE(answers.IsOverdue(1));
  EXPECT_FALSE(answers.TakeOverdueMarked());
  EXPECT_TRUE(answers.TakeLateStopAck(1, 3));
}

TEST(ProducerAnswersTest, FlushAckWaitedThenLate) {
  ProducerAnswers answers;
  ProducerAnswers::OwedFlushAck answered;
  EXPECT_FALSE(answers.TakeFlushAck(1, 5, &answered));
  answers.OweFlushAck(1, 5, /*session=*/9, /*waited=*/true);
  answers.OweFlushAck(1, 6, /*session=*/9, /*waited=*/true);
  ASSERT_TRUE(answers.TakeFlushAck(1, 5, &answered));
  EXPECT_TRUE(answered.waited);
  EXPECT_EQ(answered.session, 9u);

  // Flush 6 timed out: its ack is late, and the producer overdue until it
  // comes.
  answers.StopWaitingForFlush(1, 6);
  answers.MarkOverdue(1, "p", 100);
  EXPECT_TRUE(answers.IsOverdue(1));
  ASSERT_TRUE(answers.TakeFlushAck(1, 6, &answered));
  EXPECT_FALSE(answered.waited);
  EXPECT_FALSE(answers.IsOverdue(1));
}

TEST(ProducerAnswersTest, OwedAnswersAreBounded) {
  ProducerAnswers answers;
  const uint32_t n = ProducerAnswers::kMaxOwedAcks + 1;
  for (uint32_t i = 1; i <= n; ++i) {
    answers.OweLateStopAck(1, i, /*timed_out=*/false, "p", 100);
    answers.OweFlushAck(1, i, /*session=*/1, /*waited=*/true);
  }
  ProducerAnswers::OwedFlushAck answered;
  // The oldest were forgotten.
  EXPECT_FALSE(answers.TakeLateStopAck(1, 1));
  EXPECT_FALSE(answers.TakeFlushAck(1, 1, &answered));
  EXPECT_TRUE(answers.TakeLateStopAck(1, n));
  EXPECT_TRUE(answers.TakeFlushAck(1, n, &answered));
}

TEST(ProducerAnswersTest, ForgetDropsEverything) {
  ProducerAnswers answers;
  answers.OweLateStopAck(1, 1, /*timed_out=*/true, "p", 100);
  answers.OweFlushAck(1, 2, /*session=*/1, /*waited=*/false);
  answers.Forget(1);
  ProducerAnswers::OwedFlushAck answered;
  EXPECT_FALSE(answers.IsOverdue(1));
  EXPECT_FALSE(answers.TakeLateStopAck(1, 1));
  EXPECT_FALSE(answers.TakeFlushAck(1, 2, &answered));
}

}  // namespace
}  // namespace traced
}  // namespace ringtrace
