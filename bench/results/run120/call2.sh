#!/bin/bash
# Run 120 call 2 (forty-sixth session): call 1's H200 half only, for a session
# whose device time is short. On an H200 the documented run on HEAD (the
# record's call under the new slot-set rotation), then `gdn_bench --no-micro
# --cold-rings`; on any other card it stops at once (exit 3), since run 120
# call 1 already ran the sweep and the COLDRINGS lines on an H100.
# Here, before: tools/device_pack.sh --gzip && bash bench/results/pending/carry.sh
# then the run tool (carry [".device"], timeout LIMIT + 30) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
if [[ "$gpu" != *H200* ]]; then
  echo "card: $gpu: not an H200, nothing run"
  exit 3
fi
exec bash bench/results/run120/call1.sh
