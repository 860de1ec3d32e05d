#!/bin/bash
# Run 125 call 1 (forty-seventh session), on any card.
#   H200: the documented run on HEAD (run 120 call 1's H200 branch: the
#         record's call under the rotation of state and rings), then, with the
#         time left, the CTA times below.
#   any card: the diagnostic build ctatime of run 125
#         (bench/results/run125/ctatime.patch: run 124's, with each step timed
#         under every launch overlap, kAuto, kNone, kLaunch and kPrologue, and
#         each launch's CTA ends against the middle half's rate: the time lost
#         at its head, from the previous launch's last end, and at its tail):
#         `GDN_CTA_TIMES=1 gdn_bench --profile=HV/B` at 16/16 B = 128, 256, 1
#         and 16/32 B = 128, 1. Why does kPrologue (the next step's state
#         reads in the previous step's tail) not take the fixed cost per step
#         off (run 121: R.pdl 56.58 against R.auto 56.29 us at 16/16 B = 128)?
# Here, before (HEAD's bin, then the patched build beside it):
#   tools/device_pack.sh --gzip
#   git apply bench/results/run125/ctatime.patch
#   tools/device_pack.sh --gzip --into ctatime //bench:gdn_bench
#   git apply -R bench/results/run125/ctatime.patch
#   bash bench/results/pending/carry.sh ctatime
# then the run tool (carry [".device"], timeout LIMIT + 30, LIMIT default
# 540) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
limit=${LIMIT:-540}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
rc=0
if [[ "$gpu" == *H200* ]]; then
  LIMIT=$((limit - 70)) bash bench/results/run120/call1.sh || rc=1
fi
source bench/results/pending/call_env.sh || exit 2
left=$((limit - SECONDS))
if [ "$left" -lt 40 ]; then
  echo "== no time left for the CTA times ($left s)"
  exit $rc
fi
for p in 16/128 16/256 32/128 16/1 32/1; do
  GDN_CTA_TIMES=1 timeout $((left / 5)) .device/ctatime/gdn_bench \
    --profile=$p >> "$out/ctatimes.log" 2>&1 || rc=1
done
grep -E "CTATIMES|rror" "$out/ctatimes.log"
echo "== done rc=$rc ($((SECONDS - t0)) s)"
exit $rc
