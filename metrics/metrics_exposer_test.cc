#include "metrics/metrics_exposer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace rollout::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Minimal HTTP/1.0 GET over loopback (no HTTP client library in the deps).
std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "";
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\n\r\n";
  (void)!write(fd, request.data(), request.size());
  std::string response;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) response.append(buf, n);
  close(fd);
  return response;
}

int PortOf(const std::string& address) {
  int port = -1;
  EXPECT_TRUE(absl::SimpleAtoi(address.substr(address.rfind(':') + 1), &port));
  return port;
}

TEST(MetricsExposerTest, PortZeroPicksAPortAndServesTheRegistry) {
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter()
      .Name("test_things_total")
      .Help("things")
      .Register(*registry)
      .Add({})
      .Increment(3);
  auto exposer = MetricsExposer::Start("127.0.0.1:0", registry);
  ASSERT_TRUE(exposer.ok()) << exposer.status();
  EXPECT_THAT((*exposer)->address(), StartsWith("127.0.0.1:"));
  const int port = PortOf((*exposer)->address());
  EXPECT_GT(port, 0);
  EXPECT_THAT(HttpGet(port, "/metrics"), HasSubstr("test_things_total 3"));
}

TEST(MetricsExposerTest, KeepsATemporaryCollectableAlive) {
  // The caller may hand over its only reference (e.g. a wrapper made on the
  // fly); prometheus-cpp alone would keep just a weak_ptr and serve nothing.
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildGauge()
      .Name("test_temporary")
      .Help("t")
      .Register(*registry)
      .Add({})
      .Set(5);
  auto exposer = MetricsExposer::Start(
      "127.0.0.1:0",
      std::shared_ptr<prometheus::Collectable>(std::move(registry)));
  ASSERT_TRUE(exposer.ok());
  EXPECT_THAT(HttpGet(PortOf((*exposer)->address()), "/metrics"),
              HasSubstr("test_temporary 5"));
}

TEST(MetricsExposerTest, MalformedAddressIsInvalidArgument) {
  auto registry = std::make_shared<prometheus::Registry>();
  for (const char* bad : {"nocolon", ":80", "127.0.0.1:x", "127.0.0.1:70000"}) {
    EXPECT_EQ(MetricsExposer::Start(bad, registry).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(MetricsExposerTest, PortInUseIsUnavailableNotACrash) {
  auto registry = std::make_shared<prometheus::Registry>();
  auto first = MetricsExposer::Start("127.0.0.1:0", registry);
  ASSERT_TRUE(first.ok());
  auto second = MetricsExposer::Start((*first)->address(), registry);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace rollout::metrics
