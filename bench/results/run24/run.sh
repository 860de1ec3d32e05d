#!/bin/bash
# Run 24: .device/bin = the hints on both coefficient routes (= 3cc36b7), .device/base = main's kernels;
# both with the bench of 94e0b8c (SLOTS lines: sorted and contiguous slot sets). Alternating A/B.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
timeout 240 .device/bin/decode_test > "$OUT/var_tests.log" 2>&1; echo "decode_test rc=$?"
for i in 1 2; do
  timeout 80 .device/base/gdn_bench --replay-only > "$OUT/ab_base$i.log" 2>&1
  timeout 80 .device/bin/gdn_bench --replay-only > "$OUT/ab_var$i.log" 2>&1
done
