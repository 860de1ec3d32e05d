#include "model/dtype.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace rollout::model {
namespace {

struct DtypeEntry {
  Dtype dtype;
  const char* name;
  int size;
};

constexpr DtypeEntry kDtypes[] = {
    {Dtype::kBool, "BOOL", 1},      {Dtype::kU8, "U8", 1},
    {Dtype::kI8, "I8", 1},          {Dtype::kF8E4M3, "F8_E4M3", 1},
    {Dtype::kF8E5M2, "F8_E5M2", 1}, {Dtype::kI16, "I16", 2},
    {Dtype::kU16, "U16", 2},        {Dtype::kF16, "F16", 2},
    {Dtype::kBF16, "BF16", 2},      {Dtype::kI32, "I32", 4},
    {Dtype::kU32, "U32", 4},        {Dtype::kF32, "F32", 4},
    {Dtype::kF64, "F64", 8},        {Dtype::kI64, "I64", 8},
    {Dtype::kU64, "U64", 8},
};

}  // namespace

absl::StatusOr<Dtype> DtypeFromName(absl::string_view name) {
  for (const DtypeEntry& e : kDtypes) {
    if (name == e.name) return e.dtype;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", name.substr(0, 32), "'"));
}

const char* DtypeName(Dtype dtype) {
  for (const DtypeEntry& e : kDtypes) {
    if (e.dtype == dtype) return e.name;
  }
  return "?";
}

int DtypeSize(Dtype dtype) {
  for (const DtypeEntry& e : kDtypes) {
    if (e.dtype == dtype) return e.size;
  }
  return 0;
}

bool IsFloatConvertible(Dtype dtype) {
  return dtype == Dtype::kF32 || dtype == Dtype::kBF16 || dtype == Dtype::kF16;
}

float Fp16ToFloat(uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  float value;
  if (exponent == 0) {
    value = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    value = mantissa == 0 ? INFINITY : NAN;
  } else {
    value = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return sign ? -value : value;
}

uint16_t FloatToFp16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {
    // Subnormal half (or zero): value = m * 2^-24, round to nearest even.
    const float a = std::fabs(f) * 16777216.0f;  // exact scaling by 2^24
    float r = std::nearbyint(a);                 // default mode: ties to even
    return sign | static_cast<uint16_t>(r);
  }
  // Normal: rebias exponent 127 -> 15 and round the 13 dropped bits.
  uint32_t m = abs - 0x38000000u;  // exponent - 112
  m += 0x0fffu + ((m >> 13) & 1u);
  return sign | static_cast<uint16_t>(m >> 13);
}

}  // namespace rollout::model
