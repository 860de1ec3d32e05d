#include "gdn/layer_decode.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace rollout::gdn {
namespace {

absl::Status Invalid(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("GDN layer decode: ", what));
}

// Checks what neither half can see alone; both halves validate themselves.
absl::Status CheckPair(const GdnConvParams& conv, const GdnDecodeParams& step) {
  if (conv.cu_seqlens != nullptr) {
    return Invalid("the conv update must be in decode form (no cu_seqlens)");
  }
  if (conv.num_seqs != step.batch) {
    return Invalid(absl::StrCat("conv num_seqs ", conv.num_seqs,
                                " != decode batch ", step.batch));
  }
  const int64_t conv_dim =
      static_cast<int64_t>(step.head_dim) *
      (2 * static_cast<int64_t>(step.num_k_heads) + step.num_v_heads);
  if (conv.conv_dim != conv_dim) {
    return Invalid(absl::StrCat("conv_dim ", conv.conv_dim, " != 2 H K + HV V ",
                                "= ", conv_dim));
  }
  if (conv.y != step.qkv || conv.y_row_stride != step.qkv_row_stride) {
    return Invalid("the conv output y must be the decode step's qkv rows");
  }
  return absl::OkStatus();
}

}  // namespace

DecodeOverlap LayerDecodeOverlapFor(int rows, int num_v_heads, bool replay,
                                    double peak_gbps) {
  // Runs 68-70 (gdn_bench --layer, H200): after the conv update kPrologue was
  // the fastest launch of the ReplaySSM step at 16-4096 (row, value head)
  // pairs (-0.3 to -1.3 us per layer) and of the packed step at 16-256
  // pairs (-0.3 to -0.9 us); at 512-2048 packed pairs it was level with or
  // slower than kLaunch. The packed step's whole-head tile (a narrow-memory
  // card at 192-256 pairs) was measured faster with a plain launch only: with
  // kLaunch it lost 15-25 % at 240-256 pairs (run 110's --tile-table). On a
  // narrow-memory card kPrologue stays the ReplaySSM step's fastest launch
  // past 4096 pairs too: run 111 (H100, two calls) measured it against the
  // plain launch -0.7 to -0.9 % at 8192 pairs (16/32 B = 256, 16/16 B = 512)
  // and -0.3 / -0.4 % at 16384 (16/32 B = 512), where the H200 was mixed
  // (run 70: +1.1, +0.1 and -1.2 %).
  const int64_t units = static_cast<int64_t>(rows) * num_v_heads;
  if (!replay && DecodeTileFor(rows, num_v_heads, false, peak_gbps) ==
                     DecodeTile::kBv128) {
    return DecodeOverlapFor(rows, num_v_heads, false, peak_gbps);
  }
  if (replay && NarrowMemory(peak_gbps)) return DecodeOverlap::kPrologue;
  if (units <= (replay ? 4096 : 256)) return DecodeOverlap::kPrologue;
  return DecodeOverlapFor(rows, num_v_heads, replay, peak_gbps);
}

absl::Status ValidateLayerDecode(const GdnConvParams& conv,
                                 const GdnDecodeParams& step) {
  if (absl::Status s = conv.Validate(); !s.ok()) return s;
  if (absl::Status s = step.Validate(); !s.ok()) return s;
  return CheckPair(conv, step);
}

absl::Status LaunchGdnLayerDecode(const GdnConvParams& conv,
                                  const GdnDecodeParams& step,
                                  cudaStream_t stream) {
  if (absl::Status s = ValidateLayerDecode(conv, step); !s.ok()) return s;
  GdnDecodeParams p = step;
  if (p.overlap == DecodeOverlap::kAuto) {
    p.overlap = LayerDecodeOverlapFor(p.batch, p.num_v_heads, false,
                                      DevicePeakMemoryGbps());
  }
  if (absl::Status s = LaunchGdnCausalConv(conv, stream); !s.ok()) return s;
  return LaunchGdnPackedDecode(p, stream);
}

absl::Status LaunchGdnLayerReplayDecode(const GdnConvParams& conv,
                                        const GdnReplayParams& replay,
                                        cudaStream_t stream) {
  if (absl::Status s = conv.Validate(); !s.ok()) return s;
  if (absl::Status s = replay.Validate(); !s.ok()) return s;
  if (absl::Status s = CheckPair(conv, replay.step); !s.ok()) return s;
  GdnReplayParams p = replay;
  if (p.step.overlap == DecodeOverlap::kAuto) {
    p.step.overlap = LayerDecodeOverlapFor(p.step.batch, p.step.num_v_heads,
                                           true, DevicePeakMemoryGbps());
  }
  if (absl::Status s = LaunchGdnCausalConv(conv, stream); !s.ok()) return s;
  return LaunchGdnReplayDecode(p, stream);
}

}  // namespace rollout::gdn
