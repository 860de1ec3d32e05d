#!/bin/bash
# Run 119 call 2 (prepared in the forty-fifth session), on any card (~90 s):
# ncu's view of the 16/16 decode steps at B = 128 and 160, on either side of
# the knee run 118 found (the non-flush step's cost per row ~8 % higher
# from B = 160). `gdn_bench --profile=16/B` launches 14 decode kernels
# (bench/gdn_bench_modes.h: 1-2 packed, 3-6 and 7-10 the shipped ReplaySSM
# steps at cursors 0 / 1 / 7 and the flush, 11-12 the fused bv64 route at 7
# and 15, 13-14 forced flushes at 0 and 1). Per kernel: its duration on the
# GPU (against the graph's µs per call in the sweep: the gap is the launch,
# the rest the kernel's own ramp and drain), DRAM bytes read and written
# (cursor 7 against cursor 0: the ring's bytes from DRAM) and the L2 hit
# rate; once with ncu's default cache control (caches flushed before each
# kernel: every ring byte from DRAM) and once with --cache-control none
# (the kernels back to back, as in a graph). Clocks as found
# (--clock-control none). bench/ncu_metrics.py prints each log as a table
# of the 14 launches. Here, before:
#   tools/device_pack.sh --gzip && bash bench/results/pending/carry.sh
# then the run tool (carry [".device"], timeout 200) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
source bench/results/pending/call_env.sh || exit 2
rc=0
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
metrics+=,lts__t_sector_hit_rate.pct
for B in 128 160; do
  for cc in all none; do
    log="$out/ncu_16_${B}_${cc}.csv"
    timeout 80 ncu --clock-control none --cache-control "$cc" \
      --metrics "$metrics" -k regex:GdnDecodeKernel -c 14 --csv \
      .device/bin/gdn_bench --profile=16/$B > "$log" 2>&1 || rc=1
    echo "== 16/16 B=$B cache-control $cc rc=$rc ($((SECONDS - t0)) s)"
    python3 bench/ncu_metrics.py "$log" || tail -5 "$log"
  done
done
echo "== done rc=$rc ($((SECONDS - t0)) s)"
exit $rc
