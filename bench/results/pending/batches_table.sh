#!/bin/bash
# On the GPU machine, from a device call (bench/results/run1*/call*.sh), after
# bench/unpack_device.sh and with .device/lib on LD_LIBRARY_PATH: the decode
# table at B = 64-256 in steps of 32 (gdn_bench --batches; 77 s on an H100 in
# run 123, since the sets rotate the rings too), to tell a fixed cost per step
# from wave quantisation (docs/benchmarks/gdn_history.md, "Forty-first
# session", "Run 123"). Writes $OUT/batches.log and batches.json, prints the
# table and its FIT lines; exits 1 when gdn_bench fails or runs past
# TIMEOUT_S.
#   bash bench/results/pending/batches_table.sh TIMEOUT_S
cd "$(dirname "$0")/../../.." || exit 2
out=${OUT:-/tmp}
t0=$SECONDS
timeout "${1:?usage: batches_table.sh TIMEOUT_S}" .device/bin/gdn_bench \
  --no-micro --batches=64,96,128,160,192,224,256 \
  --json="$out/batches.json" > "$out/batches.log" 2>&1
brc=$?
echo "== gdn_bench --batches rc=$brc ($((SECONDS - t0)) s)"
sed -n '/^== GDN decode/,$p' "$out/batches.log" | grep -v '^FIT' | cut -c1-120 |
  head -20
grep '^FIT' "$out/batches.log"
[ $brc -eq 0 ]
