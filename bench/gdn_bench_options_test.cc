#include "bench/gdn_bench_options.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rollout::bench {
namespace {

// Runs ParseArgs on `args` (without the program name).
bool Parse(std::vector<std::string> args, Options* o) {
  std::vector<char*> argv = {const_cast<char*>("gdn_bench")};
  for (std::string& a : args) argv.push_back(a.data());
  return ParseArgs(static_cast<int>(argv.size()), argv.data(), o);
}

TEST(GdnBenchOptionsTest, DefaultsKeepTheDocumentedSweep) {
  Options o;
  ASSERT_TRUE(Parse({"--no-micro", "--json=/tmp/x.json"}, &o));
  EXPECT_TRUE(o.batches.empty());
  EXPECT_FALSE(o.micro);
  EXPECT_EQ(o.json_path, "/tmp/x.json");
}

TEST(GdnBenchOptionsTest, BatchesKeepTheirOrder) {
  Options o;
  ASSERT_TRUE(Parse({"--batches=160,96,128,4096,1"}, &o));
  EXPECT_EQ(o.batches, (std::vector<int>{160, 96, 128, 4096, 1}));
  ASSERT_TRUE(Parse({"--batches=192"}, &o));
  EXPECT_EQ(o.batches, (std::vector<int>{192}));  // the last one counts
}

TEST(GdnBenchOptionsTest, BadBatchListsAreRejected) {
  for (const char* bad :
       {"--batches=", "--batches=0", "--batches=4097", "--batches=-8",
        "--batches=+8", "--batches=8,", "--batches=,8", "--batches=8,,16",
        "--batches=8x", "--batches=12345", "--batches=8 16"}) {
    Options o;
    EXPECT_FALSE(Parse({bad}, &o)) << bad;
  }
}

TEST(GdnBenchOptionsTest, ProfileAndUnknownFlags) {
  Options o;
  ASSERT_TRUE(Parse({"--profile=16/128"}, &o));
  EXPECT_TRUE(o.profile);
  EXPECT_EQ(o.profile_hv, 16);
  EXPECT_EQ(o.profile_batch, 128);
  EXPECT_FALSE(Parse({"--profile=17/8"}, &o));
  EXPECT_FALSE(Parse({"--batch=8"}, &o));
}

TEST(GdnBenchOptionsTest, FlushPolicyIsItsOwnMode) {
  Options o;
  ASSERT_TRUE(Parse({"--no-micro", "--flush-policy"}, &o));
  EXPECT_TRUE(o.flush_policy);
  EXPECT_FALSE(o.tile_table);
  Options d;
  ASSERT_TRUE(Parse({"--tile-table"}, &d));
  EXPECT_FALSE(d.flush_policy);
}

TEST(GdnBenchOptionsTest, ColdRingsIsItsOwnMode) {
  Options o;
  ASSERT_TRUE(Parse({"--no-micro", "--cold-rings"}, &o));
  EXPECT_TRUE(o.cold_rings);
  EXPECT_FALSE(o.flush_policy);
  Options d;
  ASSERT_TRUE(Parse({"--flush-policy"}, &d));
  EXPECT_FALSE(d.cold_rings);
}

}  // namespace
}  // namespace rollout::bench
