// ReplaySSM decode + fold instantiations, fp32 ring (the default: exact).
#include "gdn/decode_kernel.cuh"

namespace rollout::gdn::internal {

cudaError_t LaunchReplayDecodeKernelF32(DecodeTile tile, bool stage,
                                        bool tile_first, const DecodeArgs& a,
                                        cudaStream_t stream, bool pdl) {
  return LaunchReplayFused<float>(tile, stage, tile_first, a, stream, pdl);
}

cudaError_t LaunchReplayFoldKernelF32(const DecodeArgs& a,
                                      cudaStream_t stream) {
  return LaunchDecodeTile<Tile<4, 2, 6>, DecodeMode::kFold, float, false>(
      a, stream, false);
}

}  // namespace rollout::gdn::internal
