// ReplaySSM decode + fold instantiations, fp32 ring (the default: exact).
#include "gdn/decode_kernel.cuh"

namespace rollout::gdn::internal {

cudaError_t LaunchReplayDecodeKernelF32(DecodeTile tile, bool stage,
                                        const DecodeArgs& a,
                                        cudaStream_t stream, bool pdl) {
  return LaunchDecodeStaged<DecodeMode::kReplay, float>(tile, stage, a, stream,
                                                        pdl);
}

cudaError_t LaunchReplayFoldKernelF32(const DecodeArgs& a,
                                      cudaStream_t stream) {
  return LaunchDecodeTile<Tile<4, 2, 6>, DecodeMode::kFold, float, false>(
      a, stream, false);
}

}  // namespace rollout::gdn::internal
