#!/bin/bash
# Twenty-seventh session's device call: on an H200 the documented run first;
# on any card the prepared diagnostics (pending README): the ceilings, the
# memory-pattern pass (its _ring7 lines), the nfdiag build's four modes and the
# batch-1 ncu profiles by ring fill. Logs to $OUT (tarred past eight files).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/s27_out}"; mkdir -p "$OUT"
T0=$(date +%s); stamp() { echo "[$(($(date +%s) - T0)) s] $*"; }
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
bash bench/unpack_device.sh || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
B=.device/bin
D="$OUT/diag"; mkdir -p "$D"
if echo "$G" | grep -q H200; then
  OUT="$OUT" bash bench/run_gdn_on_device.sh 2>&1 | tail -45
  stamp "documented run done"
else
  timeout 60 $B/gdn_bench --ceilings > "$D/ceilings.log" 2>&1; stamp "ceilings rc=$?"
  timeout 200 $B/gdn_bench --micro > "$D/micro.log" 2>&1; stamp "micro rc=$?"
fi
for d in 0 1 2 3; do
  GDN_DIAG=$d timeout 90 .device/nfdiag/gdn_bench --no-micro --replay-only > "$D/nfdiag_$d.log" 2>&1
  stamp "nfdiag $d rc=$?"
done
if [ "${S27_NCU:-1}" = 1 ]; then
  for p in 32 16; do
    timeout 120 ncu --set full -k regex:GdnDecodeKernel -c 12 -o "$D/ncu_${p}_1" \
      $B/gdn_bench --profile=$p/1 > "$D/ncu_${p}_1.log" 2>&1
    stamp "ncu $p rc=$?"
    ncu -i "$D/ncu_${p}_1.ncu-rep" --page source --print-source sass --csv > "$D/ncu_${p}_1_sass.csv" 2>/dev/null
    ncu -i "$D/ncu_${p}_1.ncu-rep" --page details > "$D/ncu_${p}_1.txt" 2>/dev/null
    rm -f "$D/ncu_${p}_1.ncu-rep"
  done
fi
for d in 0 1 2 3; do echo "== nfdiag $d"; grep -E '^REPLAY' "$D/nfdiag_$d.log" | cut -c1-110; done
head -4 "$D/ceilings.log" 2>/dev/null
grep -hE 'ring7|^read_slots_(1m|2m)_b(256|1024) ' "$D/micro.log" "$OUT/gdn_bench.log" 2>/dev/null
(cd "$OUT" && tar czf diag.tgz diag && rm -rf diag)
stamp done
