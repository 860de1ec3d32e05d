#!/bin/bash
# Run 114 call 1 (fortieth session): the launch overlaps side by side
# (gdn_bench --no-micro --overlap, now with kAuto's tiles at B = 128 and 256
# and kPrologue for the ReplaySSM step), two passes, then the layer pairs
# (--layer). The question: does kLaunch (plain-launch semantics) take part
# of the 1-3 % that run 113's kPrologue ReplaySSM steps (R.pdl) gained on
# the H200 at 256-2048 (row, value head) pairs, where DecodeOverlapFor
# launches plainly (runs 66-67 measured kLaunch 0.1-0.4 us slower there)?
# Here, before:
#   tools/device_pack.sh --gzip
#   bash bench/results/pending/carry.sh                  # bin and lib: 52.5 MB
# then the run tool (carry [".device"], timeout 400) runs this file; its
# output lands in $OUT.
cd "$(dirname "$0")/../../.." || exit 2
bash bench/unpack_device.sh > /dev/null 2>&1 || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
out=${OUT:-/tmp}
start=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.memory,power.limit --format=csv,noheader
source bench/gpu_samples.sh
start_gpu_samples "$out/smi.csv"
for pass in 1 2; do
  timeout 170 .device/bin/gdn_bench --no-micro --overlap \
    > "$out/overlap_$pass.log" 2>&1
  echo "== overlap pass $pass rc=$? ($((SECONDS - start)) s)"
  grep -E '^device|^OVERLAP' "$out/overlap_$pass.log"
done
timeout 100 .device/bin/gdn_bench --no-micro --layer > "$out/layer.log" 2>&1
echo "== layer rc=$? ($((SECONDS - start)) s)"
grep -E '^LAYER' "$out/layer.log"
stop_gpu_samples
echo "done in $((SECONDS - start)) s"
