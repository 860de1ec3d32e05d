// Element types of the GDN kernels' activation buffers, shared by the launcher
// params of gdn/ (decode.h, conv.h, prefill.h). Plain C++: no CUDA headers.
#ifndef ROLLOUT_GDN_DTYPE_H_
#define ROLLOUT_GDN_DTYPE_H_

namespace rollout::gdn {

enum class DType : int {
  kBf16 = 0,  // bfloat16 stored as uint16_t (upper half of an fp32)
  kFp32 = 1,
};

inline int DTypeBytes(DType t) { return t == DType::kBf16 ? 2 : 4; }
inline const char* DTypeName(DType t) {
  return t == DType::kBf16 ? "bf16" : "fp32";
}

}  // namespace rollout::gdn

#endif  // ROLLOUT_GDN_DTYPE_H_
