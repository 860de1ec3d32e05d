#!/bin/bash
# Twenty-eighth session's third call: the documented run on HEAD with the
# five-timing auto figures and the clock samples (smi.csv, clock_trace.py).
# On an H200 it is the record and says whether the ReplaySSM timings'
# spread there follows the SM clock; on an H100 it checks the new tooling.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
bash bench/run_gdn_on_device.sh > /tmp/run.log 2>&1
grep -E "^\[|tests:" /tmp/run.log
sed -n '/^== GDN decode/,$p' /tmp/run.log | head -20
sed -n '/samples: SM clock/,$p' /tmp/run.log | head -18
