#!/bin/bash
# Run 115 call 1 (fortieth session): on an H200, the documented run on HEAD
# (d8d294d: run 113's kernels with kAuto's ReplaySSM kLaunch up to 512
# pairs) as the record; on any other card run 114's launch-overlap sweep
# (bench/results/run114/call1.sh: does a narrow-memory card gain from
# kLaunch at 256-512 ReplaySSM pairs too?). Here, before:
#   tools/device_pack.sh --gzip
#   bash bench/results/pending/carry.sh                  # bin and lib: 53.0 MB
# then the run tool (carry [".device"], timeout 400) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
echo "card: $gpu"
if [[ "$gpu" == *H200* ]]; then
  exec bash bench/results/pending/h200_call.sh --h200-only --limit "${LIMIT:-380}"
fi
exec bash bench/results/run114/call1.sh
