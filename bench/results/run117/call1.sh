#!/bin/bash
# Run 117 call 1 (prepared in the forty-second session as run 116's; run 116
# became the forty-third session's pf A/B on an H100). H200 only (any other card: exit 3 at
# once; run 115 did an H100's share): first the decode table at B = 64-256 in
# steps of 32 (gdn_bench --batches, ~40 s): on the H200, are the ReplaySSM
# steps' fixed costs per step (docs/benchmarks/gdn_history.md, "Forty-first
# session") a constant, wave quantisation, or a change of slope as on the
# H100 (run 115)? Then the documented run on HEAD (~240 s: the record), with
# no A/B (the session's device time allows none). Here, before:
#   tools/device_pack.sh --gzip                       # bin (HEAD)
#   bash bench/results/pending/carry.sh               # bin and lib
# then the run tool (carry [".device"], kind nvidia-h200, timeout 420) runs
# this file. LIMIT (default 360 s) bounds the call: with less than 260 s of it
# left after the table, no documented run (LIMIT=60: the table alone).
cd "$(dirname "$0")/../../.." || exit 2
out=${OUT:-/tmp}
t0=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
echo "card: $gpu"
[[ "$gpu" == *H200* ]] || exit 3
bash bench/unpack_device.sh > /dev/null 2>&1 || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
rc=0
OUT="$out" bash bench/results/pending/batches_table.sh 90 || rc=1
left=$((${LIMIT:-360} - (SECONDS - t0)))
if [ $left -lt 260 ]; then  # the documented run takes ~240 s
  echo "== $left s of LIMIT left: no documented run"
  exit $rc
fi
OUT="$out" bash bench/results/pending/h200_call.sh --h200-only --limit "$left" \
  bin || rc=1
exit $rc
