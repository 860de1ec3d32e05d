#!/bin/bash
# Twenty-seventh session's last device call: on an H200 the documented run
# (the record on HEAD); on any other card the large-batch non-flush step under
# ncu (gdn_bench --profile=HV/128: packed, non-flush at cursors 0/1/7, flush),
# to see what holds it at 88-91 % of its bare read pattern (run 93).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/s27b_out}"; mkdir -p "$OUT"
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  OUT="$OUT" bash bench/run_gdn_on_device.sh 2>&1 | tail -45
  exit 0
fi
bash bench/unpack_device.sh || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
D="$OUT/ncu128"; mkdir -p "$D"
for p in 32 16; do
  timeout 150 ncu --set full -k regex:GdnDecodeKernel -c 7 -o "$D/ncu_${p}_128" \
    .device/bin/gdn_bench --profile=$p/128 > "$D/ncu_${p}_128.log" 2>&1
  echo "ncu $p rc=$?"
  ncu -i "$D/ncu_${p}_128.ncu-rep" --page details > "$D/ncu_${p}_128.txt" 2>/dev/null
  ncu -i "$D/ncu_${p}_128.ncu-rep" --page raw --csv > "$D/ncu_${p}_128_raw.csv" 2>/dev/null
  rm -f "$D/ncu_${p}_128.ncu-rep"
done
(cd "$OUT" && tar czf ncu128.tgz ncu128 && rm -rf ncu128)
