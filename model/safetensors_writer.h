// Writes safetensors files: the header for a declared list of tensors, then
// their bytes streamed in order, so that checkpoints larger than memory can be
// written (tools/make_checkpoint) and tests can build small files in one call.
//
//   ASSIGN_OR_RETURN(auto w, SafetensorsWriter::Create(path, specs, {}));
//   for (...) RETURN_IF_ERROR(w->Append(bytes));   // in spec order
//   RETURN_IF_ERROR(w->Finish());
#ifndef ROLLOUT_MODEL_SAFETENSORS_WRITER_H_
#define ROLLOUT_MODEL_SAFETENSORS_WRITER_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/dtype.h"

namespace rollout::model {

struct TensorSpec {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<int64_t> shape;

  int64_t nbytes() const;
};

class SafetensorsWriter {
 public:
  // Writes the header; tensor data then follows in `specs` order.
  static absl::StatusOr<std::unique_ptr<SafetensorsWriter>> Create(
      const std::string& path, const std::vector<TensorSpec>& specs,
      const std::map<std::string, std::string>& metadata);
  ~SafetensorsWriter();

  // Appends the next bytes of tensor data (may span tensors).
  absl::Status Append(absl::Span<const uint8_t> bytes);
  // Checks that every declared byte was written and closes the file.
  absl::Status Finish();

 private:
  SafetensorsWriter() = default;
  std::string path_;
  std::FILE* out_ = nullptr;
  int64_t expected_ = 0;
  int64_t written_ = 0;
};

// A tensor held in memory (tests, small files).
struct OwnedTensor {
  TensorSpec spec;
  std::vector<uint8_t> data;
};

OwnedTensor MakeF32Tensor(const std::string& name, std::vector<int64_t> shape,
                          absl::Span<const float> values);
OwnedTensor MakeBf16Tensor(const std::string& name, std::vector<int64_t> shape,
                           absl::Span<const float> values);
OwnedTensor MakeI32Tensor(const std::string& name, std::vector<int64_t> shape,
                          absl::Span<const int32_t> values);

// Writes a whole file in one call.
absl::Status WriteSafetensors(
    const std::string& path, const std::vector<OwnedTensor>& tensors,
    const std::map<std::string, std::string>& metadata = {});

}  // namespace rollout::model

#endif  // ROLLOUT_MODEL_SAFETENSORS_WRITER_H_
