#!/bin/bash
# Run 120 call 1 (forty-sixth session), on any card. The sweep now rotates
# its slot sets over 256 MiB of ReplaySSM rings as well as 256 MiB of state
# (RingRotation in bench/gdn_bench_setup.h; run 119's COLDRINGS lines on an
# H100 showed the state-only rotation flattering the ReplaySSM cycle by
# 0.5-3 % at B <= 160).
#   H200: the documented run on HEAD (the record's call: its figures under
#         the new method), then `gdn_bench --no-micro --cold-rings` (both
#         rotations side by side, B = 1-512).
#   other cards: --cold-rings, then the sweep alone (`gdn_bench --no-micro
#         --json`): its time and figures under the new method.
# Here, before: tools/device_pack.sh --gzip && bash bench/results/pending/carry.sh
# then the run tool (carry [".device"], timeout LIMIT + 30, LIMIT default
# 570) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
source bench/results/pending/call_env.sh || exit 2
limit=${LIMIT:-570}
left() { echo $((limit - (SECONDS - t0))); }
rc=0
cold_rings() {
  timeout "$1" .device/bin/gdn_bench --no-micro --cold-rings \
    > "$out/cold_rings.log" 2>&1 || rc=1
  grep -E "^COLDRINGS|rror" "$out/cold_rings.log"
  echo "== cold rings rc=$rc ($((SECONDS - t0)) s)"
}
if [[ "$gpu" == *H200* ]]; then
  OUT="$out" bash bench/results/pending/h200_call.sh --h200-only \
    --limit "$(($(left) - 60))" || rc=1
  [ "$(left)" -ge 40 ] && cold_rings "$(($(left) - 10))"
else
  cold_rings 120
  timeout "$(($(left) - 10))" .device/bin/gdn_bench --no-micro \
    --json="$out/gdn_bench.json" > "$out/gdn_bench.log" 2>&1 || rc=1
  echo "== sweep rc=$rc ($((SECONDS - t0)) s)"
  sed -n '/^== GDN decode/,$p' "$out/gdn_bench.log" | head -60
fi
echo "== done rc=$rc ($((SECONDS - t0)) s)"
exit $rc
