// ReplaySSM decode + fold instantiations, bf16 ring (k and d rounded to bf16;
// the rounding is folded into the state at every flush).
#include "gdn/decode_kernel.cuh"

namespace rollout::gdn::internal {

void LaunchReplayDecodeKernelBf16(DecodeTile tile, const DecodeArgs& a,
                                  cudaStream_t stream) {
  LaunchDecodeForTile<DecodeMode::kReplay, uint16_t>(tile, a, stream);
}

void LaunchReplayFoldKernelBf16(const DecodeArgs& a, cudaStream_t stream) {
  LaunchDecodeTile<Tile<8, 2, 4>, DecodeMode::kFold, uint16_t>(a, stream);
}

}  // namespace rollout::gdn::internal
