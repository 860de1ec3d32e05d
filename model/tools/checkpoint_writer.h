// Writes a random-weight checkpoint of a CheckpointSpec in the Hugging Face
// layout: config.json, generation_config.json, and model.safetensors or
// model-0000i-of-0000n.safetensors shards with model.safetensors.index.json.
// Tensors are generated and written in chunks, so checkpoints far larger than
// memory can be made.
//
// Values are a pure function of (seed, logical tensor, element): the same
// logical weights come out whatever the storage layout (fused or per-expert
// experts, Qwen3-Next's grouped in_proj_qkvz or split projections, nested or
// flat names) or the sharding, which lets tests check that every layout loads
// to the same model. Scales keep activations O(1) (matrices ~ fan_in^-1/2,
// norm weights perturbed around their identity, A_log = log U[1, 8)).
//
//   WriteOptions opts;
//   opts.progress = [](const WriteProgress& p) { ... };
//   RETURN_IF_ERROR(WriteRandomCheckpoint(spec, "/tmp/ckpt", opts));
#ifndef ROLLOUT_MODEL_TOOLS_CHECKPOINT_WRITER_H_
#define ROLLOUT_MODEL_TOOLS_CHECKPOINT_WRITER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "model/dtype.h"
#include "model/tools/checkpoint_spec.h"

namespace rollout::model::tools {

struct WriteProgress {
  int64_t bytes_done = 0;
  int64_t bytes_total = 0;
  int shard = 0;  // 1-based shard being written
  int num_shards = 0;
};

struct WriteOptions {
  Dtype dtype = Dtype::kBF16;               // BF16, F16 or F32
  int64_t max_shard_bytes = 5'000'000'000;  // HF's customary 5 GB shards
  uint64_t seed = 0;
  // Called after every written chunk (about every 4 MiB).
  std::function<void(const WriteProgress&)> progress;

  absl::Status Validate() const;
};

// The tensors (names, shapes) the spec's checkpoint holds, in write order.
struct PlannedTensorInfo {
  std::string name;
  std::vector<int64_t> shape;
};
std::vector<PlannedTensorInfo> PlanTensors(const CheckpointSpec& spec);

// Creates `dir` if needed and writes the checkpoint into it.
absl::Status WriteRandomCheckpoint(const CheckpointSpec& spec,
                                   const std::string& dir,
                                   const WriteOptions& options = {});

}  // namespace rollout::model::tools

#endif  // ROLLOUT_MODEL_TOOLS_CHECKPOINT_WRITER_H_
