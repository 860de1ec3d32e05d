#!/bin/bash
# Run 22 (device call): .device/bin = main (ff99ccc) + the staggered bench, .device/var = ring-k evict-last
# (pre-kernel reads, precomputed-route appends) + evict-first non-flush checkpoint; alternating A/B.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
for i in 1 2; do
  timeout 60 .device/bin/gdn_bench --replay-only > "$OUT/ab_base$i.log" 2>&1
  timeout 60 .device/var/gdn_bench --replay-only > "$OUT/ab_var$i.log" 2>&1
done
timeout 240 .device/var/decode_test > "$OUT/var_tests.log" 2>&1; echo "var decode_test rc=$?"
