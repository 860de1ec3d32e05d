# Run 42 (2026-12-04, eleventh session): one device call (run tool, nvidia-h200, carry [".device"]).
# Packed here: bin = 7ee7644 + per_row_groups.patch (tools/device_pack.sh --gzip: the GDN tests and
# gdn_bench), main = 7ee7644 (from a worktree: tools/device_pack.sh --gzip --into main //bench:gdn_bench).
# The call ran these steps inline; ab_on_device.sh --tests (added later the same day) runs the same.
OUT=$OUT/r bash bench/ab_on_device.sh --tests bin --passes 3 main bin
export LD_LIBRARY_PATH=$PWD/.device/lib
for prof in 16/8 32/1; do
  ncu --set full -k regex:GdnDecodeKernel .device/bin/gdn_bench --profile=$prof > $OUT/r/ncu_${prof/\//_}.txt 2>&1
done
cuobjdump -sass .device/bin/gdn_bench | awk '/Function : .*ILi4ELi2ELi6EEELNS1_10DecodeModeE1EfLb1E/{p=1;print;next} p&&/Function : /{p=0} p' \
  | gzip > $OUT/r/sass_fused_bv32_staged.txt.gz
