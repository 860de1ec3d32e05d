# Run 53 (2026-12-04, twelfth session): one device call (run tool, nvidia-h200, carry [".device"]).
# Packed here: head = 74b3902 (tools/device_pack.sh --gzip --into head //bench:gdn_bench), t8 = head +
# t8.patch (tools/device_pack.sh --gzip --into t8 //bench:gdn_bench //gdn:decode_test).
OUT=$OUT bash bench/ab_on_device.sh --passes 4 head t8
