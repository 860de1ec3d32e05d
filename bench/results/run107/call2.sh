#!/bin/bash
# Thirty-third session, second call: does a flush's tensor-core fold pay a
# fixed start-up cost? b1diag's GDN_DIAG 0 / 32 (one mma of zeros issued
# with the tile's copies) / 16 (no fold), then tcwarm (tcwarm.patch here:
# that mma in the shipped kernels) against bin by --flush-cost, and, if
# tcwarm's 16/32 B = 1 flush at n = 1 is >= 0.15 us shorter than bin's,
# tcwarm's decode_test and a two-pass A/B of bin and tcwarm.
# Carry [".device"] with `bash bench/results/pending/carry.sh b1diag tcwarm`.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/run107_out}"
mkdir -p "$OUT"
t0=$SECONDS
echo "[call2 0 s] card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
bash bench/unpack_device.sh || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
for d in 0 32 16; do
  GDN_DIAG=$d timeout 60 .device/b1diag/gdn_bench --no-micro --flush-cost \
    > "$OUT/diag_$d.log" 2>&1
  echo "[call2 $((SECONDS - t0)) s] b1diag GDN_DIAG=$d rc=$?"
  grep "FLUSHCOST" "$OUT/diag_$d.log" | grep -v "unstaged\|ringfirst\|tilefirst"
done
for b in bin tcwarm; do
  timeout 60 .device/$b/gdn_bench --no-micro --flush-cost > "$OUT/fc_$b.log" 2>&1
  echo "[call2 $((SECONDS - t0)) s] $b rc=$?"
  grep "FLUSHCOST" "$OUT/fc_$b.log"
done
f1() { grep "FLUSHCOST HV=32 B=1 tile auto packed" "$1" | sed 's/.*| flush n0 [0-9.]* n1 \([0-9.]*\).*/\1/'; }
a=$(f1 "$OUT/fc_bin.log"); b=$(f1 "$OUT/fc_tcwarm.log")
echo "[call2 $((SECONDS - t0)) s] 16/32 B=1 flush n1: bin $a, tcwarm $b"
tar czf "$OUT/fc.tgz" -C "$OUT" $(cd "$OUT" && ls diag_*.log fc_*.log) && rm -f "$OUT"/diag_*.log "$OUT"/fc_*.log
if awk -v a="$a" -v b="$b" 'BEGIN { exit !(a != "" && b != "" && b < a - 0.15) }'; then
  OUT="$OUT" bash bench/ab_on_device.sh --tests tcwarm --passes ${PASSES:-2} bin tcwarm > "$OUT/ab_run.log" 2>&1
  echo "[call2 $((SECONDS - t0)) s] A/B rc=$?"
  rm -rf "$OUT/ab"
  tail -45 "$OUT/ab_run.log"
else
  echo "[call2] no A/B: tcwarm's flush is not 0.15 us shorter"
fi
