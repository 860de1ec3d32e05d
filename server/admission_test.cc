#include "server/admission.h"

#include <string>
#include <utility>
#include <vector>

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

v1::AdmissionConfig PerClient(int per_client) {
  v1::AdmissionConfig limits = Limits(100, 100000);
  limits.set_max_requests_per_client(per_client);
  return limits;
}

TEST(AdmissionTest, PerClientCapCountsEachClientAndForgetsIdleOnes) {
  prometheus::Registry registry;
  auto metrics = metrics::RolloutMetrics::Create(registry, {"v", "c", "none"});
  ASSERT_TRUE(metrics.ok());
  Admission admission(metrics->get());
  auto a1 = admission.Admit(1, PerClient(2), "a");
  auto a2 = admission.Admit(1, PerClient(2), "a");  // at the cap
  ASSERT_TRUE(a1.ok() && a2.ok());
  auto a3 = admission.Admit(1, PerClient(2), "a");
  EXPECT_EQ(a3.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(a3.status().message()),
              HasSubstr("admission.max_requests_per_client = 2"));
  EXPECT_THAT(std::string(a3.status().message()), HasSubstr("\"a\""));
  // Other clients, and calls without a key, are not held back by "a".
  auto b1 = admission.Admit(1, PerClient(2), "b");
  EXPECT_TRUE(b1.ok());
  EXPECT_TRUE(admission.Admit(1, PerClient(2), "").ok());
  EXPECT_EQ(admission.client_requests("a"), 2);
  EXPECT_EQ(admission.client_requests("b"), 1);
  EXPECT_EQ(admission.clients(), 2);
  // A released slot can be used again; a client with none has no entry.
  a1->Release();
  EXPECT_TRUE(admission.Admit(1, PerClient(2), "a").ok());  // released at once
  b1->Release();
  EXPECT_EQ(admission.client_requests("b"), 0);
  EXPECT_EQ(admission.clients(), 1);
  a2->Release();
  EXPECT_EQ(admission.clients(), 0);
  EXPECT_EQ(admission.queued_requests(), 0);
  const std::string text =
      prometheus::TextSerializer().Serialize(registry.Collect());
  EXPECT_THAT(text, HasSubstr("rollout_admission_rejections_total{reason="
                              "\"client_concurrency\"} 1"));
}

TEST(AdmissionTest, PerClientCapOffKeepsNoTableAndIsHot) {
  Admission admission(nullptr);
  std::vector<Admission::Ticket> tickets;
  for (int i = 0; i < 5; ++i) {
    auto t = admission.Admit(1, PerClient(0), "a");  // 0 = no cap
    ASSERT_TRUE(t.ok());
    tickets.push_back(*std::move(t));
  }
  EXPECT_EQ(admission.clients(), 0);
  // Turned on (a reload): groups admitted while it was off are not counted.
  auto on = admission.Admit(1, PerClient(1), "a");
  ASSERT_TRUE(on.ok());
  EXPECT_EQ(admission.Admit(1, PerClient(1), "a").status().code(),
            absl::StatusCode::kResourceExhausted);
  tickets.clear();
  on->Release();
  EXPECT_EQ(admission.clients(), 0);
  EXPECT_EQ(admission.queued_requests(), 0);
}

TEST(AdmissionTest, ClientKeyIsTheHeaderElseThePeerHost) {
  EXPECT_EQ(*Admission::ClientKey("trainer-7", "ipv4:10.0.0.7:5123"),
            "trainer-7");
  EXPECT_EQ(*Admission::ClientKey("", "ipv4:10.0.0.7:5123"), "ipv4:10.0.0.7");
  EXPECT_EQ(*Admission::ClientKey("", "ipv6:[::1]:5123"), "ipv6:[::1]");
  EXPECT_EQ(*Admission::ClientKey("", "ipv6:%5B::1%5D:5123"), "ipv6:%5B::1%5D");
  EXPECT_EQ(*Admission::ClientKey("", "unix:/run/rollout.sock"),
            "unix:/run/rollout.sock");
  EXPECT_TRUE(
      Admission::ClientKey(std::string(256, 'c'), "ipv4:1.2.3.4:5").ok());
  const auto too_long =
      Admission::ClientKey(std::string(257, 'c'), "ipv4:1.2.3.4:5");
  EXPECT_EQ(too_long.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(too_long.status().message()),
              HasSubstr("x-client-id"));
}

}  // namespace
}  // namespace rollout::server
