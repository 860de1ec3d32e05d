#!/bin/bash
# Thirty-third session: where the batch-1 ReplaySSM step's ring cost goes.
# On an H200 first the documented run on HEAD (h200_call.sh, no A/B builds);
# on any card then `gdn_bench --no-micro --flush-cost` of the diagnostic
# build b1diag (b1diag.patch here: GDN_DIAG bits drop parts of the fused
# route's ring work; wrong results, timings only) for each GDN_DIAG value.
# Carry [".device"] with `bash bench/results/pending/carry.sh b1diag`.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/run107_out}"
mkdir -p "$OUT"
t0=$SECONDS
LIMIT=${LIMIT:-400}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
echo "[run107 0 s] card: $gpu"
if [[ "$gpu" == *H200* ]]; then
  OUT="$OUT" bash bench/results/pending/h200_call.sh --limit 300
fi
bash bench/unpack_device.sh || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
for d in ${DIAGS:-0 4 2 1 8 7 16 19}; do
  left=$((LIMIT - (SECONDS - t0)))
  if [ $left -lt 40 ]; then
    echo "[run107 $((SECONDS - t0)) s] $left s left: GDN_DIAG=$d and later not run"
    break
  fi
  GDN_DIAG=$d timeout $((left - 5)) .device/b1diag/gdn_bench --no-micro \
    --flush-cost > "$OUT/diag_$d.log" 2>&1
  echo "[run107 $((SECONDS - t0)) s] GDN_DIAG=$d rc=$?"
  grep FLUSHCOST "$OUT/diag_$d.log" | grep -v "unstaged\|ringfirst\|tilefirst"
done
tar czf "$OUT/diag.tgz" -C "$OUT" $(cd "$OUT" && ls diag_*.log) && rm -f "$OUT"/diag_*.log
