// Packed decode instantiations (all tiles).
#include "gdn/decode_kernel.cuh"

namespace rollout::gdn::internal {

void LaunchPackedDecodeKernel(DecodeTile tile, const DecodeArgs& a,
                              cudaStream_t stream) {
  LaunchDecodeForTile<DecodeMode::kPacked, float>(tile, a, stream);
}

}  // namespace rollout::gdn::internal
