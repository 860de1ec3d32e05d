#!/bin/bash
# Twenty-eighth session's first call: the documented run on HEAD (c1edab6:
# mmailp, coefpdl, smemcap on run 85's kernels). On an H200 it is the record;
# on an H100 it is HEAD's first documented run on any card.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
bash bench/run_gdn_on_device.sh 2>&1 | tail -45
