#!/bin/bash
# Run 119 call 4 (forty-sixth session; H100, 85 s): run 109's call 2 with
# ncu's warp sampling option under its CUDA 13 name. As run, the command was
#   sed 's/--sampling-interval 0/--warp-sampling-interval 0/' \
#     bench/results/run109/call2.sh > bench/results/run119/c4.sh &&
#     bash bench/results/run119/c4.sh
# This file is that script, kept. Samples every 32 cycles: ~5,000-7,000 per
# launch (run 109: 300-430). Summaries in h100/ncu_b1_summary_*.txt
# (bench/results/run109/ncu_summary.py; the per-SASS tables, 2.4 MB, were
# not kept).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/run109_out}"; mkdir -p "$OUT"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $gpu"
if [[ "$gpu" == *H200* ]]; then
  exec bash bench/results/pending/h200_call.sh --tests coefmma --limit 575 bin coefmma
fi
bash bench/unpack_device.sh || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
D="$OUT/ncu"; mkdir -p "$D"
T0=$SECONDS
for hv in 32 16; do
  args=(--section SpeedOfLight --section WarpStateStats --section SourceCounters
        --import-source no -k regex:GdnDecodeKernel -c 14 -f -o "$D/p$hv")
  timeout 200 ncu --warp-sampling-interval 0 "${args[@]}" .device/bin/gdn_bench --profile=$hv/1 \
    > "$D/ncu_$hv.log" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then  # the option's range differs: the default interval
    echo "ncu $hv rc=$rc with --warp-sampling-interval 0; again without"; tail -3 "$D/ncu_$hv.log"
    timeout 200 ncu "${args[@]}" .device/bin/gdn_bench --profile=$hv/1 > "$D/ncu_$hv.log" 2>&1
    rc=$?
  fi
  echo "[$((SECONDS - T0)) s] ncu $hv rc=$rc"
  ncu -i "$D/p$hv.ncu-rep" --page source --print-source sass --csv 2>/dev/null |
    gzip > "$OUT/sass_$hv.csv.gz"
  ncu -i "$D/p$hv.ncu-rep" --page details > "$D/details_$hv.txt" 2>&1
  rm -f "$D/p$hv.ncu-rep"
  grep -E "GdnDecodeKernel|Duration|Warp Cycles Per Issued" "$D/details_$hv.txt" | cut -c1-150 | head -60
done
ls -la "$OUT"
(cd "$OUT" && tar czf ncu.tgz ncu && rm -rf ncu)
