# Run 74: the documented command on 6b99fa9 (the two-pass prefill; decode kernels as in run 73),
# built here with `rm -rf .device && tools/device_pack.sh --gzip`; then ncu's per-kernel durations
# of the prefill lines (ncu locks clocks: its durations are longer than gdn_bench's).
bash bench/run_gdn_on_device.sh > $OUT/run74.txt 2>&1
export LD_LIBRARY_PATH=$PWD/.device/lib
ncu --metrics gpu__time_duration.sum -k regex:Prefill .device/bin/gdn_bench --no-micro --prefill > $OUT/ncu_prefill.txt 2>&1
