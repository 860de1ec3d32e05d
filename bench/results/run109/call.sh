#!/bin/bash
# Run 109 call 1 (2026-12-06, thirty-fifth session; asked for nvidia-h200, got
# an H100): h200_call.sh's other-card path with bin (HEAD d89258f), nofold
# (HEAD with bench/results/run109/nofold.patch: foldu4 reversed) and n0skip
# (HEAD with bench/results/run109/n0skip.patch). Here, before:
#   tools/device_pack.sh --gzip
#   git apply bench/results/run109/nofold.patch
#   tools/device_pack.sh --gzip --into nofold //bench:gdn_bench
#   git apply -R bench/results/run109/nofold.patch
#   git apply bench/results/run109/n0skip.patch
#   tools/device_pack.sh --gzip --into n0skip //bench:gdn_bench
#   git apply -R bench/results/run109/n0skip.patch
#   bash bench/results/pending/carry.sh nofold n0skip        # 62.0 MB
# then the run tool (carry [".device"], timeout 600) runs this file. (As run,
# the command was this file's last line typed into the run tool.)
cd "$(dirname "$0")/../../.." || exit 2
FLUSH_BUILDS="bin nofold n0skip" exec bash bench/results/pending/h200_call.sh \
  --limit 575 bin nofold n0skip
