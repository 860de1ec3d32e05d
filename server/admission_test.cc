#include "server/admission.h"

#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace rollout::server {
namespace {

using ::testing::HasSubstr;

v1::AdmissionConfig Limits(int requests, int64_t tokens) {
  v1::AdmissionConfig limits;
  limits.set_max_queued_requests(requests);
  limits.set_max_queued_tokens(tokens);
  return limits;
}

TEST(AdmissionTest, GroupCostCountsEveryCompletion) {
  EXPECT_EQ(Admission::GroupCost(100, 8, 50), 100 + 8 * 50);
}

TEST(AdmissionTest, RequestBoundAndRelease) {
  Admission admission(nullptr);
  auto a = admission.Admit(10, Limits(2, 1000));
  auto b = admission.Admit(10, Limits(2, 1000));
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = admission.Admit(10, Limits(2, 1000));
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("admission.max_queued_requests = 2"));
  EXPECT_EQ(admission.queued_requests(), 2);
  a->Release();
  a->Release();  // idempotent
  EXPECT_EQ(admission.queued_requests(), 1);
  EXPECT_TRUE(admission.Admit(10, Limits(2, 1000)).ok());
}

TEST(AdmissionTest, TokenBound) {
  Admission admission(nullptr);
  auto a = admission.Admit(600, Limits(10, 1000));
  ASSERT_TRUE(a.ok());
  auto b = admission.Admit(500, Limits(10, 1000));
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(b.status().message()),
              HasSubstr("admission.max_queued_tokens"));
  EXPECT_TRUE(admission.Admit(400, Limits(10, 1000)).ok());
}

TEST(AdmissionTest, RequestLargerThanTheWholeBudgetIsInvalid) {
  Admission admission(nullptr);
  auto a = admission.Admit(1001, Limits(10, 1000));
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(admission.queued_requests(), 0);
}

TEST(AdmissionTest, TicketsReleaseOnDestructionAndMove) {
  Admission admission(nullptr);
  {
    auto a = admission.Admit(5, Limits(10, 100));
    ASSERT_TRUE(a.ok());
    Admission::Ticket moved = *std::move(a);
    Admission::Ticket again;
    again = std::move(moved);
    EXPECT_EQ(admission.queued_tokens(), 5);
  }
  EXPECT_EQ(admission.queued_tokens(), 0);
  EXPECT_EQ(admission.queued_requests(), 0);
}

TEST(AdmissionTest, MetricsFollowTheQueue) {
  prometheus::Registry registry;
  auto metrics = metrics::RolloutMetrics::Create(registry, {"v", "c", "none"});
  ASSERT_TRUE(metrics.ok());
  Admission admission(metrics->get());
  auto a = admission.Admit(70, Limits(1, 100));
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(admission.Admit(1, Limits(1, 100)).ok());
  const std::string text =
      prometheus::TextSerializer().Serialize(registry.Collect());
  EXPECT_THAT(text, HasSubstr("rollout_queue_tokens 70"));
  EXPECT_THAT(text, HasSubstr("rollout_admission_rejections_total{reason="
                              "\"queue_requests\"} 1"));
}

}  // namespace
}  // namespace rollout::server
