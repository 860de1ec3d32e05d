#!/bin/bash
# Run 112 call 1 (thirty-ninth session): bin (HEAD, 6f8ee79) against bulk
# (the two-warp tiles' tile-first copy order as one bulk copy on an
# mbarrier: bench/results/run112/bulk.patch). On an H200 the documented run
# on HEAD first (the record), then the A/B; on another card bulk's
# decode_test, both builds' --flush-cost lines and the A/B. Here, before:
#   tools/device_pack.sh --gzip                       # bin (HEAD)
#   git apply bench/results/run112/bulk.patch
#   tools/device_pack.sh --gzip --into bulk //bench:gdn_bench //gdn:decode_test
#   git apply -R bench/results/run112/bulk.patch
#   bash bench/results/pending/carry.sh bulk          # 62.4 MB
# then the run tool (carry [".device"], timeout 600) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
NEW_TESTS="lifecycle_test" FLUSH_BUILDS="bin bulk" H200_ONLY="" \
  exec bash bench/results/pending/h200_call.sh --tests bulk --limit "${LIMIT:-575}" bin bulk
