# Run 43 (2026-12-04, eleventh session): one device call (run tool, nvidia-h200, carry [".device"]).
# Packed here: bin = 7ee7644 + smem_ring_reads.patch (tools/device_pack.sh --gzip), main = 7ee7644 (a worktree:
# tools/device_pack.sh --gzip --into main //bench:gdn_bench). The call ran these steps inline;
# ab_on_device.sh --tests (added later the same day) runs the same.
OUT=$OUT/r bash bench/ab_on_device.sh --tests bin --passes 3 main bin
