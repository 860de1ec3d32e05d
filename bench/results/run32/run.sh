#!/bin/bash
# Run 32: the documented command on the candidate (.device/bin = wt_p2t: transposed fold
# coefficients + L1 prefetch of the flush's k rows), then A/B of main (.device/base),
# wt_tcoef (.device/t) and wt_p2t (.device/bin), then racecheck on the precomputed route.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
OUT="${OUT:-/tmp/out}"; R=/tmp/r32; mkdir -p "$OUT" $R/rec
OUT=$R/rec bash bench/run_gdn_on_device.sh > $R/rec/summary.txt 2>&1; echo "record rc=$?"; grep -E "tests:|^\[.*tests done" $R/rec/summary.txt
B() { local name=$1; shift; local s=$SECONDS; timeout 60 "$@" --no-micro --replay-only > "$R/$name.log" 2>&1; echo "$name rc=$? $((SECONDS-s))s"; }
for i in 1 2 3; do
  B base$i .device/base/gdn_bench
  B t$i .device/t/gdn_bench
  B p2t$i .device/bin/gdn_bench
done
timeout 120 compute-sanitizer --tool racecheck .device/bin/decode_test --gtest_filter='*PrecomputedCoefficientsEqualRecurrent*' > $R/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $R/racecheck.log | head -3
for i in 1 2 3; do for v in base t p2t; do echo "== $v$i"; grep -h "^REPLAY" $R/$v$i.log | awk '$3 ~ /B=(128|256|512|1024|8)$/ {print $2,$3,$5,$8,$9,$10,$11,$14}'; done; done
tar czf "$OUT/r32.tgz" -C /tmp r32
