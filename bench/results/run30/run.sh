#!/bin/bash
# Run 30: A/B of main (.device/base), the record-load hoist (.device/rch, wt_rechoist) and the
# split-tile warp-local flush (.device/bin, wt_warpsplit). Tests, racecheck, synccheck, memcheck on
# the split build.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
OUT="${OUT:-/tmp/out}"; R=/tmp/r30; mkdir -p "$OUT" $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/gpu.txt 2>&1
timeout 150 .device/bin/decode_test > $R/ws_tests.log 2>&1; echo "ws decode_test rc=$?"
B() { local name=$1; shift; local s=$SECONDS; timeout 60 "$@" --no-micro --replay-only > "$R/$name.log" 2>&1; echo "$name rc=$? $((SECONDS-s))s"; }
for i in 1 2 3; do
  B base$i .device/base/gdn_bench
  B rch$i .device/rch/gdn_bench
  B ws$i .device/bin/gdn_bench
done
F='*PrecomputedCoefficientsEqualRecurrent*'
timeout 150 compute-sanitizer --tool racecheck .device/bin/decode_test --gtest_filter="$F" > $R/racecheck.log 2>&1
timeout 90 compute-sanitizer --tool synccheck .device/bin/decode_test --gtest_filter="$F" > $R/synccheck.log 2>&1
timeout 90 compute-sanitizer --tool memcheck .device/bin/decode_test --gtest_filter="$F:*PrecomputedCoefficientsEveryTile*" > $R/memcheck.log 2>&1
tar czf "$OUT/r30.tgz" -C /tmp r30
