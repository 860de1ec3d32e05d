# Run 56 (2026-12-04, twelfth session): one device call (run tool, nvidia-h200, carry [".device"]),
# binaries packed here with tools/device_pack.sh --gzip at commit 6855582 (the shipped code).
bash bench/run_gdn_on_device.sh 2>&1 | tail -20
