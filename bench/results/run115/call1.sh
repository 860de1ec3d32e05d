#!/bin/bash
# Run 115 call 1 (forty-first session; not run: no machine came). On an H200,
# the documented run on HEAD (kAuto's ReplaySSM kLaunch up to 512 pairs, run
# 114's rule), then the A/B of bin against coefmma (the precomputed route's
# flush folded on tensor cores: bench/results/pending/decode/coefmma.patch)
# with coefmma's decode_test first; on any other card rule_check.sh's other
# path (decode and layer_decode tests, run 114's overlap sweep: does a
# narrow-memory card gain from kLaunch at 256-512 ReplaySSM pairs too?).
# Then, on either card, the decode table at B = 64-256 in steps of 32
# (gdn_bench --batches, ~30 s): are the ReplaySSM steps' fixed costs per
# step (~0.7 us over the packed step's non-flush, ~5 us flush:
# docs/benchmarks/gdn_history.md, "Forty-first session") a constant or wave
# quantisation? Here, before:
#   tools/device_pack.sh --gzip                       # bin (HEAD)
#   git apply bench/results/pending/decode/coefmma.patch
#   tools/device_pack.sh --gzip --into coefmma //bench:gdn_bench //gdn:decode_test
#   git apply -R bench/results/pending/decode/coefmma.patch
#   bash bench/results/pending/carry.sh coefmma       # 63.0 MB
# then the run tool (carry [".device"], kind nvidia-h200, timeout 600) runs
# this file. LIMIT (default 510 s) bounds the H200 path's A/B.
cd "$(dirname "$0")/../../.." || exit 2
out=${OUT:-/tmp}
rc=0
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
if [[ "$gpu" != *H200* ]]; then
  bash bench/results/pending/rule_check.sh || rc=1
else
  bash bench/results/pending/h200_call.sh --tests coefmma \
    --limit "${LIMIT:-510}" bin coefmma || rc=1
fi
bash bench/unpack_device.sh > /dev/null 2>&1 || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
OUT="$out" bash bench/results/pending/batches_table.sh 60 || rc=1
exit $rc
