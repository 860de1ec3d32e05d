#!/bin/bash
# Run 23: the same with the hints on the fused route too (staged k copies, register prefetch, appends) and
# the FUSED lines in --replay-only. var_tests did not run (rc 127: its libraries were not packed).
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
for i in 1 2; do
  timeout 60 .device/bin/gdn_bench --replay-only > "$OUT/ab_base$i.log" 2>&1
  timeout 60 .device/var/gdn_bench --replay-only > "$OUT/ab_var$i.log" 2>&1
done
timeout 240 .device/var/decode_test > "$OUT/var_tests.log" 2>&1; echo "var decode_test rc=$?"
