#!/bin/bash
# Packs one set of A/B builds of bench/results/pending/ (README.md there) into
# .device/, gzipped: HEAD first, then each patch of the set applied alone on
# HEAD (the patched file is restored after each build). Builds of the other
# set are kept: both fit the 64 MiB carry. From the repository root:
#   bash bench/results/pending/pack.sh prefill  # base unroll4 state_lean chunk_ldv4 all
#   bash bench/results/pending/pack.sh decode   # dbase regfold regfold32 dots2 w16 dall
# Then, through the device run tool (carry [".device"]):
#   bash bench/ab_on_device.sh --prefill --tests all --passes 3 \
#     base unroll4 state_lean chunk_ldv4 all
#   bash bench/ab_on_device.sh --tests dall --passes 3 \
#     dbase regfold regfold32 dots2 w16 dall
set -euo pipefail
cd "$(dirname "$0")/../../.."
pending=bench/results/pending
case "${1:-}" in
  prefill)
    dir=$pending file=gdn/prefill_two_pass.cu base=base
    targets=(//bench:gdn_bench //gdn:prefill_test)
    variants=(unroll4 state_lean chunk_ldv4 all)
    ;;
  decode)
    dir=$pending/decode file=gdn/decode_kernel.cuh base=dbase
    targets=(//bench:gdn_bench //gdn:decode_test)
    variants=(regfold regfold32 dots2 w16 dall)
    ;;
  *)
    echo "usage: bash $pending/pack.sh prefill|decode" >&2
    exit 2
    ;;
esac
git diff --quiet -- "$file" ||
  { echo "pack.sh: $file has local changes" >&2; exit 2; }
tools/device_pack.sh --gzip --into "$base" "${targets[@]}"
for v in "${variants[@]}"; do
  git apply "$dir/$v.patch"
  if ! tools/device_pack.sh --gzip --into "$v" "${targets[@]}"; then
    git checkout -- "$file"
    exit 1
  fi
  git checkout -- "$file"
done
du -sh .device
