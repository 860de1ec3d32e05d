// The CPU backend: the exact fp32 implementation of model::Backend, the
// oracle for the CUDA backend and the engine's device where there is no GPU.
//
// Rows of a Forward batch are computed one after another, each through its own
// calls (GEMMs of its own shape), so a row's result never depends on the other
// rows; data-parallel loops inside a row (heads, experts, key-head groups) use
// a thread pool with one task per output slice (no cross-task reductions).
// Every argument of a batch is validated before any state changes: a rejected
// batch leaves every pool as it was.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<CpuBackend> backend,
//                    CpuBackend::Create("tests/data/tiny_qwen3_5"));
//   RETURN_IF_ERROR(backend->InitPools(pools));
//   RETURN_IF_ERROR(backend->ResetState(0));
//   RETURN_IF_ERROR(backend->Forward(batch, &out));
#ifndef ROLLOUT_MODEL_CPU_CPU_BACKEND_H_
#define ROLLOUT_MODEL_CPU_CPU_BACKEND_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/backend.h"
#include "model/config.h"
#include "model/cpu/state_pools.h"
#include "model/hybrid_model.h"
#include "model/ops/parallel.h"

namespace rollout::model::cpu {

struct CpuBackendOptions {
  // Threads of the intra-row loops; 0 = the machine's hardware concurrency.
  // (OpenBLAS keeps its own threads for the GEMMs.)
  int num_threads = 0;

  absl::Status Validate() const;
};

class CpuBackend : public Backend {
 public:
  // Loads config.json (+ generation_config.json) and the safetensors weights
  // of a Hugging Face checkpoint directory.
  static absl::StatusOr<std::unique_ptr<CpuBackend>> Create(
      const std::string& checkpoint_dir, const CpuBackendOptions& options = {});

  const ModelInfo& info() const override { return info_; }
  BackendCapabilities capabilities() const override;
  absl::StatusOr<PoolFootprint> Footprint(int ring_length,
                                          int kv_block_size) const override;
  absl::Status InitPools(const PoolConfig& pools) override;
  absl::Status ResetState(int slot) override;
  absl::Status CopyState(int src_slot, int dst_slot) override;
  absl::Status CopyKvBlock(int src_block, int dst_block) override;
  absl::Status FlushRing(int state_slot, int ring_slot, int write_pos) override;
  absl::Status Forward(const ForwardBatch& batch, ForwardOutput* out) override;
  absl::StatusOr<StateSnapshot> ExportState(
      int state_slot, absl::Span<const int32_t> kv_blocks) override;
  absl::Status ImportState(const StateSnapshot& snapshot, int state_slot,
                           absl::Span<const int32_t> kv_blocks) override;
  absl::Status LoadWeights(const std::string& checkpoint_dir) override;
  MemoryStats memory() const override;

  const ModelConfig& config() const { return model_->config(); }

 private:
  CpuBackend() = default;

  absl::Status CheckPools() const;
  absl::Status CheckSlot(int slot, absl::string_view what) const;
  absl::Status CheckBlocks(absl::Span<const int32_t> blocks) const;
  absl::Status ValidateBatch(const ForwardBatch& batch) const;

  CpuBackendOptions options_;
  ModelInfo info_;
  std::unique_ptr<ops::ThreadPool> pool_;
  std::unique_ptr<HybridModel> model_;
  StatePools pools_;
};

}  // namespace rollout::model::cpu

#endif  // ROLLOUT_MODEL_CPU_CPU_BACKEND_H_
