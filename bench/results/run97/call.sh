#!/bin/bash
# Twenty-seventh session's third call: on an H200 the documented run on HEAD
# (the record); on any other card the A/B of the fused staged tiles' register
# caps (smemcap, coef5: bench/results/pending/decode/).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  bash bench/run_gdn_on_device.sh 2>&1 | tail -45
else
  bash bench/ab_on_device.sh --tests smemcap --passes 3 dbase smemcap coef5 2>&1 | tail -52
fi
