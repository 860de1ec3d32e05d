#!/bin/bash
# Run 27: ring d entries evict-last too (staged reads, appends) (bin) vs main 1498aa3 (base).
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
timeout 200 .device/bin/decode_test > "$OUT/var_tests.log" 2>&1; echo "decode_test rc=$?"
grep -E "^\[  (FAILED|PASSED)" "$OUT/var_tests.log"
for i in 1 2; do
  timeout 80 .device/base/gdn_bench --replay-only > "$OUT/ab_base$i.log" 2>&1
  timeout 80 .device/bin/gdn_bench --replay-only > "$OUT/ab_var$i.log" 2>&1
done
for f in "$OUT"/ab_*.log; do echo "== $f"; grep -E "REPLAY" "$f" | sed "s/|| pdl.*//; s/REPLAY //; s/| staggered.*//"; done
