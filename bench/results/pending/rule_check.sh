#!/bin/bash
# The next call (fortieth session; not run: no machine came). HEAD (run
# 113's kernels with kAuto's ReplaySSM kLaunch up to 512 pairs on a
# wide-memory card) on whatever card comes, in a short call: decode_test and
# layer_decode_test (kAuto's launches, the new range among them), then on
# an H200 the benchmark's decode table without the memory microbenchmarks
# (gdn_bench --no-micro: the R.auto lines with the new rule), on any other
# card run 114's launch-overlap sweep (does a narrow-memory card gain from
# kLaunch at 256-512 ReplaySSM pairs too?). Not the documented run: that is
# run 113's, ~240 s. Here, before:
#   tools/device_pack.sh --gzip
#   bash bench/results/pending/carry.sh                  # bin and lib: 53.1 MB
# then the run tool (carry [".device"], timeout 300) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
bash bench/unpack_device.sh > /dev/null 2>&1 || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
out=${OUT:-/tmp}
start=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
echo "card: $gpu"
rc=0
for t in decode_test layer_decode_test; do
  timeout 150 ".device/bin/$t" > "$out/$t.log" 2>&1 || rc=1
  echo "$t ($((SECONDS - start)) s): $(grep -E '^\[  (PASSED|FAILED) ' "$out/$t.log" | tr '\n' ' ')"
done
if [[ "$gpu" != *H200* ]]; then
  bash bench/results/run114/call1.sh || rc=1
  exit $rc
fi
source bench/gpu_samples.sh
start_gpu_samples "$out/smi.csv"
timeout 150 .device/bin/gdn_bench --no-micro --json="$out/gdn_bench.json" \
  > "$out/gdn_bench.log" 2>&1 || rc=1
stop_gpu_samples
echo "gdn_bench ($((SECONDS - start)) s)"
sed -n '/^== GDN decode/,$p' "$out/gdn_bench.log" | head -20
exit $rc
