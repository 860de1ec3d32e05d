// Writes a random-weight checkpoint of a real model shape in the Hugging Face
// layout (config.json + sharded bf16 safetensors + index), so benchmarks run
// at real sizes without downloads.
//
//   bazel run -c opt //model/tools:make_checkpoint --
//       --preset=qwen3-next-80b-a3b --num_layers=4 --out=/data/next80b_4l
//   bazel run //model/tools:make_checkpoint -- --list
#include <chrono>
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_join.h"
#include "model/dtype.h"
#include "model/tools/checkpoint_spec.h"
#include "model/tools/checkpoint_writer.h"

ABSL_FLAG(std::string, preset, "",
          "model shape: qwen3.5-0.8b, qwen3.5-2b, qwen3.5-4b, qwen3.5-9b, "
          "qwen3.5-27b, qwen3.5-35b-a3b, qwen3-next-80b-a3b");
ABSL_FLAG(std::string, out, "", "output directory (created if missing)");
ABSL_FLAG(int, num_layers, 0,
          "decoder layers (0: the preset's); every 4th is full attention");
ABSL_FLAG(int, vocab_size, 0, "vocabulary size (0: the preset's)");
ABSL_FLAG(std::string, dtype, "BF16", "BF16, F16 or F32");
ABSL_FLAG(double, shard_gb, 5.0, "maximum shard size in GB (1e9 bytes)");
ABSL_FLAG(uint64_t, seed, 0, "random seed of the weights");
ABSL_FLAG(bool, fused_experts, false,
          "write MoE experts fused (experts.gate_up_proj / down_proj)");
ABSL_FLAG(bool, list, false, "list the presets and exit");

namespace {

using rollout::model::tools::CheckpointSpec;

int Fail(const std::string& message) {
  std::fprintf(stderr, "make_checkpoint: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Writes a random-weight HF checkpoint of a real model shape.");
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_list)) {
    std::printf(
        "%s\n",
        absl::StrJoin(rollout::model::tools::PresetNames(), "\n").c_str());
    return 0;
  }
  absl::StatusOr<CheckpointSpec> spec =
      rollout::model::tools::PresetSpec(absl::GetFlag(FLAGS_preset));
  if (!spec.ok()) return Fail(std::string(spec.status().message()));
  if (absl::GetFlag(FLAGS_out).empty()) return Fail("--out is required");
  if (absl::GetFlag(FLAGS_num_layers) > 0) {
    spec->num_layers = absl::GetFlag(FLAGS_num_layers);
  }
  if (absl::GetFlag(FLAGS_vocab_size) > 0) {
    spec->vocab_size = absl::GetFlag(FLAGS_vocab_size);
    if (spec->eos_token_id >= spec->vocab_size) spec->eos_token_id = -1;
  }
  spec->fused_experts = absl::GetFlag(FLAGS_fused_experts);

  rollout::model::tools::WriteOptions opts;
  absl::StatusOr<rollout::model::Dtype> dtype =
      rollout::model::DtypeFromName(absl::GetFlag(FLAGS_dtype));
  if (!dtype.ok()) return Fail(std::string(dtype.status().message()));
  opts.dtype = *dtype;
  opts.max_shard_bytes =
      static_cast<int64_t>(absl::GetFlag(FLAGS_shard_gb) * 1e9);
  opts.seed = absl::GetFlag(FLAGS_seed);
  const auto start = std::chrono::steady_clock::now();
  int64_t last_printed = -1;
  opts.progress = [&](const rollout::model::tools::WriteProgress& p) {
    const int64_t mb = p.bytes_done >> 20;
    if (mb == last_printed || (mb % 64 != 0 && p.bytes_done != p.bytes_total)) {
      return;
    }
    last_printed = mb;
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    std::fprintf(stderr,
                 "\rmake_checkpoint: %.2f / %.2f GB (%.1f%%), shard %d/%d, "
                 "%.0f MB/s   ",
                 p.bytes_done / 1e9, p.bytes_total / 1e9,
                 100.0 * p.bytes_done / std::max<int64_t>(1, p.bytes_total),
                 p.shard, p.num_shards,
                 p.bytes_done / 1e6 / std::max(secs, 1e-3));
  };
  absl::Status s = rollout::model::tools::WriteRandomCheckpoint(
      *spec, absl::GetFlag(FLAGS_out), opts);
  std::fprintf(stderr, "\n");
  if (!s.ok()) return Fail(std::string(s.message()));
  std::fprintf(stderr, "make_checkpoint: wrote %s (%s, %d layers)\n",
               absl::GetFlag(FLAGS_out).c_str(),
               absl::GetFlag(FLAGS_preset).c_str(), spec->num_layers);
  return 0;
}
