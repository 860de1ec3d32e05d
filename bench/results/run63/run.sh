# Run 63: the documented command on d824bfd (rm -rf .device && tools/device_pack.sh --gzip), then ncu at 16/32 B = 1.
bash bench/run_gdn_on_device.sh > /tmp/doc.out 2>&1; tail -22 /tmp/doc.out
export LD_LIBRARY_PATH=$PWD/.device/lib; mkdir -p /tmp/n
timeout 150 ncu --set full --import-source no -k regex:GdnDecodeKernel --launch-skip 1 --launch-count 3 \
  -o /tmp/n/p .device/bin/gdn_bench --profile=32/1 > /tmp/n/ncu_run.log 2>&1
ncu --import /tmp/n/p.ncu-rep > /tmp/n/details.txt 2>&1
ncu --import /tmp/n/p.ncu-rep --page source --print-source sass --csv 2>/dev/null | gzip > /tmp/n/sass.csv.gz
tar czf $OUT/ncu.tgz -C /tmp/n details.txt sass.csv.gz ncu_run.log
