# Run 71: the documented command on 4065032 (rm -rf .device && tools/device_pack.sh --gzip).
bash bench/run_gdn_on_device.sh > $OUT/run71.txt 2>&1
