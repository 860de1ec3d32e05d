#!/bin/bash
# Run 126 call 1 (forty-eighth session), on any card.
#   H200: the documented run on HEAD (run 120 call 1's H200 branch, the
#         record's call under the rotation of state and rings) and nothing
#         else; call it again with PAD=1 on the warm machine for the rest.
#   other cards (or PAD=1): the occupancy sweep of the diagnostic build ctapad
#         (bench/results/run126/ctapad.patch: run 125's ctatime build, plus
#         GDN_CTAS_PER_SM_PACKED / _REPLAY = n, which pad a decode kernel's
#         dynamic shared memory so that at most n of its CTAs fit an SM).
#         Run 125 found the non-flush steps losing 3.2-4.6 us at the head of
#         each launch at 16/16 B = 128, against the packed step's 1.7-3.6, with
#         ~2x the packed step's bytes in flight per SM (six 16 KB tiles). Does
#         a cap on the ReplaySSM kernel's CTAs per SM shorten its steps (a
#         shorter loaded latency, a shorter first wave) without losing the
#         middle's bandwidth? And the packed step's (16 per SM by registers)?
# Here, before (HEAD's bin, then the patched build beside it):
#   tools/device_pack.sh --gzip
#   git apply bench/results/run126/ctapad.patch
#   tools/device_pack.sh --gzip --into ctapad //bench:gdn_bench
#   git apply -R bench/results/run126/ctapad.patch
#   bash bench/results/pending/carry.sh ctapad
# then the run tool (carry [".device"], timeout LIMIT + 30, LIMIT default
# 540) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
limit=${LIMIT:-540}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
if [[ "$gpu" == *H200* && -z "${PAD:-}" ]]; then
  LIMIT=$((limit - 20)) exec bash bench/results/run120/call1.sh
fi
source bench/results/pending/call_env.sh || exit 2
rc=0
run() {  # label, profile, env...
  local label=$1 p=$2
  shift 2
  echo "== $label $p" >> "$out/ctapad.log"
  env GDN_CTA_TIMES=1 "$@" timeout 60 .device/ctapad/gdn_bench \
    --profile="$p" >> "$out/ctapad.log" 2>&1 || rc=1
}
for p in 16/128 32/128 16/256; do
  for n in 0 5 4 3 2; do
    if [ "$((limit - (SECONDS - t0)))" -lt 40 ]; then break 2; fi
    if [ "$n" = 0 ]; then run "replay=auto" "$p"; else
      run "replay=$n" "$p" GDN_CTAS_PER_SM_REPLAY=$n; fi
  done
done
for p in 16/128 32/256; do
  for n in 12 8 6; do
    if [ "$((limit - (SECONDS - t0)))" -lt 40 ]; then break 2; fi
    run "packed=$n" "$p" GDN_CTAS_PER_SM_PACKED=$n
  done
done
# kAuto's lines only: µs per call, resident CTAs, head and tail loss.
grep -E "^== |/auto|rror" "$out/ctapad.log" | sed -E \
  's/\| ns: span.*resident ([0-9.]+).*head loss (-?[0-9]+), tail loss (-?[0-9]+).*/res \1 head \2 tail \3/'
echo "== done rc=$rc ($((SECONDS - t0)) s)"
exit $rc
