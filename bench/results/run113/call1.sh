#!/bin/bash
# Run 113 call 1 (fortieth session): on an H200, the documented run on HEAD
# (5574a0b: the record), then three A/B passes of bin against noscale (the
# decode kernels keep q, k raw: bench/results/run113/noscale.patch) with
# noscale's decode_test first; on another card the other path of
# h200_call.sh (new tests, --flush-cost lines, the A/B). Here, before:
#   tools/device_pack.sh --gzip                       # bin (HEAD)
#   git apply bench/results/run113/noscale.patch
#   tools/device_pack.sh --gzip --into noscale //bench:gdn_bench //gdn:decode_test
#   git apply -R bench/results/run113/noscale.patch
#   bash bench/results/pending/carry.sh noscale       # 62.4 MB
# then the run tool (carry [".device"], kind nvidia-h200, timeout 600) runs
# this file.
cd "$(dirname "$0")/../../.." || exit 2
NEW_TESTS="lifecycle_test" FLUSH_BUILDS="bin noscale" H200_ONLY="" \
  exec bash bench/results/pending/h200_call.sh --tests noscale --limit "${LIMIT:-575}" bin noscale
