# Run 47 (2026-12-04, eleventh session): one device call (run tool, nvidia-h200, carry [".device"]),
# binaries packed here with tools/device_pack.sh --gzip at commit 23de99f (the shipped code: on the
# fused route the coefficient dots and the flush fold read staged ring entries from shared memory).
D=$OUT; OUT=/tmp/doc bash bench/run_gdn_on_device.sh 2>&1 | tail -75; tar czf $D/doc.tgz -C /tmp doc
