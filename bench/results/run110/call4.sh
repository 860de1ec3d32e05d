#!/bin/bash
# Run 110 call 4 (prepared 2026-12-06 in the thirty-seventh session; not run
# then: its calls were refused; run 111's call 1 ran it, with narrowpdl): on HEAD with the
# narrow-memory packed rule (whole heads at 192-256 (row, value head) pairs)
# and the evict-last rule back as it was, the decode tests of the tables and
# the packed kernel, then gdn_bench --no-micro --tile-table. Here, before:
#   tools/device_pack.sh --gzip
#   bash bench/results/pending/carry.sh                  # bin and lib: 52.1 MB
# then the run tool (carry [".device"], timeout 400) runs this file; its
# output lands in $OUT/decode_test.log, $OUT/tile_table.log and
# $OUT/layer.log.
cd "$(dirname "$0")/../../.." || exit 2
bash bench/unpack_device.sh > /dev/null 2>&1 || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
out=${OUT:-/tmp}
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 .device/bin/decode_test \
  --gtest_filter='DecodeParams*:PackedDecodeTest.*' > "$out/decode_test.log" 2>&1
grep -E '^\[  (PASSED|FAILED)|FAILED' "$out/decode_test.log"
timeout 300 .device/bin/gdn_bench --no-micro --tile-table > "$out/tile_table.log" 2>&1
grep -E '^device|TILETABLE' "$out/tile_table.log"
timeout 200 .device/bin/gdn_bench --no-micro --layer > "$out/layer.log" 2>&1
grep -E '^LAYER' "$out/layer.log"
