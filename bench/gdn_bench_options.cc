#include "bench/gdn_bench_options.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace rollout::bench {
namespace {

// Parses "B[,B...]" (each 1..kMaxSweepBatch) into *out; false on anything
// else. Items must be digits only: SimpleAtoi alone would also take a sign
// and surrounding spaces.
bool ParseBatches(absl::string_view list, std::vector<int>* out) {
  out->clear();
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    int b = 0;
    if (item.empty() || !absl::c_all_of(item, absl::ascii_isdigit) ||
        !absl::SimpleAtoi(item, &b) || b < 1 || b > kMaxSweepBatch) {
      return false;
    }
    out->push_back(b);
  }
  return true;
}

}  // namespace

// False (after printing the usage) on an unknown argument.
bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--json=", 0) == 0) {
      o->json_path = a.substr(7);
    } else if (a == "--quick") {
      o->quick = true;
    } else if (a == "--micro") {
      o->micro_only = true;
    } else if (a == "--no-micro") {
      o->micro = false;
    } else if (a == "--explore") {
      o->explore = true;
    } else if (a == "--profile") {
      o->profile = true;
    } else if (a.rfind("--profile=", 0) == 0) {
      o->profile = true;
      if (std::sscanf(a.c_str() + 10, "%d/%d", &o->profile_hv,
                      &o->profile_batch) != 2 ||
          o->profile_hv <= 0 || o->profile_hv % 16 != 0 ||
          o->profile_batch <= 0) {
        std::fprintf(stderr,
                     "gdn_bench: --profile=HV/B, e.g. --profile=16/8 "
                     "(HV a multiple of 16, B > 0)\n");
        return false;
      }
    } else if (a.rfind("--batches=", 0) == 0) {
      if (!ParseBatches(absl::string_view(a).substr(10), &o->batches)) {
        std::fprintf(stderr,
                     "gdn_bench: --batches=B[,B...], each 1-%d, e.g. "
                     "--batches=96,128,160\n",
                     kMaxSweepBatch);
        return false;
      }
    } else if (a == "--replay-only") {
      o->replay_only = true;
    } else if (a == "--overlap") {
      o->overlap = true;
    } else if (a == "--bounds") {
      o->bounds = true;
    } else if (a == "--layer") {
      o->layer = true;
    } else if (a == "--prefill") {
      o->prefill = true;
    } else if (a == "--flush-cost") {
      o->flush_cost = true;
    } else if (a == "--tile-table") {
      o->tile_table = true;
    } else if (a == "--flush-policy") {
      o->flush_policy = true;
    } else if (a == "--cold-rings") {
      o->cold_rings = true;
    } else if (a == "--ceilings") {
      o->ceilings_only = true;
    } else {
      std::fprintf(stderr,
                   "usage: gdn_bench [--json=PATH] [--quick] [--micro] "
                   "[--no-micro] [--batches=B,...] [--explore] "
                   "[--profile[=HV/B]] "
                   "[--replay-only] [--overlap] [--flush-cost] [--tile-table] "
                   "[--flush-policy] [--cold-rings] "
                   "[--layer] [--bounds] [--prefill] [--ceilings]\n");
      return false;
    }
  }
  return true;
}

}  // namespace rollout::bench
