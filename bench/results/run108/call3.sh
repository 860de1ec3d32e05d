#!/bin/bash
# Thirty-fourth session, third call: rowearly3 (rowearly3.patch here:
# rowearly, its unrolled passes' loads and dots unconditional and only their
# reductions skipped at n = 0) against rowearly and hbase: `gdn_bench
# --no-micro --flush-cost` of the three builds three times in turn, then
# rowearly3's decode_test. Carry [".device"] with
# `bash bench/results/pending/carry.sh hbase rowearly rowearly3` (bin parked
# by hand).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/run108_out}"
mkdir -p "$OUT"
t0=$SECONDS
echo "[call3 0 s] card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
bash bench/unpack_device.sh || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
OUT="$OUT" bash bench/results/pending/flush_cost_rounds.sh call3 3 "B=1 tile auto " fc3.tgz hbase rowearly rowearly3
timeout 300 .device/rowearly3/decode_test > "$OUT/decode_test_rowearly3.log" 2>&1
echo "[call3 $((SECONDS - t0)) s] rowearly3 decode_test rc=$?"
tail -3 "$OUT/decode_test_rowearly3.log"
