#!/bin/bash
# Run 110 call 3 (2026-12-06, thirty-seventh session): on HEAD with the
# card-dependent packed L2 policy, the decode tests that pin the tables and
# the packed kernel's reference comparisons, then gdn_bench --tile-table (the
# card-dependent kAuto choices beside their alternatives). Here, before:
#   tools/device_pack.sh --gzip
#   bash bench/results/pending/carry.sh                  # bin and lib: 52.1 MB
# then the run tool (carry [".device"], timeout 540) runs this file; its
# output lands in $OUT/tile_table.log.
cd "$(dirname "$0")/../../.." || exit 2
bash bench/unpack_device.sh > /dev/null 2>&1 || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,clocks.max.memory --format=csv,noheader
timeout 200 .device/bin/decode_test \
  --gtest_filter='DecodeParams*:PackedDecodeTest.StatePolicies:PackedDecodeTest.MatchesReference*' \
  2>&1 | grep -E '^\[  (PASSED|FAILED)|FAILED|OK \] Decode'
timeout 300 .device/bin/gdn_bench --tile-table 2>&1 | tee "${OUT:-/tmp}/tile_table.log"
