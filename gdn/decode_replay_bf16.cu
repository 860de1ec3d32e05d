// ReplaySSM decode + fold instantiations, bf16 ring (k and d rounded to bf16;
// the rounding is folded into the state at every flush).
#include "gdn/decode_kernel.cuh"

namespace rollout::gdn::internal {

cudaError_t LaunchReplayDecodeKernelBf16(DecodeTile tile, bool stage,
                                         bool tile_first, const DecodeArgs& a,
                                         cudaStream_t stream, bool pdl) {
  return LaunchReplayFused<uint16_t>(tile, stage, tile_first, a, stream, pdl);
}

cudaError_t LaunchReplayFoldKernelBf16(const DecodeArgs& a,
                                       cudaStream_t stream) {
  return LaunchDecodeTile<Tile<4, 2, 6>, DecodeMode::kFold, uint16_t, false>(
      a, stream, false);
}

}  // namespace rollout::gdn::internal
