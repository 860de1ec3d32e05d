# Run 51 (2026-12-04, twelfth session): one device call (run tool, nvidia-h200, carry [".device"]),
# the builds of run 50 (.device/main, .device/addr).
bash bench/unpack_device.sh; export LD_LIBRARY_PATH=$PWD/.device/lib; mkdir -p $OUT/r
timeout 200 .device/addr/decode_test > $OUT/r/decode_test_addr.log 2>&1
for b in main addr; do
  timeout 120 ncu --section SourceCounters --section LaunchStats --section WarpStateStats --import-source no \
    -k regex:GdnDecodeKernel --launch-skip 2 --launch-count 2 -o /tmp/p_$b .device/$b/gdn_bench --profile=16/8 \
    > $OUT/r/ncu_$b.log 2>&1
  ncu --import /tmp/p_$b.ncu-rep --page source --print-source sass --csv | gzip > $OUT/r/sass_$b.csv.gz
done
