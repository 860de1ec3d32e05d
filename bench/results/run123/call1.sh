#!/bin/bash
# Run 123 call 1 (forty-seventh session), on any card.
#   H200: the documented run on HEAD under the slot-set rotation over state and
#         rings (the record's call), then `gdn_bench --no-micro --cold-rings`
#         (run 120 call 1's H200 branch).
#   other cards: the decode table at B = 64-256 in steps of 32 under that
#         rotation (batches_table.sh, ~60 s): does the ReplaySSM steps' step in
#         cost per row near 2048 pairs (runs 115 and 118, state-only rotation)
#         survive with the rings cold too? If it was the rings leaving L2, the
#         16/16 non-flush line is now straight through B = 128.
# Here, before: tools/device_pack.sh --gzip && bash bench/results/pending/carry.sh
# then the run tool (carry [".device"], timeout LIMIT + 30, LIMIT default
# 540) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
if [[ "$gpu" == *H200* ]]; then
  LIMIT=${LIMIT:-540} exec bash bench/results/run120/call1.sh
fi
source bench/results/pending/call_env.sh || exit 2
OUT="$out" bash bench/results/pending/batches_table.sh 100
rc=$?
echo "== done rc=$rc ($((SECONDS - t0)) s)"
exit $rc
