#!/bin/bash
# Run 119 call 3 (forty-sixth session), on any card: call 1 and call 2 in one
# call, the new measurements first, so that a machine taken back (or a warm
# one released between two calls) loses the least:
#   1. `gdn_bench --no-micro --cold-rings` (COLDRINGS lines, call 1's second
#      half);
#   2. call 2 (ncu of the 16/16 steps at B = 128 and 160);
#   3. on an H200, if LIMIT (default 560 s) leaves >= 300 s, the documented
#      run on HEAD (call 1's first half).
# Here, before: tools/device_pack.sh --gzip && bash bench/results/pending/carry.sh
# then the run tool (carry [".device"], timeout LIMIT + 40) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
source bench/results/pending/call_env.sh || exit 2
limit=${LIMIT:-560}
left() { echo $((limit - (SECONDS - t0))); }
rc=0
timeout 150 .device/bin/gdn_bench --no-micro --cold-rings \
  > "$out/cold_rings.log" 2>&1 || rc=1
head -1 "$out/cold_rings.log"
grep -E "^COLDRINGS|rror" "$out/cold_rings.log"
echo "== cold rings rc=$rc ($((SECONDS - t0)) s)"
OUT="$out" bash bench/results/run119/call2.sh || rc=1
if [[ "$gpu" == *H200* && $(left) -ge 300 ]]; then
  OUT="$out" bash bench/results/pending/h200_call.sh --h200-only \
    --limit "$(($(left) - 30))" || rc=1
fi
echo "== done rc=$rc ($((SECONDS - t0)) s)"
exit $rc
