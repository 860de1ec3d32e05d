# Run 73: the documented command on 67fcaaf, the final commit of the session (rm -rf .device && tools/device_pack.sh --gzip).
bash bench/run_gdn_on_device.sh > $OUT/run73.txt 2>&1
