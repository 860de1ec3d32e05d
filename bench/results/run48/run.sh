# Run 48 (2026-12-04, eleventh session): one device call (run tool, nvidia-h200, carry [".device"]),
# the shipped code (23de99f) packed with tools/device_pack.sh --gzip: ncu with per-instruction SASS
# counters over the fused non-flush and flush kernels at 16/16 B = 8 (launches 3-4 of --profile=16/8).
bash bench/unpack_device.sh; export LD_LIBRARY_PATH=$PWD/.device/lib; mkdir -p $OUT/r
ncu --set full --import-source no -k regex:GdnDecodeKernel --launch-skip 2 --launch-count 2 \
  -o /tmp/nf_f_16_8 .device/bin/gdn_bench --profile=16/8 > $OUT/r/ncu.log 2>&1
ncu --import /tmp/nf_f_16_8.ncu-rep --page source --print-source sass --csv | gzip > $OUT/r/source_sass.csv.gz
