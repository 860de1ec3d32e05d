#include "worker/service/worker_options.h"

#include <string>

#include "gtest/gtest.h"

namespace rollout::worker::service {
namespace {

WorkerOptions Valid() {
  WorkerOptions o;
  o.socket_path = "/tmp/w/worker-0.sock";
  o.model_dir = "tests/data/tiny_qwen3_5";
  return o;
}

TEST(WorkerOptionsTest, DefaultsWithSocketAndModelAreValid) {
  EXPECT_TRUE(Valid().Validate().ok());
  EXPECT_EQ(Valid().Capacity(), 64 + 1024);
}

TEST(WorkerOptionsTest, ErrorsNameTheFlag) {
  auto expect = [](WorkerOptions o, const std::string& flag) {
    const absl::Status s = o.Validate();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << flag;
    EXPECT_NE(s.message().find(flag), absl::string_view::npos) << s;
  };
  WorkerOptions o = Valid();
  o.socket_path.clear();
  expect(o, "socket");
  o = Valid();
  o.socket_path = "/" + std::string(120, 'x');
  expect(o, "at most 107 bytes");
  o = Valid();
  o.model_dir.clear();
  expect(o, "model");
  o = Valid();
  o.weights_dir = "/models/step-2";
  expect(o, "weight_version");
  o = Valid();
  o.threads = -1;
  expect(o, "threads");
  o = Valid();
  o.engine.max_num_seqs = 0;
  EXPECT_FALSE(o.Validate().ok());
}

}  // namespace
}  // namespace rollout::worker::service
