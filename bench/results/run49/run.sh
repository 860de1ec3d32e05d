# Run 49 (2026-12-04, eleventh session): one device call (run tool, nvidia-h200, carry [".device"]).
# main = d333a95 (the shipped kernels of 23de99f; tools/device_pack.sh --gzip --into main //bench:gdn_bench),
# g2d = main + grid2d.patch (the fused kernel on a 2-D grid; --into g2d //bench:gdn_bench //gdn:decode_test).
# The replay and parameter tests of g2d, then a 2-pass A/B (the device budget's remainder).
bash bench/unpack_device.sh; export LD_LIBRARY_PATH=$PWD/.device/lib; mkdir -p $OUT/r
timeout 120 .device/g2d/decode_test --gtest_filter='ReplayDecodeTest.*:DecodeParamsTest.*' > $OUT/r/decode_test_g2d.log 2>&1
echo "decode_test rc=$?"; tail -1 $OUT/r/decode_test_g2d.log
OUT=$OUT/r bash bench/ab_on_device.sh --passes 2 main g2d
