#!/bin/bash
# One complete GDN pass on the GPU machine: all GDN kernel tests, PyTorch's
# in-place x *= c (the peers' RMW figure), the full benchmark (memory-pattern
# microbenchmarks + decode sweep), then compute-sanitizer over smaller GPU
# tests. Logs and JSON go to $OUT (at most 8 files come back); a summary is
# printed last. Prepare the binaries here first with tools/device_pack.sh,
# then call the device `run` tool with carry [".device"] and the command
#   bash bench/run_gdn_on_device.sh
# Expected: ~2 minutes (run 26: 128 s).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT="${OUT:-/tmp/gdn_out}"
mkdir -p "$OUT"
bash bench/unpack_device.sh || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
B=.device/bin
T0=$(date +%s)
stamp() { echo "[$(($(date +%s) - T0)) s] $*"; }

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv
} > "$OUT/gpu.txt" 2>&1

status=""
: > "$OUT/tests.log"
run_test() {  # name limit [gtest args]
  local t="$1" limit="$2"
  shift 2
  echo "===== $t $*" >> "$OUT/tests.log"
  timeout "$limit" "$B/$t" "$@" >> "$OUT/tests.log" 2>&1
  local rc=$?
  status="$status $t$([ $# -gt 0 ] && echo '(filtered)')=$([ $rc -eq 0 ] && echo PASS || echo "FAIL($rc)")"
  return $rc
}
run_test decode_test 200
run_test reference_test 30
run_test conv_test 40
run_test layer_decode_test 60
run_test prefill_test 60
run_test lifecycle_test 60
stamp "tests done:$status"
grep -E "^\[  (FAILED|PASSED) |replay HV|Failure|Expected|Which is" "$OUT/tests.log" | head -40

if [ "${GDN_TORCH:-1}" = 1 ]; then
  timeout 60 python3 bench/torch_rmw.py > "$OUT/torch.log" 2>&1
  stamp "torch done"
fi

# The GPU's clocks and power while the benchmark runs (bench/gpu_samples.sh),
# for bench/clock_trace.py.
source bench/gpu_samples.sh
start_gpu_samples "$OUT/smi.csv"
timeout 240 "$B/gdn_bench" --json="$OUT/gdn_bench.json" > "$OUT/gdn_bench.log" 2>&1
brc=$?
stop_gpu_samples
stamp "bench rc=$brc"

if command -v compute-sanitizer > /dev/null; then
  {
    timeout 150 compute-sanitizer --tool memcheck "$B/decode_test" \
      --gtest_filter='*DtypesAndLargerOddBatch*:*LongRing*:*StatePolicies*:*EvictLast*:*PrecomputedCoefficientsEqualRecurrent*'
    timeout 120 compute-sanitizer --tool memcheck "$B/prefill_test" \
      --gtest_filter='*TwoPass*:*Varlen*:*RandomConfigurations*'
    timeout 60 compute-sanitizer --tool memcheck "$B/conv_test" \
      --gtest_filter='*RandomConfigurations*'
    # Every kernel in the order an engine launches them (prefill, the layer
    # pairs, fold, advance).
    timeout 90 compute-sanitizer --tool memcheck "$B/lifecycle_test"
  } > "$OUT/sanitizer.log" 2>&1
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|PASSED|FAILED" "$OUT/sanitizer.log" | head -20
fi
stamp "sanitizer done"

# Resource usage of the decode and prefill kernels (registers, shared memory, spills), and the
# prefill chunk pass's 16-byte shared loads (the substitution's reads of A: NVVM splits them in
# the PTX; this shows whether the SASS has them merged).
if command -v cuobjdump > /dev/null; then
  cuobjdump --dump-resource-usage "$B/gdn_bench" 2>/dev/null | grep -E "REG|Function" | paste - - |
    grep -E "Decode|Prefill" | sed 's/Resource usage://' | cut -c1-240 > "$OUT/sass.txt"
  cuobjdump -sass "$B/gdn_bench" 2>/dev/null | awk '/Function : /{f = /PrefillChunkKernel/} f' |
    grep -oE "LDS(\.[0-9A-Z]+)*" | sort | uniq -c >> "$OUT/sass.txt"
fi

echo "tests:$status  bench rc=$brc"
python3 bench/clock_trace.py "$OUT/gdn_bench.json" "$OUT/smi.csv" 2>&1 | head -20
[ -f "$OUT/torch.log" ] && cat "$OUT/torch.log"
sed -n '/^== memory patterns/,$p' "$OUT/gdn_bench.log"
tail -8 "$OUT/gdn_bench.log" | grep -E "prefill|conv" || true
