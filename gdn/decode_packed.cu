// Packed decode instantiations (all tiles).
#include "gdn/decode_kernel.cuh"

namespace rollout::gdn::internal {

cudaError_t LaunchPackedDecodeKernel(DecodeTile tile, const DecodeArgs& a,
                                     cudaStream_t stream) {
  return LaunchDecodeForTile<DecodeMode::kPacked, float>(tile, a, stream);
}

}  // namespace rollout::gdn::internal
