#!/bin/bash
# Run 127 call 1 (forty-ninth session), on whichever card comes:
#   H200: run 120 call 1's H200 half (the documented run on HEAD, the record
#         under the rotation of rings and state, then `gdn_bench --no-micro
#         --cold-rings`). cap4 caps only on narrow-memory cards, so on an H200
#         its A/B would time the same kernels twice: it does not run there.
#   other cards: cap4's GPU tests and its A/B against bin
#         (bench/results/pending/h200_call.sh: lifecycle_test, bin's
#         flush-cost lines, then `ab_on_device.sh --tests cap4 bin cap4`).
# Here, before: tools/device_pack.sh --gzip &&
#   bash bench/results/pending/pack.sh decode &&
#   bash bench/results/pending/carry.sh cap4     # 58.1 MB
# then the run tool (carry [".device"], timeout LIMIT + 30; LIMIT default
# 540) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
limit=${LIMIT:-540}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
if [[ "$gpu" == *H200* ]]; then
  LIMIT=$limit exec bash bench/results/run120/call1.sh
fi
exec bash bench/results/pending/h200_call.sh --tests cap4 --limit "$limit" \
  bin cap4
