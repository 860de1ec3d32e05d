#!/bin/bash
# Run 111 call 1 (thirty-eighth session, H100): run 110's call 4 (HEAD's
# narrow-memory packed rule as kAuto: the decode tests of the tables and the
# packed kernel, --tile-table, --layer) and narrowpdl
# (bench/results/pending/narrowpdl.patch) beside it: its decode tests, then
# --tile-table of bin and narrowpdl in turn, twice (ABAB, so that neither build
# always runs first). Here, before:
#   tools/device_pack.sh --gzip
#   git apply bench/results/pending/narrowpdl.patch
#   tools/device_pack.sh --gzip --into narrowpdl //bench:gdn_bench //gdn:decode_test
#   git checkout gdn/ bench/
#   bash bench/results/pending/carry.sh narrowpdl        # 62.1 MB
# then the run tool (carry [".device"], kind nvidia-h100-x1, timeout 480)
# runs this file; its output lands in $OUT.
cd "$(dirname "$0")/../../.." || exit 2
bash bench/unpack_device.sh > /dev/null 2>&1 || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
out=${OUT:-/tmp}
start=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.memory --format=csv,noheader
for b in bin narrowpdl; do
  timeout 120 .device/$b/decode_test \
    --gtest_filter='DecodeParams*:PackedDecodeTest.*' > "$out/decode_test_$b.log" 2>&1
  echo "decode_test $b: $(grep -E '^\[  (PASSED|FAILED)' "$out/decode_test_$b.log" | tr '\n' ' ')"
  grep -E '^\[  FAILED' "$out/decode_test_$b.log"
done
for pass in 1 2; do
  for b in bin narrowpdl; do
    timeout 150 .device/$b/gdn_bench --no-micro --tile-table > "$out/tile_table_${b}_$pass.log" 2>&1
    echo "== $b pass $pass ($((SECONDS - start)) s)"
    grep -E '^device|TILETABLE packed' "$out/tile_table_${b}_$pass.log"
  done
done
timeout 120 .device/bin/gdn_bench --no-micro --layer > "$out/layer.log" 2>&1
grep -E '^LAYER' "$out/layer.log"
echo "done in $((SECONDS - start)) s"
