#include "server/model_roots.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
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
  // TEST_TMPDIR is shared by the tests of this binary: replace, not fail.
  int Symlink(const std::string& target, const std::string& link) {
    unlink(link.c_str());
    return symlink(target.c_str(), link.c_str());
  }

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

TEST_F(ModelRootsTest, SymlinkIntoARootIsAcceptedAsItsTarget) {
  // The link lies outside every root; what counts is where it leads.
  ASSERT_EQ(Symlink(tmp_ + "/models/step-1", tmp_ + "/elsewhere/step-link"), 0);
  auto real =
      ConfineToModelRoots(tmp_ + "/elsewhere/step-link", {tmp_ + "/models"});
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_EQ(*real, tmp_ + "/models/step-1");
}

TEST_F(ModelRootsTest, RootsAreComparedCanonically) {
  // A root named through a symlink and a path through "..": both are
  // canonicalised before the comparison.
  ASSERT_EQ(Symlink(tmp_ + "/models", tmp_ + "/models-link"), 0);
  auto real = ConfineToModelRoots(tmp_ + "/models/../models/step-1",
                                  {tmp_ + "/models-link"});
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_EQ(*real, tmp_ + "/models/step-1");
  EXPECT_EQ(ConfineToModelRoots(tmp_ + "/models/step-1/../../elsewhere/ckpt",
                                {tmp_ + "/models-link"})
                .status()
                .code(),
            absl::StatusCode::kPermissionDenied);
}

// Bazel runfiles: the model directory rolloutd finds is a real directory of
// symlinks to the source files. The default roots accept the checkpoint
// named either way (the real path is what a client gets from realpath), and
// still refuse what is outside both.
TEST_F(ModelRootsTest, DefaultRootsUnderRunfilesAcceptTheRealModelPath) {
  Mkdir("/src");
  Mkdir("/src/data");
  Mkdir("/src/data/tiny");
  Mkdir("/src/data/tiny-step-2");
  Mkdir("/runfiles");
  Mkdir("/runfiles/data");
  Mkdir("/runfiles/data/tiny");
  {
    std::FILE* f =
        std::fopen((tmp_ + "/src/data/tiny/config.json").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  ASSERT_EQ(Symlink(tmp_ + "/src/data/tiny/config.json",
                    tmp_ + "/runfiles/data/tiny/config.json"),
            0);
  const std::vector<std::string> roots =
      EffectiveModelRoots({}, tmp_ + "/runfiles/data/tiny");
  EXPECT_THAT(roots, ElementsAre(tmp_ + "/runfiles/data", tmp_ + "/src/data"));
  for (const std::string& path :
       {tmp_ + "/runfiles/data/tiny", tmp_ + "/src/data/tiny",
        tmp_ + "/src/data/tiny-step-2"}) {
    auto real = ConfineToModelRoots(path, roots);
    EXPECT_TRUE(real.ok()) << path << ": " << real.status();
  }
  EXPECT_EQ(*ConfineToModelRoots(tmp_ + "/src/data/tiny", roots),
            tmp_ + "/src/data/tiny");
  for (const std::string& path : {tmp_ + "/src", tmp_ + "/elsewhere/ckpt",
                                  tmp_ + "/src/data/../../elsewhere/ckpt"}) {
    EXPECT_EQ(ConfineToModelRoots(path, roots).status().code(),
              absl::StatusCode::kPermissionDenied)
        << path;
  }
  // A model directory that is not a symlink tree: one root.
  EXPECT_THAT(EffectiveModelRoots({}, tmp_ + "/src/data/tiny"),
              ElementsAre(tmp_ + "/src/data"));
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
