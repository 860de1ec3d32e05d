# Run 61: the documented command on 3c96945 (rm -rf .device && tools/device_pack.sh --gzip here).
bash bench/run_gdn_on_device.sh
