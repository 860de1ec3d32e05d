#!/bin/bash
# Run 111 call 3 (thirty-eighth session, H100): HEAD with the narrow-memory
# ReplaySSM 32-row tile up to 3072 pairs: the tables' tests, then
# gdn_bench --no-micro --tile-table (kAuto's column at 2560-3584 pairs) and
# --layer (now with 16/32 B = 5 and 16/16 B = 9: the layer pair over the
# packed step's 8-row tiles at 144-160 pairs). Here, before:
#   tools/device_pack.sh --gzip
#   bash bench/results/pending/carry.sh                  # bin and lib: 52.4 MB
# then the run tool (carry [".device"], kind nvidia-h100-x1, timeout 300)
# runs this file; its output lands in $OUT.
cd "$(dirname "$0")/../../.." || exit 2
bash bench/unpack_device.sh > /dev/null 2>&1 || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
out=${OUT:-/tmp}
start=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.memory --format=csv,noheader
timeout 120 .device/bin/decode_test --gtest_filter='DecodeParams*' \
  > "$out/decode_test.log" 2>&1
grep -E '^\[  (PASSED|FAILED)' "$out/decode_test.log"
for pass in 1 2; do
  timeout 150 .device/bin/gdn_bench --no-micro --tile-table \
    > "$out/tile_table_$pass.log" 2>&1
  echo "== tile-table pass $pass ($((SECONDS - start)) s)"
  grep -E '^device|TILETABLE replay' "$out/tile_table_$pass.log"
done
timeout 150 .device/bin/gdn_bench --no-micro --layer > "$out/layer.log" 2>&1
grep -E '^LAYER' "$out/layer.log"
echo "done in $((SECONDS - start)) s"
