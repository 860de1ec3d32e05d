#!/bin/bash
# Run 120 call 4 (forty-sixth session), on any card: on an H200 call 1 (the
# documented run under the new rotation, then --cold-rings) with LIMIT less
# 100 s, then call 3 (--flush-cost with each variant's cycle, --layer); on
# any other card call 3 alone (~60 s on an H100).
# Here, before: tools/device_pack.sh --gzip && bash bench/results/pending/carry.sh
# then the run tool (carry [".device"], timeout LIMIT + 30, LIMIT default
# 560) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
limit=${LIMIT:-560}
rc=0
if [[ "$gpu" == *H200* ]]; then
  LIMIT=$((limit - 100)) bash bench/results/run120/call1.sh || rc=1
fi
bash bench/results/run120/call3.sh || rc=1
exit $rc
