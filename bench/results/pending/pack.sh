#!/bin/bash
# Packs one set of A/B builds of bench/results/pending/ (README.md there) into
# .device/, gzipped: HEAD first, then each patch of the set applied alone on
# HEAD (reverted with git apply -R after each build). Only the builds the
# call tests get the test binary, so that both sets fit the 64 MiB carry
# together (~21 + ~40 MB); builds of the other set are kept. From the
# repository root:
#   bash bench/results/pending/pack.sh prefill
#   bash bench/results/pending/pack.sh decode
# Then, through the device run tool (carry [".device"]):
#   bash bench/ab_on_device.sh --prefill --tests all --passes 3 \
#     base unroll4 state_lean chunk_ldv4 all
#   bash bench/ab_on_device.sh --tests leank --passes 3 bin coefmma leank
#   (README.md there lists the calls; `dbase` is the same build as `bin`)
set -euo pipefail
cd "$(dirname "$0")/../../.."
pending=bench/results/pending
source "$pending/sets.sh"
pending_set "${1:-}" ||
  { echo "usage: bash $pending/pack.sh prefill|decode" >&2; exit 2; }
require_clean_sources pack.sh
pack() {  # build name
  local targets=(//bench:gdn_bench)
  [[ "$tested" == *" $1 "* ]] && targets+=("$test")
  tools/device_pack.sh --gzip --into "$1" "${targets[@]}"
}
pack "$base"
for v in "${variants[@]}"; do
  git apply "$dir/$v.patch"
  if ! pack "$v"; then
    git apply -R "$dir/$v.patch"
    exit 1
  fi
  git apply -R "$dir/$v.patch"
done
du -sh .device
