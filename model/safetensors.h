// Reader for the safetensors format: an 8-byte little-endian header length N,
// N bytes of JSON {name: {dtype, shape, data_offsets: [begin, end]},
// "__metadata__": {str: str}}, then the data section (offsets are relative to
// its start).
//
// The header parser is a pure function over the file's bytes and is meant to
// survive any input (it is fuzzed): every length and offset is bounded,
// products are overflow-checked, tensors must lie inside the data section,
// must not overlap, and dtype x shape must equal their byte size. Errors name
// the file part and the tensor.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> f,
//                    SafetensorsFile::Open("/ckpt/model.safetensors"));
//   const TensorInfo* t = f->header().Find("model.norm.weight");
//   std::vector<float> w(t->numel());
//   RETURN_IF_ERROR(ToFloat32(t->dtype, f->Bytes(*t), absl::MakeSpan(w)));
#ifndef ROLLOUT_MODEL_SAFETENSORS_H_
#define ROLLOUT_MODEL_SAFETENSORS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "model/dtype.h"

namespace rollout::model {

struct SafetensorsLimits {
  int64_t max_header_bytes = 100'000'000;  // as the reference implementation
  int max_rank = 8;
  int64_t max_tensors = 1'000'000;
  int max_name_bytes = 4096;
};

struct TensorInfo {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<int64_t> shape;
  int64_t begin = 0;  // byte offsets in the data section, [begin, end)
  int64_t end = 0;

  int64_t numel() const;  // product of shape (1 for a scalar)
  int64_t nbytes() const { return end - begin; }
  std::string ShapeString() const;  // "[997, 88]"
};

struct SafetensorsHeader {
  std::vector<TensorInfo> tensors;  // sorted by name
  std::map<std::string, std::string> metadata;
  int64_t data_offset = 0;  // 8 + header length: file offset of the data
  int64_t data_size = 0;    // bytes after the header

  // nullptr when absent (binary search).
  const TensorInfo* Find(absl::string_view name) const;
};

// Parses and validates the header of a complete safetensors file held in
// `file` (only the header is read; offsets are checked against file.size()).
absl::StatusOr<SafetensorsHeader> ParseSafetensorsHeader(
    absl::Span<const uint8_t> file, const SafetensorsLimits& limits = {});

// A read-only memory mapping of one safetensors file. Movable only through
// the unique_ptr; the mapping lives as long as the object.
class SafetensorsFile {
 public:
  static absl::StatusOr<std::unique_ptr<SafetensorsFile>> Open(
      const std::string& path, const SafetensorsLimits& limits = {});
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const SafetensorsHeader& header() const { return header_; }
  // The bytes of a tensor of this file's header.
  absl::Span<const uint8_t> Bytes(const TensorInfo& tensor) const;
  int64_t file_size() const { return static_cast<int64_t>(size_); }

 private:
  SafetensorsFile() = default;

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  SafetensorsHeader header_;
};

// Converts F32 / BF16 / F16 bytes (little-endian, any alignment) to fp32.
// out.size() * DtypeSize(dtype) must equal bytes.size().
absl::Status ToFloat32(Dtype dtype, absl::Span<const uint8_t> bytes,
                       absl::Span<float> out);

}  // namespace rollout::model

#endif  // ROLLOUT_MODEL_SAFETENSORS_H_
