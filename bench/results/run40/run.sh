# Run 40 (2026-12-03, tenth session): one device call (run tool, nvidia-h200, carry [".device"]),
# binaries packed here: tools/device_pack.sh --gzip (bin = commit 26d8a67, the shipped code; v1 = f4059f0 from a worktree, --into v1; the bf16 k rows with
# scales) and, from a worktree of c182555, tools/device_pack.sh --gzip --into main //bench:gdn_bench.
D=$OUT; bash bench/unpack_device.sh >/dev/null; export LD_LIBRARY_PATH=$PWD/.device/lib
timeout 200 .device/bin/decode_test > /tmp/dt.log 2>&1; rc=$?; cp /tmp/dt.log $D/; [ $rc -eq 0 ] || exit 1
OUT=/tmp/ab_out bash bench/ab_on_device.sh --passes 3 main v1 bin 2>&1 | tail -45; cp /tmp/ab_out/ab.tgz $D/
OUT=/tmp/doc bash bench/run_gdn_on_device.sh 2>&1 | tail -70; tar czf $D/doc.tgz -C /tmp doc
