#!/bin/bash
# Thirty-fourth session, fourth call: foldu4 (foldu4.patch here, on eb26f16:
# the 8-row tile's register fold of a flush takes its staged entries four at
# a time, the group's loads and weight shuffles before its products) against
# bin (eb26f16's build): `gdn_bench --no-micro --flush-cost` of both
# three times in turn, then foldu4's decode_test; on an H200 the documented
# run instead (h200_call.sh, foldu4 in its A/B). Carry [".device"] with
# `bash bench/results/pending/carry.sh foldu4`.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/run108_out}"
mkdir -p "$OUT"
t0=$SECONDS
echo "[call4 0 s] card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
if [[ "$gpu" == *H200* ]]; then
  # An H200: the documented run on HEAD first (the record), then foldu4.
  OUT="$OUT" bash bench/results/pending/h200_call.sh --tests foldu4 --limit "${LIMIT:-420}" bin foldu4
  exit $?
fi
bash bench/unpack_device.sh || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
OUT="$OUT" bash bench/results/pending/flush_cost_rounds.sh call4 3 "B=1 tile auto \\|B=1 tile bv8 " fc4.tgz bin foldu4
timeout 300 .device/foldu4/decode_test > "$OUT/decode_test_foldu4.log" 2>&1
echo "[call4 $((SECONDS - t0)) s] foldu4 decode_test rc=$?"
tail -3 "$OUT/decode_test_foldu4.log"
