#!/bin/bash
# Run 120 call 3 (forty-sixth session), on any card (~60 s on an H100): the
# batch-1 and batch-8 parts under the new slot-set rotation (the rings from
# DRAM): `gdn_bench --no-micro --flush-cost`, whose lines now end with each
# variant's whole cycle, so that the two copy orders (ReplayCopyOrder: kAuto
# copies the state tile first up to 32 pairs, a choice run 103 made with the
# rings in L2) and the unstaged ring compare directly; then `--layer` (the
# conv -> decode pair, where kPrologue overlaps the ring's loads with the
# conv's tail).
# Here, before: tools/device_pack.sh --gzip && bash bench/results/pending/carry.sh
# then the run tool (carry [".device"], timeout 200) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
source bench/results/pending/call_env.sh || exit 2
rc=0
timeout 110 .device/bin/gdn_bench --no-micro --flush-cost \
  > "$out/flush_cost.log" 2>&1 || rc=1
head -1 "$out/flush_cost.log"
grep -E "^FLUSHCOST|rror" "$out/flush_cost.log"
echo "== flush-cost rc=$rc ($((SECONDS - t0)) s)"
timeout 60 .device/bin/gdn_bench --no-micro --layer \
  > "$out/layer.log" 2>&1 || rc=1
grep -vE "^(device|programmatic)" "$out/layer.log" | tail -40
echo "== done rc=$rc ($((SECONDS - t0)) s)"
exit $rc
