# Run 59: head = e0a9424, ov = DecodeOverlap with kLaunch at <= 32 pairs (old tiles), then the --overlap sweep.
OUT=$OUT bash bench/ab_on_device.sh --tests ov --passes 3 head ov
export LD_LIBRARY_PATH=$PWD/.device/lib; timeout 200 .device/ov/gdn_bench --overlap > $OUT/overlap.log 2>&1
