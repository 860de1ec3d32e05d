// ReplaySSM decode + fold instantiations, fp32 ring (the default: exact).
#include "gdn/decode_kernel.cuh"

namespace rollout::gdn::internal {

void LaunchReplayDecodeKernelF32(DecodeTile tile, const DecodeArgs& a,
                                 cudaStream_t stream) {
  LaunchDecodeForTile<DecodeMode::kReplay, float>(tile, a, stream);
}

void LaunchReplayFoldKernelF32(const DecodeArgs& a, cudaStream_t stream) {
  LaunchDecodeTile<Tile<8, 2, 4>, DecodeMode::kFold, float>(a, stream);
}

}  // namespace rollout::gdn::internal
