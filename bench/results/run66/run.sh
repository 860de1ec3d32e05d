# Run 66: the documented command on aa5eae3 (rm -rf .device && tools/device_pack.sh --gzip).
bash bench/run_gdn_on_device.sh > $OUT/run66.txt 2>&1
