// ReplaySSM decode with precomputed ring coefficients, bf16 ring: the
// coefficient pre-kernel, then the decode kernel (DecodeMode::kReplayCoef;
// its flush folds through shared coefficients, not in place: the staged d
// entries are bf16).
#include "gdn/decode_kernel.cuh"

namespace rollout::gdn::internal {

cudaError_t LaunchReplayCoefDecodeKernelBf16(DecodeTile tile, bool stage,
                                             const DecodeArgs& a,
                                             cudaStream_t stream) {
  return LaunchReplayCoefDecode<uint16_t>(tile, stage, a, stream);
}

}  // namespace rollout::gdn::internal
