#!/bin/bash
# Run 118 call 2 (forty-fifth session), on any card: the A/B of elrule (the
# ReplaySSM state policy evict-last from 2048 pairs; run118/elrule.patch)
# against bin (HEAD before it), two passes with elrule's decode_test first;
# on an H200 coefmma too (bench/results/pending/README.md, "The decode set":
# the precomputed route's flush folded on tensor cores, an H200-only
# question; only when LIMIT >= 400 s), with its decode_test. ~200 s on an
# H100, ~400 s on an H200.
# Here, before (bin as in call1.sh; its tests other than decode_test moved
# out of .device/bin so that three builds fit the carry):
#   git apply bench/results/run118/elrule.patch
#   tools/device_pack.sh --gzip --into elrule //bench:gdn_bench //gdn:decode_test
#   git apply -R bench/results/run118/elrule.patch
#   git apply bench/results/pending/decode/coefmma.patch
#   tools/device_pack.sh --gzip --into coefmma //bench:gdn_bench //gdn:decode_test
#   git apply -R bench/results/pending/decode/coefmma.patch
#   bash bench/results/pending/carry.sh elrule coefmma    # 62.3 MB
# then the run tool (carry [".device"], timeout LIMIT + 40) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
source bench/results/pending/call_env.sh || exit 2
builds=(bin elrule)
tests=elrule
if [[ "$gpu" == *H200* && ${LIMIT:-450} -ge 400 ]]; then
  builds+=(coefmma)
  tests+=,coefmma
fi
rc=0
OUT="$out" timeout "$((${LIMIT:-450} - 10))" bash bench/ab_on_device.sh \
  --tests "$tests" --passes 2 "${builds[@]}" > "$out/ab_run.log" 2>&1 || rc=1
rm -rf "$out/ab"  # its files are in ab.tgz
tail -60 "$out/ab_run.log"
echo "== done rc=$rc ($((SECONDS - t0)) s)"
exit $rc
