// A Hugging Face checkpoint directory's tensors: model.safetensors, or the
// shards listed by model.safetensors.index.json (the single file wins when
// both exist, as in transformers). Every shard is memory-mapped and its header
// validated on Open; lookups are by the checkpoint's own tensor names (the
// model-specific name mapping lives in weights.h).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Checkpoint> ckpt, Checkpoint::Open(dir));
//   ASSIGN_OR_RETURN(std::vector<float> w,
//   ckpt->ReadFloat32("model.norm.weight"));
#ifndef ROLLOUT_MODEL_CHECKPOINT_H_
#define ROLLOUT_MODEL_CHECKPOINT_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/safetensors.h"

namespace rollout::model {

class Checkpoint {
 public:
  struct Entry {
    const SafetensorsFile* file = nullptr;
    const TensorInfo* info = nullptr;
  };

  static absl::StatusOr<std::unique_ptr<Checkpoint>> Open(
      const std::string& dir, const SafetensorsLimits& limits = {});

  const std::string& dir() const { return dir_; }
  // nullptr when absent.
  const Entry* Find(absl::string_view name) const;
  const std::map<std::string, Entry>& tensors() const { return tensors_; }
  int num_files() const { return static_cast<int>(files_.size()); }

  // The tensor converted to fp32 (F32 / BF16 / F16), row-major.
  absl::StatusOr<std::vector<float>> ReadFloat32(absl::string_view name) const;
  // Raw bytes (any dtype), e.g. I32 token ids of golden files.
  absl::StatusOr<absl::Span<const uint8_t>> Bytes(absl::string_view name) const;

 private:
  std::string dir_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, Entry> tensors_;
};

}  // namespace rollout::model

#endif  // ROLLOUT_MODEL_CHECKPOINT_H_
