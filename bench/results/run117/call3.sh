#!/bin/bash
# Run 117 call 3 (forty-fourth session), on any card; the short form of
# call2.sh for a session whose device time is mostly spent on refused calls.
# First `gdn_bench --no-micro --flush-policy` (the FLUSHPOLICY lines alone,
# with the packed step of each setup: does the ReplaySSM flush gain under
# the evict-last L2 policy, and do the non-flush steps after it lose?
# bench/results/pending/README.md, "Open leads"), then, if LIMIT (default
# 400 s) leaves >= 150 s, forceld's decode_test and one A/B pass against bin.
# Here, before:
#   tools/device_pack.sh --gzip                       # bin (HEAD)
#   (forceld as in call2.sh's header)
#   bash bench/results/pending/carry.sh forceld       # 63.3 MB
# then the run tool (carry [".device"], timeout 440) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
out=${OUT:-/tmp}
t0=$SECONDS
echo "card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
bash bench/unpack_device.sh > /dev/null 2>&1 || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
rc=0
source bench/gpu_samples.sh
start_gpu_samples "$out/smi.csv"
timeout 240 .device/bin/gdn_bench --no-micro --flush-policy \
  > "$out/flush_policy.log" 2>&1 || rc=1
stop_gpu_samples
head -1 "$out/flush_policy.log"
grep -E "^FLUSHPOLICY|rror" "$out/flush_policy.log"
echo "== flush policy done rc=$rc ($((SECONDS - t0)) s)"
left=$((${LIMIT:-400} - (SECONDS - t0)))
if [ $left -lt 150 ]; then
  echo "== $left s of LIMIT left: no forceld A/B"
  exit $rc
fi
OUT="$out" timeout "$((left - 10))" bash bench/ab_on_device.sh --tests forceld \
  --passes 1 bin forceld > "$out/ab_run.log" 2>&1 || rc=1
rm -rf "$out/ab"  # its files are in ab.tgz
tail -45 "$out/ab_run.log"
echo "== done rc=$rc ($((SECONDS - t0)) s)"
exit $rc
