#!/bin/bash
# Run 35 (ninth session): the bf16-ring precomputed route (main + the pending
# patch, .device/bin) and the fused flush step (.device/ff) on the H200:
# both decode_test suites, a 3-pass A/B of gdn_bench --replay-only, then
# compute-sanitizer memcheck / racecheck over the replay tests of both.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/run35}"
R="$OUT/r"
mkdir -p "$R"
T0=$SECONDS
stamp() { echo "[$((SECONDS - T0)) s] $*"; }
for f in .device/*/*.gz; do gunzip -f "$f" && chmod +x "${f%.gz}"; done
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$R/gpu.txt" 2>&1
for b in bin ff; do
  timeout 150 ".device/$b/decode_test" > "$R/${b}_decode_test.log" 2>&1
  stamp "$b decode_test rc=$?"
  grep -E "^\[  (FAILED|PASSED) |Failure" "$R/${b}_decode_test.log" | head -8
done
grep -E "replay HV=32 L=16|bf16" "$R/ff_decode_test.log" | head -12
OUT="$R" bash bench/ab_on_device.sh --passes 3 bin ff
stamp "ab done"
grep -h "BF16" "$R"/ab/bin_p*.log | head -20
SAN="*Fp32RingEqualsRecurrentOverFiveCycles*:*PrecomputedCoefficientsEqualRecurrent*:*Bf16Ring*:*FoldGivesExactState*"
for b in ff bin; do
  timeout 110 compute-sanitizer --tool memcheck ".device/$b/decode_test" --gtest_filter="$SAN" > "$R/${b}_memcheck.log" 2>&1
  stamp "$b memcheck rc=$?"
  grep -E "ERROR SUMMARY" "$R/${b}_memcheck.log" | head -2
done
timeout 100 compute-sanitizer --tool racecheck .device/ff/decode_test \
  --gtest_filter='*PrecomputedCoefficientsEqualRecurrent*:*Fp32RingEqualsRecurrentOverFiveCycles*' > "$R/ff_racecheck.log" 2>&1
stamp "ff racecheck rc=$?"
grep -E "RACECHECK SUMMARY|ERROR SUMMARY" "$R/ff_racecheck.log" | head -2
if command -v cuobjdump > /dev/null; then
  cuobjdump --dump-resource-usage .device/ff/gdn_bench 2>/dev/null | grep -E "REG|Function" | paste - - |
    grep -E "Decode" | sed 's/Resource usage://' | cut -c1-240 > "$R/ff_resources.txt"
fi
tar czf "$OUT/run35.tgz" -C "$OUT" r
stamp done
