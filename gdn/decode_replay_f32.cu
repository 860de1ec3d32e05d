// ReplaySSM decode + fold instantiations, fp32 ring (the default: exact).
#include "gdn/decode_kernel.cuh"

namespace rollout::gdn::internal {

cudaError_t LaunchReplayDecodeKernelF32(DecodeTile tile, const DecodeArgs& a,
                                        cudaStream_t stream) {
  return LaunchDecodeForTile<DecodeMode::kReplay, float>(tile, a, stream);
}

cudaError_t LaunchReplayFoldKernelF32(const DecodeArgs& a,
                                      cudaStream_t stream) {
  return LaunchDecodeTile<Tile<4, 2, 1>, DecodeMode::kFold, float>(a, stream);
}

}  // namespace rollout::gdn::internal
