#!/bin/bash
# A/B of gdn_bench builds on the GPU machine, in one device call.
#
# Here, pack each build into its own folder (its checkout or branch first):
#   tools/device_pack.sh --into main //bench:gdn_bench
#   tools/device_pack.sh --into var //bench:gdn_bench
# then through the device run tool (carry [".device"]; at most 64 MiB, ~10-12 MB per build):
#   bash bench/ab_on_device.sh [--prefill] [--tests NAME[,NAME...]] [--passes N] main var ...
# Runs `.device/NAME/gdn_bench --no-micro --replay-only` N times per build (default 3, ~12 s each),
# rotating the order every pass, keeps the logs as $OUT/ab/NAME_pP.log and one tarball $OUT/ab.tgz
# (the run tool returns at most 8 files), and prints bench/ab_summary.py's table: per head shape and
# batch, each build's mean packed step, ReplaySSM cycle, non-flush and flush step, and the change
# against the first build named. --tests NAME first runs .device/NAME/decode_test (packed with it:
# tools/device_pack.sh --into NAME //bench:gdn_bench //gdn:decode_test) into $OUT/ab/decode_test_NAME.log
# (several builds: comma-separated, each in turn); a build that fails is left out of the passes and
# the call exits 1. The GPU's clocks and power are sampled during the passes ($OUT/ab/smi.csv,
# passes.txt: bench/gpu_samples.sh) and each pass's SM clock is printed last (bench/clock_trace.py).
# Run 33 found no order bias between identical builds (0.1 % on the non-flush step); differences
# below ~1 % are within a call's noise at B = 256.
# --prefill: the same for the chunked prefill: `gdn_bench --no-micro --prefill` (both routes, ~5 s),
# and --tests runs .device/NAME/prefill_test (packed with //gdn:prefill_test).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
passes=3
tests=""
mode=--replay-only
test_bin=decode_test
while [ $# -gt 0 ]; do
  case "$1" in
    --passes) passes="${2:?--passes needs a number}"; shift 2 ;;
    --tests) tests="${2:?--tests needs a build name}"; shift 2 ;;
    --prefill) mode=--prefill test_bin=prefill_test; shift ;;
    *) break ;;
  esac
done
if [ $# -lt 1 ]; then
  echo "usage: bash bench/ab_on_device.sh [--prefill] [--tests NAME[,NAME...]] [--passes N] NAME [NAME ...]" >&2
  exit 2
fi
names=("$@")
bash bench/unpack_device.sh || exit 2
for n in "${names[@]}"; do
  if [ ! -x ".device/$n/gdn_bench" ]; then
    echo "ab_on_device: .device/$n/gdn_bench missing (tools/device_pack.sh --into $n)" >&2
    exit 2
  fi
done
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
OUT="${OUT:-/tmp/ab_out}"
mkdir -p "$OUT/ab"
# --tests A,B,...: each named build's test binary in turn. A build whose
# tests fail is left out of the passes (the others are still measured) and
# the call exits 1 at the end.
IFS=',' read -r -a test_builds <<< "$tests"
failed=()
for tb in "${test_builds[@]}"; do
  if [ ! -x ".device/$tb/$test_bin" ]; then
    echo "ab_on_device: .device/$tb/$test_bin missing (tools/device_pack.sh --into $tb ... //gdn:$test_bin)" >&2
    exit 2
  fi
  start=$SECONDS
  timeout 200 ".device/$tb/$test_bin" > "$OUT/ab/${test_bin}_$tb.log" 2>&1
  rc=$?
  echo "$test_bin of $tb: rc=$rc $((SECONDS - start)) s"
  tail -1 "$OUT/ab/${test_bin}_$tb.log"
  if [ $rc -ne 0 ]; then
    grep -E "^\[  FAILED  \]" "$OUT/ab/${test_bin}_$tb.log" | head -5
    echo "ab_on_device: $tb failed its tests: left out of the passes"
    failed+=("$tb")
  fi
done
kept=()
for n in "${names[@]}"; do
  [[ " ${failed[*]} " == *" $n "* ]] || kept+=("$n")
done
if [ ${#kept[@]} -eq 0 ]; then
  echo "ab_on_device: no build left to measure" >&2
  exit 1
fi
names=("${kept[@]}")
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu \
  --format=csv > "$OUT/ab/gpu.txt" 2>&1
# The GPU's clocks and power during the passes (bench/gpu_samples.sh) and
# each pass's start and end (Unix seconds), so that bench/clock_trace.py
# --passes can say whether a build's passes ran at a lower SM clock.
source bench/gpu_samples.sh
start_gpu_samples "$OUT/ab/smi.csv"
: > "$OUT/ab/passes.txt"
k=${#names[@]}
for ((p = 1; p <= passes; p++)); do
  for ((i = 0; i < k; i++)); do
    n="${names[$(((p - 1 + i) % k))]}"
    start=$SECONDS
    t0=$(date +%s.%N)
    timeout 90 ".device/$n/gdn_bench" --no-micro "$mode" > "$OUT/ab/${n}_p$p.log" 2>&1
    rc=$?
    echo "$p $n $t0 $(date +%s.%N)" >> "$OUT/ab/passes.txt"
    echo "pass $p: $n rc=$rc $((SECONDS - start)) s"
  done
done
stop_gpu_samples
tar czf "$OUT/ab.tgz" -C "$OUT" ab
python3 bench/ab_summary.py "$OUT/ab" "${names[@]}"
summary_rc=$?
python3 bench/clock_trace.py --passes "$OUT/ab/passes.txt" "$OUT/ab/smi.csv"
[ ${#failed[@]} -eq 0 ] || { echo "ab_on_device: failed tests: ${failed[*]}"; exit 1; }
exit $summary_rc
