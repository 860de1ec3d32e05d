#!/bin/bash
# Run 31: A/B of main (.device/base), the warp-local flush without the split (.device/w, wt_warpflush
# 47e62e7), the L1 prefetch of the flush's ring k rows (.device/p, wt_kprefetch) and both (.device/wp).
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
OUT="${OUT:-/tmp/out}"; R=/tmp/r31; mkdir -p "$OUT" $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/gpu.txt 2>&1
B() { local name=$1; shift; local s=$SECONDS; timeout 60 "$@" --no-micro --replay-only > "$R/$name.log" 2>&1; echo "$name rc=$? $((SECONDS-s))s"; }
for i in 1 2 3; do
  for v in base w p wp; do B $v$i .device/$v/gdn_bench; done
done
tar czf "$OUT/r31.tgz" -C /tmp r31
