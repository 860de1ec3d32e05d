# Run 50 (2026-12-04, twelfth session): one device call (run tool, nvidia-h200, carry [".device"]).
# Packed here: main = 9ae97cf from a worktree (tools/device_pack.sh --gzip --into main //bench:gdn_bench
# //gdn:decode_test), addr and rawqk = main + addr.patch / rawqk.patch + gdn/fast_div.h (and its BUILD
# target), each tools/device_pack.sh --gzip --into NAME //bench:gdn_bench //gdn:decode_test.
OUT=$OUT bash bench/ab_on_device.sh --tests rawqk --passes 3 main addr rawqk
