// Element types of safetensors files and the float conversions the loader
// needs (bf16 / fp16 -> fp32 on load, fp32 -> bf16 in the checkpoint maker).
#ifndef ROLLOUT_MODEL_DTYPE_H_
#define ROLLOUT_MODEL_DTYPE_H_

#include <cstdint>
#include <cstring>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::model {

// The safetensors dtype names (https://github.com/huggingface/safetensors).
enum class Dtype {
  kBool,
  kU8,
  kI8,
  kF8E4M3,
  kF8E5M2,
  kI16,
  kU16,
  kF16,
  kBF16,
  kI32,
  kU32,
  kF32,
  kF64,
  kI64,
  kU64,
};

// "BF16" -> kBF16; an error naming the string for anything else.
absl::StatusOr<Dtype> DtypeFromName(absl::string_view name);
const char* DtypeName(Dtype dtype);
// Bytes per element.
int DtypeSize(Dtype dtype);
// Whether ToFloat32 (below) converts this dtype.
bool IsFloatConvertible(Dtype dtype);

inline float Bf16ToFloat(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// Round to nearest even; NaN stays NaN (quiet).
inline uint16_t FloatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// IEEE binary16 -> fp32 (exact, subnormals included).
float Fp16ToFloat(uint16_t h);
// fp32 -> IEEE binary16, round to nearest even, overflow to infinity.
uint16_t FloatToFp16(float f);

}  // namespace rollout::model

#endif  // ROLLOUT_MODEL_DTYPE_H_
