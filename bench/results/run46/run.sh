# Run 46 (2026-12-04, eleventh session): one device call (run tool, nvidia-h200, carry [".device"]).
# Packed here: main = b72cf59 (tools/device_pack.sh --gzip --into main //bench:gdn_bench), dots and rows
# = b72cf59 + dots.patch / rows.patch (tools/device_pack.sh --gzip --into NAME //bench:gdn_bench
# //gdn:decode_test). The call ran these steps inline; ab_on_device.sh --tests runs the same.
OUT=$OUT/r bash bench/ab_on_device.sh --tests dots --passes 3 main dots rows
