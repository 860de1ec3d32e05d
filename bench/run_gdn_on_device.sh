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
    timeout 60 compute-sanitizer --tool racecheck "$B/decode_test" \
      --gtest_filter='*LongRing*'
  } > "$OUT/sanitizer.log" 2>&1
  grep -E "ERROR SUMMARY|Invalid|PASSED|FAILED" "$OUT/sanitizer.log" | head -20
fi

# SASS of the packed bv32 and replay bv32 kernels: 16-byte loads, their order.
if command -v cuobjdump > /dev/null; then
  for k in 'DecodeModeE0EfEE' 'DecodeModeE1EfEE'; do
    f="$(cuobjdump --list-elf "$B/gdn_bench" > /dev/null 2>&1; cuobjdump --dump-resource-usage "$B/gdn_bench" 2>/dev/null | grep -o "_ZN7rollout3gdn8internal15GdnDecodeKernelINS1_4TileILi8ELi2ELi4EEELNS1_10${k}vNS1_10DecodeArgsE" | head -1)"
    [ -n "$f" ] && cuobjdump --dump-sass --function "$f" "$B/gdn_bench" 2>/dev/null |
      grep -E "LDG|STG|SHFL|BAR|LDS|STS|EXIT|BRA" | sed 's/ *\/\*[^*]*\*\/ *$//'
  done > "$OUT/sass.txt" 2>&1
  cuobjdump --dump-resource-usage "$B/gdn_bench" 2>/dev/null | grep -E "REG|Function" | paste - - | sed 's/Resource usage://' | cut -c1-220 >> "$OUT/sass.txt"
fi

echo "tests:$status  bench rc=$brc"
sed -n '/^== GDN decode/,$p' "$OUT/gdn_bench.log"
tail -8 "$OUT/gdn_bench.log" | grep -E "prefill|conv" || true
