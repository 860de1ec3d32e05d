#!/bin/bash
# Run 37 (ninth session): the coefficient routes forced at every batch of
# gdn_bench --replay-only, fp32 and bf16 ring (two passes; kAuto's threshold
# was measured for the fp32 ring in run 8), then compute-sanitizer racecheck
# over the bf16-ring precomputed-route test.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/run37}"
R="$OUT/r"
mkdir -p "$R"
T0=$SECONDS
for f in .device/*/*.gz; do gunzip -f "$f" && chmod +x "${f%.gz}"; done
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$R/gpu.txt" 2>&1
for p in 1 2; do
  timeout 120 .device/bin/gdn_bench --no-micro --replay-only > "$R/replay_p$p.log" 2>&1
  echo "[$((SECONDS - T0)) s] pass $p rc=$?"
done
grep -h "^FUSED\|^BF16" "$R"/replay_p*.log
timeout 240 compute-sanitizer --tool racecheck .device/bin/decode_test \
  --gtest_filter='*Bf16RingPrecomputedStaysClose*' > "$R/racecheck.log" 2>&1
echo "[$((SECONDS - T0)) s] racecheck rc=$?"
grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$R/racecheck.log" | head -4
tar czf "$OUT/run37.tgz" -C "$OUT" r
