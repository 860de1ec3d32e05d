#!/bin/bash
# Run 119 call 1 (prepared in the forty-fifth session), on any card. On an
# H200, first the documented run on HEAD (the record's call, with the
# ReplaySSM step's evict-last rule of dd8747f), if LIMIT (default 420 s)
# leaves >= 300 s. Then, on any card, `gdn_bench --no-micro --cold-rings`
# (COLDRINGS lines: the shipped ReplaySSM cycle and packed step at B = 64-512
# of both shapes with the sweep's slot sets, then with the rings rotated
# over 256 MiB too): how much of the ReplaySSM speed-up at B <= 128 comes
# from rings that stay in L2 between a set's steps (docs/benchmarks/
# gdn_history.md, "Run 118"). Here, before:
#   tools/device_pack.sh --gzip                       # bin (HEAD)
#   bash bench/results/pending/carry.sh               # bin and lib
# then the run tool (carry [".device"], timeout LIMIT + 40) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
source bench/results/pending/call_env.sh || exit 2
limit=${LIMIT:-420}
left() { echo $((limit - (SECONDS - t0))); }
rc=0
if [[ "$gpu" == *H200* && $(left) -ge 300 ]]; then
  # No builds named: the documented run alone (bin), no A/B.
  OUT="$out" bash bench/results/pending/h200_call.sh --h200-only \
    --limit "$(($(left) - 60))" || rc=1
fi
if [ "$(left)" -ge 40 ]; then
  timeout "$(($(left) - 10))" .device/bin/gdn_bench --no-micro --cold-rings \
    > "$out/cold_rings.log" 2>&1 || rc=1
  head -1 "$out/cold_rings.log"
  grep -E "^COLDRINGS|rror" "$out/cold_rings.log"
fi
echo "== done rc=$rc ($((SECONDS - t0)) s)"
exit $rc
