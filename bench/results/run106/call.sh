#!/bin/bash
# Thirty-second session, run 106: an H100 came again (naming nvidia-h200;
# a --h200-only call on it had stopped at once), and 394 s of device time
# were left, too little to wait for an H200 through another failed start.
# So the same warm H100 ran HEAD's documented run whole (--any-card):
# bench/run_gdn_on_device.sh on e572fe8's build (bin: b22352b's kernels).
# 191 s. Carry [".device"] with `bash bench/results/pending/carry.sh`
# (bin and lib, 48.3 MiB).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
bash bench/results/pending/h200_call.sh --any-card --limit 340
