#!/bin/bash
# Twenty-eighth session's fifth call, on the last ~340 s of device time: on
# an H200 the documented run on HEAD (the record, with the clock samples);
# on any other card nothing (it costs only the start).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  bash bench/run_gdn_on_device.sh > /tmp/run.log 2>&1
  grep -E "^\[|tests:" /tmp/run.log
  sed -n '/^== GDN decode/,$p' /tmp/run.log | head -20
  sed -n '/samples: SM clock/,$p' /tmp/run.log | head -18
fi
