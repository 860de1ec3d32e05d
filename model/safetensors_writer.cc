#include "model/safetensors_writer.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace rollout::model {

int64_t TensorSpec::nbytes() const {
  int64_t n = DtypeSize(dtype);
  for (int64_t d : shape) n *= d;
  return n;
}

absl::StatusOr<std::unique_ptr<SafetensorsWriter>> SafetensorsWriter::Create(
    const std::string& path, const std::vector<TensorSpec>& specs,
    const std::map<std::string, std::string>& metadata) {
  // nlohmann's default object is a sorted map; offsets follow `specs` order.
  nlohmann::json header = nlohmann::json::object();
  int64_t offset = 0;
  for (const TensorSpec& s : specs) {
    if (s.name.empty() || s.name == "__metadata__" || header.contains(s.name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "safetensors writer: bad or repeated tensor name '", s.name, "'"));
    }
    for (int64_t d : s.shape) {
      if (d < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "safetensors writer: negative dimension in '", s.name, "'"));
      }
    }
    const int64_t n = s.nbytes();
    header[s.name] = {{"dtype", DtypeName(s.dtype)},
                      {"shape", s.shape},
                      {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  // Pad with spaces so the data section starts 8-byte aligned.
  text.append((8 - text.size() % 8) % 8, ' ');

  std::unique_ptr<SafetensorsWriter> w(new SafetensorsWriter());
  w->path_ = path;
  w->expected_ = offset;
  w->out_ = std::fopen(path.c_str(), "wb");
  if (w->out_ == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  uint8_t len[8];
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(n >> (8 * i));
  if (std::fwrite(len, 1, 8, w->out_) != 8 ||
      std::fwrite(text.data(), 1, text.size(), w->out_) != text.size()) {
    return absl::DataLossError(absl::StrCat("cannot write ", path));
  }
  return w;
}

SafetensorsWriter::~SafetensorsWriter() {
  if (out_ != nullptr) std::fclose(out_);
}

absl::Status SafetensorsWriter::Append(absl::Span<const uint8_t> bytes) {
  if (out_ == nullptr) {
    return absl::FailedPreconditionError("safetensors writer is finished");
  }
  if (written_ + static_cast<int64_t>(bytes.size()) > expected_) {
    return absl::InvalidArgumentError(
        absl::StrCat("safetensors writer: more data than the ", expected_,
                     " bytes declared for ", path_));
  }
  if (!bytes.empty() &&
      std::fwrite(bytes.data(), 1, bytes.size(), out_) != bytes.size()) {
    return absl::DataLossError(absl::StrCat("cannot write ", path_));
  }
  written_ += static_cast<int64_t>(bytes.size());
  return absl::OkStatus();
}

absl::Status SafetensorsWriter::Finish() {
  if (out_ == nullptr) {
    return absl::FailedPreconditionError("safetensors writer is finished");
  }
  const bool closed = std::fclose(out_) == 0;
  out_ = nullptr;
  if (written_ != expected_) {
    return absl::InvalidArgumentError(
        absl::StrCat("safetensors writer: ", written_, " of ", expected_,
                     " declared bytes written to ", path_));
  }
  if (!closed) return absl::DataLossError(absl::StrCat("cannot close ", path_));
  return absl::OkStatus();
}

OwnedTensor MakeF32Tensor(const std::string& name, std::vector<int64_t> shape,
                          absl::Span<const float> values) {
  OwnedTensor t{{name, Dtype::kF32, std::move(shape)}, {}};
  t.data.resize(values.size() * 4);
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

OwnedTensor MakeBf16Tensor(const std::string& name, std::vector<int64_t> shape,
                           absl::Span<const float> values) {
  OwnedTensor t{{name, Dtype::kBF16, std::move(shape)}, {}};
  t.data.resize(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = FloatToBf16(values[i]);
    std::memcpy(t.data.data() + 2 * i, &h, 2);
  }
  return t;
}

OwnedTensor MakeI32Tensor(const std::string& name, std::vector<int64_t> shape,
                          absl::Span<const int32_t> values) {
  OwnedTensor t{{name, Dtype::kI32, std::move(shape)}, {}};
  t.data.resize(values.size() * 4);
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

absl::Status WriteSafetensors(
    const std::string& path, const std::vector<OwnedTensor>& tensors,
    const std::map<std::string, std::string>& metadata) {
  std::vector<TensorSpec> specs;
  for (const OwnedTensor& t : tensors) {
    if (static_cast<int64_t>(t.data.size()) != t.spec.nbytes()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", t.spec.name, "' has ", t.data.size(),
                       " bytes, its shape needs ", t.spec.nbytes()));
    }
    specs.push_back(t.spec);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsWriter> w,
                   SafetensorsWriter::Create(path, specs, metadata));
  for (const OwnedTensor& t : tensors) RETURN_IF_ERROR(w->Append(t.data));
  return w->Finish();
}

}  // namespace rollout::model
