#!/bin/bash
# Run 109 call 2 (thirty-fifth session): on an H200 the next H200 call
# (h200_call.sh: HEAD's documented run, then bin against coefmma); on any
# other card ncu's warp-state samples of the batch-1 steps, meant every 32
# cycles (~50x run 93's density), for the 14 launches of
# `gdn_bench --profile=HV/1` at 32 and 16 value heads: 1-2 packed, 3-6 and
# 7-10 the shipped non-flush steps at cursors 0 / 1 / 7 and the flush (15),
# 11-12 the fused bv64 tile at cursors 7 and 15, 13-14 the shipped flush
# forced at cursors 0 and 1. Here, before:
#   tools/device_pack.sh --gzip && bash bench/results/pending/pack.sh decode
#   bash bench/results/pending/carry.sh coefmma                # 61.7 MB
# then the run tool (carry [".device"], timeout 600) runs this file.
# As run (H100, 86 s), the machine's ncu did not know --sampling-interval
# (likely --warp-sampling-interval: check ncu --help), so the fallback ran at
# the default interval: ~300-430 samples a launch, as in run 93. The
# per-instruction counts ("Instructions Executed") are exact either way.
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
  timeout 200 ncu --sampling-interval 0 "${args[@]}" .device/bin/gdn_bench --profile=$hv/1 \
    > "$D/ncu_$hv.log" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then  # the option's range differs: the default interval
    echo "ncu $hv rc=$rc with --sampling-interval 0; again without"; tail -3 "$D/ncu_$hv.log"
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
