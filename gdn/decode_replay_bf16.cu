// ReplaySSM decode + fold instantiations, bf16 ring (k and d rounded to bf16;
// the rounding is folded into the state at every flush).
#include "gdn/decode_kernel.cuh"

namespace rollout::gdn::internal {

cudaError_t LaunchReplayDecodeKernelBf16(DecodeTile tile, const DecodeArgs& a,
                                         cudaStream_t stream) {
  return LaunchDecodeForTile<DecodeMode::kReplay, uint16_t>(tile, a, stream);
}

cudaError_t LaunchReplayFoldKernelBf16(const DecodeArgs& a,
                                       cudaStream_t stream) {
  return LaunchDecodeTile<Tile<4, 2, 1>, DecodeMode::kFold, uint16_t>(a,
                                                                      stream);
}

}  // namespace rollout::gdn::internal
