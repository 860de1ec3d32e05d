# Run 52 (2026-12-04, twelfth session): one device call (run tool, nvidia-h200, carry [".device"]).
# Packed here: main and addr as in run 50; pre = main + pre.patch + gdn/fast_div.h (tools/device_pack.sh
# --gzip --into pre //bench:gdn_bench //gdn:decode_test).
OUT=$OUT bash bench/ab_on_device.sh --tests pre --passes 3 main addr pre
cuobjdump -sass .device/pre/gdn_bench | awk '/Function : .*ILi4ELi2ELi6EEELNS1_10DecodeModeE1EfLb1E/{p=1;print;next} p&&/Function : /{p=0} p' | gzip > $OUT/cuob_pre.txt.gz
