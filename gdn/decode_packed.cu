// Packed decode instantiations (all tiles).
#include "gdn/decode_kernel.cuh"

namespace rollout::gdn::internal {

cudaError_t LaunchPackedDecodeKernel(DecodeTile tile, const DecodeArgs& a,
                                     cudaStream_t stream, bool pdl) {
  return LaunchDecodeForTile<DecodeMode::kPacked, float, false>(tile, a, stream,
                                                                pdl);
}

}  // namespace rollout::gdn::internal
