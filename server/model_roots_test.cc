#include "server/model_roots.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rollout::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ModelRootsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = std::getenv("TEST_TMPDIR");
    Mkdir("/models");
    Mkdir("/models/step-1");
    Mkdir("/models-evil");
    Mkdir("/elsewhere");
    Mkdir("/elsewhere/ckpt");
    // A symlink inside the root that points outside it.
    symlink((tmp_ + "/elsewhere/ckpt").c_str(),
            (tmp_ + "/models/escape").c_str());
  }
  void Mkdir(const std::string& p) { mkdir((tmp_ + p).c_str(), 0755); }

  std::string tmp_;
};

TEST_F(ModelRootsTest, InsideARootIsAccepted) {
  auto real = ConfineToModelRoots(tmp_ + "/models/step-1", {tmp_ + "/models"});
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_EQ(*real, tmp_ + "/models/step-1");
}

TEST_F(ModelRootsTest, OutsideSiblingPrefixDotDotAndSymlinkAreDenied) {
  const std::vector<std::string> roots = {tmp_ + "/models"};
  for (const std::string& path :
       {tmp_ + "/elsewhere/ckpt", tmp_ + "/models-evil",
        tmp_ + "/models/../elsewhere/ckpt", tmp_ + "/models/escape"}) {
    auto real = ConfineToModelRoots(path, roots);
    EXPECT_EQ(real.status().code(), absl::StatusCode::kPermissionDenied)
        << path;
    EXPECT_THAT(std::string(real.status().message()), HasSubstr("model.roots"));
  }
}

TEST_F(ModelRootsTest, MissingOrNotADirectoryIsInvalid) {
  EXPECT_EQ(ConfineToModelRoots(tmp_ + "/models/nope", {tmp_ + "/models"})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(ModelRootsTest, NoRootsDeniesEverything) {
  EXPECT_EQ(ConfineToModelRoots(tmp_ + "/models/step-1", {}).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(EffectiveModelRootsTest, DefaultsToTheModelsParent) {
  EXPECT_THAT(EffectiveModelRoots({}, "/data/models/tiny"),
              ElementsAre("/data/models"));
  EXPECT_THAT(EffectiveModelRoots({"/a", "/b"}, "/data/models/tiny"),
              ElementsAre("/a", "/b"));
  EXPECT_TRUE(EffectiveModelRoots({}, "").empty());
  EXPECT_THAT(EffectiveModelRoots({}, "/tiny"), ElementsAre("/"));
}

}  // namespace
}  // namespace rollout::server
