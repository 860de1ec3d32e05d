#!/bin/bash
# Run 116, pf (forty-third session): the L2 look-ahead (pf.patch). Each CTA
# of a decode launch asks L2 (prefetch.global.L2, one 128-byte line per
# thread) for the state tile of the block GDN_PF % of a resident wave ahead
# of it, so that DRAM keeps streaming while the resident CTAs wait on their
# index loads or compute after their tile arrived (the non-flush step reads
# at 85-90 % of its bare read pattern: docs/BENCHMARKS.md, "What bounds the
# misses"). On an H200 first the decode table at B = 64-256 (run 116's
# call1.sh's question, ~40 s); on any card the A/B of bin (HEAD) against the
# pf build at GDN_PF = 0, 50, 100, 150 (.device/pfN: wrappers around
# .device/pf), with pf100's decode_test first. Here, before:
#   git apply bench/results/run116/pf.patch
#   tools/device_pack.sh --gzip --into pf //bench:gdn_bench //gdn:decode_test
#   git apply -R bench/results/run116/pf.patch
#   (the wrappers .device/pf{0,50,100,150}/{gdn_bench,decode_test})
#   bash bench/results/pending/carry.sh pf pf0 pf50 pf100 pf150
# (bin holds gdn_bench alone for this call: 47.8 MB.) Run tool: carry
# [".device"], timeout 600.
cd "$(dirname "$0")/../../.." || exit 2
out=${OUT:-/tmp}
t0=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
echo "card: $gpu"
bash bench/unpack_device.sh > /dev/null 2>&1 || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
rc=0
if [[ "$gpu" == *H200* ]]; then
  timeout 90 .device/bin/gdn_bench --no-micro --batches=64,96,128,160,192,224,256 \
    --json="$out/batches.json" > "$out/batches.log" 2>&1 || rc=1
  echo "== gdn_bench --batches ($((SECONDS - t0)) s)"
  sed -n '/^== GDN decode/,$p' "$out/batches.log" | cut -c1-120 | head -18
fi
OUT="$out" timeout $((570 - (SECONDS - t0))) bash bench/ab_on_device.sh \
  --tests pf100 --passes 2 bin pf0 pf50 pf100 pf150 2>&1 | tail -60 || rc=1
echo "== done ($((SECONDS - t0)) s)"
exit $rc
