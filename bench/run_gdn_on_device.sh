#!/bin/bash
# One complete GDN pass on the GPU machine: all GDN kernel tests, then the full
# benchmark, then a compute-sanitizer pass over the smaller GPU tests. Logs
# and JSON go to $OUT (at most 8 files come back); a summary table is printed
# last. Prepare the binaries here first with tools/device_pack.sh, then call
# the device `run` tool with carry [".device"] and the command
#   bash bench/run_gdn_on_device.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/gdn_out}"
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
B=.device/bin

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv
} > "$OUT/gpu.txt" 2>&1

status=""
: > "$OUT/tests.log"
# Time limits keep one pass well inside the 10-minute call (expected: tests
# ~1-2 min, benchmark well under 1 min, sanitizer ~1-2 min).
for t in reference_test:30 decode_test:180 conv_test:40 prefill_test:60; do
  limit="${t#*:}"
  t="${t%%:*}"
  echo "===== $t" >> "$OUT/tests.log"
  timeout "$limit" "$B/$t" >> "$OUT/tests.log" 2>&1
  rc=$?
  status="$status $t=$([ $rc -eq 0 ] && echo PASS || echo "FAIL($rc)")"
done
grep -E "^\[  (FAILED|PASSED) |replay HV|prefill HV|Failure" "$OUT/tests.log" | head -60

timeout 240 "$B/gdn_bench" --json="$OUT/gdn_bench.json" > "$OUT/gdn_bench.log" 2>&1
brc=$?

if command -v compute-sanitizer > /dev/null; then
  {
    timeout 40 compute-sanitizer --tool memcheck "$B/conv_test"
    timeout 40 compute-sanitizer --tool memcheck "$B/prefill_test" \
      --gtest_filter='*SixteenValueHeads*'
    timeout 90 compute-sanitizer --tool memcheck "$B/decode_test" \
      --gtest_filter='*DtypesAndLargerOddBatch*:*LongRing*'
  } > "$OUT/sanitizer.log" 2>&1
  grep -E "ERROR SUMMARY|Invalid|PASSED|FAILED" "$OUT/sanitizer.log" | head -20
fi

echo "tests:$status  bench rc=$brc"
sed -n '/^== GDN decode/,$p' "$OUT/gdn_bench.log"
tail -8 "$OUT/gdn_bench.log" | grep -E "prefill|conv" || true
