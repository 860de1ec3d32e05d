#!/bin/bash
# Run 111 call 5 (thirty-eighth session, H100): mmareg and mmareg2
# (bench/results/pending/decode/: the two-warp tiles' flush fold on tensor
# cores; mmareg2 also keeps the ring weights' scan above the wait) against
# dbase (HEAD 8736d27's gdn_bench). The bv8 fp32 staged kernels are the only
# ones that change: 16/16 B = 1 under kAuto. Here, before:
#   tools/device_pack.sh --gzip --into dbase //bench:gdn_bench      # HEAD
#   git apply bench/results/pending/decode/mmareg.patch
#   tools/device_pack.sh --gzip --into mmareg //bench:gdn_bench
#   git checkout gdn/ && git apply bench/results/pending/decode/mmareg2.patch
#   tools/device_pack.sh --gzip --into mmareg2 //bench:gdn_bench //gdn:decode_test
#   git checkout gdn/
#   bash bench/results/pending/carry.sh dbase mmareg mmareg2
#   mv .device/bin .device-parked/bin_hold     # bin is not needed: 47 MB
# then the run tool (carry [".device"], kind nvidia-h100-x1, timeout 480).
cd "$(dirname "$0")/../../.." || exit 2
bash bench/unpack_device.sh > /dev/null 2>&1 || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
out=${OUT:-/tmp}
start=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
for b in dbase mmareg mmareg2; do
  timeout 60 .device/$b/gdn_bench --no-micro --flush-cost > "$out/flush_cost_$b.log" 2>&1
  echo "$b: $(grep 'FLUSHCOST HV=16 B=1 tile auto packed' "$out/flush_cost_$b.log")"
done
echo "flush-cost done ($((SECONDS - start)) s)"
bash bench/ab_on_device.sh --tests mmareg2 --passes 3 dbase mmareg mmareg2 2>&1 | tail -45
echo "done in $((SECONDS - start)) s"
