#!/bin/bash
# Thirty-third session, third call: dunroll (dunroll.patch here: the fused
# route's non-flush row loop reads its staged d entries unrolled, as typed
# shared-memory loads) against bin: --flush-cost of both twice in turn, then
# dunroll's decode_test and A/B passes of bin and dunroll with the time left.
# Carry [".device"] with `bash bench/results/pending/carry.sh dunroll`.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/run107_out}"
mkdir -p "$OUT"
t0=$SECONDS
LIMIT=${LIMIT:-250}
echo "[call3 0 s] card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
bash bench/unpack_device.sh || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
for r in 1 2; do
  for b in bin dunroll; do
    timeout 60 .device/$b/gdn_bench --no-micro --flush-cost > "$OUT/fc_${b}_$r.log" 2>&1
    echo "[call3 $((SECONDS - t0)) s] $b rc=$?"
    grep "FLUSHCOST" "$OUT/fc_${b}_$r.log" | grep -v "unstaged\|ringfirst\|tilefirst"
  done
done
tar czf "$OUT/fc3.tgz" -C "$OUT" $(cd "$OUT" && ls fc_*.log) && rm -f "$OUT"/fc_*.log
left=$((LIMIT - (SECONDS - t0) - 110 - 10))
passes=$((left / 56))
[ $passes -gt 3 ] && passes=3
if [ $passes -lt 1 ]; then echo "[call3] $left s left: no A/B"; exit 0; fi
OUT="$OUT" bash bench/ab_on_device.sh --tests dunroll --passes $passes bin dunroll > "$OUT/ab_run.log" 2>&1
echo "[call3 $((SECONDS - t0)) s] A/B ($passes passes) rc=$?"
rm -rf "$OUT/ab"
tail -45 "$OUT/ab_run.log"
