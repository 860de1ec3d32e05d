// One GDN layer's decode kernels in model order: the conv update of the
// in_proj output (gdn/conv.h, decode form: one token per row) and then the
// packed step or a ReplaySSM step (gdn/decode.h) on the conv's output rows.
//
// Launched as a pair, the decode kernel may overlap the conv kernel with
// DecodeOverlap::kPrologue (its index loads and state streaming before its
// dependency wait). The pair meets kPrologue's contract by construction: the
// conv kernel writes only its conv state and y (the decode step's q|k|v
// rows, read after the wait), never the GDN state, the ring or the cursors;
// and the conv kernel is launched plainly, so every kernel before it (the
// in_proj GEMM, the previous step's cursor advance) has completed when the
// decode prologue runs. kAuto picks the overlap that measured fastest for
// the pair (LayerDecodeOverlapFor); an explicit step overlap is kept.
//
// Both parameter sets are validated before anything is launched, so a bad
// pair never leaves a half-updated layer.
#ifndef ROLLOUT_GDN_LAYER_DECODE_H_
#define ROLLOUT_GDN_LAYER_DECODE_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "gdn/conv.h"
#include "gdn/decode.h"

namespace rollout::gdn {

// The overlap kAuto resolves to (never kAuto) for a decode step right after
// the conv update of `rows` rows of `num_v_heads` heads. H200, conv + decode
// in graphs (docs/benchmarks/gdn_history.md, runs 68-70): kPrologue takes one
// layer's batch-1 decode kernels from 5.2 to 4.4 us (packed, 32 value heads)
// and from 5.5 to 4.7 us (ReplaySSM cycle); the packed step gains up to 256
// (row, value head) pairs, the ReplaySSM step up to 4096 (on a narrow-memory
// card at every size: run 111, H100). Elsewhere, and where the packed step
// takes whole heads (DecodeTileFor on a narrow-memory card, `peak_gbps` as
// there), the decode step's own rule (DecodeOverlapFor).
DecodeOverlap LayerDecodeOverlapFor(int rows, int num_v_heads, bool replay,
                                    double peak_gbps);

// The pair is consistent: conv in decode form (no cu_seqlens) over the
// step's rows, its output y the step's q|k|v rows (same pointer and row
// stride), conv_dim = 2 H K + HV V; and each half is valid on its own.
absl::Status ValidateLayerDecode(const GdnConvParams& conv,
                                 const GdnDecodeParams& step);

// Conv update, then the packed step.
absl::Status LaunchGdnLayerDecode(const GdnConvParams& conv,
                                  const GdnDecodeParams& step,
                                  cudaStream_t stream);
// Conv update, then a ReplaySSM step (its pre-kernel between them on the
// precomputed route).
absl::Status LaunchGdnLayerReplayDecode(const GdnConvParams& conv,
                                        const GdnReplayParams& replay,
                                        cudaStream_t stream);

}  // namespace rollout::gdn

#endif  // ROLLOUT_GDN_LAYER_DECODE_H_
