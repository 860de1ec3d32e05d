#!/bin/bash
# Twenty-eighth session's fourth call. On an H200: the documented run on
# HEAD (the record, with the clock samples). On any other card: kpf's and
# coef5's decode_test (kpf has not run on a GPU) and their A/B against dbase,
# two passes (the H100 cannot show what they are for: the H200's 16/32
# B = 1024 flush).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  bash bench/run_gdn_on_device.sh > /tmp/run.log 2>&1
  grep -E "^\[|tests:" /tmp/run.log
  sed -n '/^== GDN decode/,$p' /tmp/run.log | head -20
  sed -n '/samples: SM clock/,$p' /tmp/run.log | head -18
else
  bash bench/ab_on_device.sh --tests kpf,coef5 --passes 2 dbase kpf coef5 2>&1 | tail -52
fi
