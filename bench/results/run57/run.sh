# Run 57 (2026-12-04, twelfth session): one device call (run tool, nvidia-h200, carry [".device"]),
# the binaries of run 56 (commit 6855582) still packed in .device.
bash bench/run_gdn_on_device.sh 2>&1 | tail -18
