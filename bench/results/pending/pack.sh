#!/bin/bash
# Packs the prefill A/B builds of bench/results/pending/ (README.md there):
# HEAD as "base", then each patch applied alone on HEAD. Run from the
# repository root on a clean gdn/prefill_two_pass.cu; it is restored after
# each build. Then, through the device run tool (carry [".device"]):
#   bash bench/ab_on_device.sh --prefill --tests all --passes 3 \
#     base unroll4 state_lean chunk_ldv4 all
set -euo pipefail
cd "$(dirname "$0")/../../.."
targets=(//bench:gdn_bench //gdn:prefill_test)
git diff --quiet -- gdn/prefill_two_pass.cu ||
  { echo "pack.sh: gdn/prefill_two_pass.cu has local changes" >&2; exit 2; }
rm -rf .device
tools/device_pack.sh --gzip --into base "${targets[@]}"
for v in unroll4 state_lean chunk_ldv4 all; do
  git apply "bench/results/pending/$v.patch"
  if ! tools/device_pack.sh --gzip --into "$v" "${targets[@]}"; then
    git checkout -- gdn/prefill_two_pass.cu
    exit 1
  fi
  git checkout -- gdn/prefill_two_pass.cu
done
du -sh .device
