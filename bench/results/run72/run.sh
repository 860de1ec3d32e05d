# Run 72: the documented command on 72f53df (rm -rf .device && tools/device_pack.sh --gzip).
bash bench/run_gdn_on_device.sh > $OUT/run72.txt 2>&1
