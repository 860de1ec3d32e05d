# Run 55 (2026-12-04, twelfth session): one device call (run tool, nvidia-h200, carry [".device"]).
# Packed here: head = 80f4308 (tools/device_pack.sh --gzip --into head //bench:gdn_bench), dots = head +
# dots.patch (tools/device_pack.sh --gzip --into dots //bench:gdn_bench //gdn:decode_test).
OUT=$OUT bash bench/ab_on_device.sh --tests dots --passes 3 head dots
