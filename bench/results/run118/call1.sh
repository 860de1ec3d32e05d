#!/bin/bash
# Run 118 call 1 (forty-fifth session), on any card. On an H200: the
# documented run on bin (the record; elrule does not change an H200's
# launches), then `gdn_bench --flush-policy` (does the ReplaySSM flush gain
# under evict-last there too, as on the H100 in run 117?), then the decode
# table at B = 64-256 (batches_table.sh), each while LIMIT (default 400 s)
# leaves room. On any other card: elrule's decode_test and two A/B passes
# against bin (elrule: the ReplaySSM state policy evict-last from 2048 pairs
# on a narrow-memory card, as first packed; the call ran on an H200, so
# elrule did not run, and before call2.sh the rule became card-independent:
# bench/results/run118/elrule.patch is that version).
# Here, before:
#   tools/device_pack.sh --gzip                       # bin (HEAD)
#   git apply bench/results/run118/elrule.patch
#   tools/device_pack.sh --gzip --into elrule //bench:gdn_bench //gdn:decode_test
#   git apply -R bench/results/run118/elrule.patch
#   bash bench/results/pending/carry.sh elrule        # 63.3 MB
# then the run tool (carry [".device"], timeout LIMIT + 40) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
source bench/results/pending/call_env.sh || exit 2
limit=${LIMIT:-400}
left() { echo $((limit - (SECONDS - t0))); }
rc=0
if [[ "$gpu" != *H200* ]]; then
  OUT="$out" timeout "$(($(left) - 10))" bash bench/ab_on_device.sh \
    --tests elrule --passes 2 bin elrule > "$out/ab_run.log" 2>&1 || rc=1
  rm -rf "$out/ab"  # its files are in ab.tgz
  tail -45 "$out/ab_run.log"
  echo "== done rc=$rc ($((SECONDS - t0)) s)"
  exit $rc
fi
if [ "$(left)" -ge 260 ]; then  # the documented run takes ~240 s
  # No builds named: the documented run alone (bin), no A/B.
  OUT="$out" bash bench/results/pending/h200_call.sh --h200-only \
    --limit "$(left)" || rc=1
fi
if [ "$(left)" -ge 30 ]; then
  timeout 60 .device/bin/gdn_bench --no-micro --flush-policy \
    > "$out/flush_policy.log" 2>&1 || rc=1
  head -1 "$out/flush_policy.log"
  grep -E "^FLUSHPOLICY|rror" "$out/flush_policy.log"
fi
if [ "$(left)" -ge 60 ]; then
  OUT="$out" bash bench/results/pending/batches_table.sh 90 || rc=1
fi
echo "== done rc=$rc ($((SECONDS - t0)) s)"
exit $rc
