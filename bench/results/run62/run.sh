# Run 62: head = e0a9424, new = 3c96945 (tools/device_pack.sh --gzip --into NAME //bench:gdn_bench).
OUT=$OUT bash bench/ab_on_device.sh --passes 3 head new
