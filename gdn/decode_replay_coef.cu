// ReplaySSM decode with precomputed ring coefficients (fp32 ring): the
// coefficient pre-kernel, then the decode kernel (DecodeMode::kReplayCoef).
#include "gdn/decode_kernel.cuh"

namespace rollout::gdn::internal {

cudaError_t LaunchReplayCoefDecodeKernelF32(DecodeTile tile, bool stage,
                                            const DecodeArgs& a,
                                            cudaStream_t stream) {
  return LaunchReplayCoefDecode<float>(tile, stage, a, stream);
}

}  // namespace rollout::gdn::internal
