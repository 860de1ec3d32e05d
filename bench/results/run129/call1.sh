#!/bin/bash
# Run 129 call 1 (forty-ninth session): for a session with ~300 s of device
# time left, the H200's decode sweep alone under the rotation of rings and
# state (`gdn_bench --no-micro --json`, with the GPU's clocks sampled): the
# figures the record's documented run (run120/call2.sh) would give for
# issue 6's targets, without its tests, memcheck and microbenchmarks. On any
# other card it stops at once (exit 3).
# Here, before: tools/device_pack.sh --gzip && bash bench/results/pending/carry.sh
# then the run tool (carry [".device"], timeout 200) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
echo "card: $gpu"
[[ "$gpu" == *H200* ]] || exit 3
source bench/results/pending/call_env.sh || exit 2
source bench/gpu_samples.sh
start_gpu_samples "$out/smi.csv"
timeout 170 .device/bin/gdn_bench --no-micro --json="$out/gdn_bench.json" \
  > "$out/gdn_bench.log" 2>&1
rc=$?
stop_gpu_samples
echo "== sweep rc=$rc ($((SECONDS - t0)) s)"
sed -n '/^== GDN decode/,$p' "$out/gdn_bench.log" | head -24
python3 bench/clock_trace.py "$out/gdn_bench.json" "$out/smi.csv" 2>&1 | head -3
exit $rc
