#!/bin/bash
# Run 117 call 2 (forty-third session's preparation), on any card: forceld's
# A/B (bench/results/run116/forceld.patch: the force-flush flag loaded beside
# the row's other indices; its "+flags" lines should equal the plain ones),
# then gdn_bench --tile-table, whose FLUSHPOLICY lines time the ReplaySSM
# flush under the plain and the evict-last L2 policy (bench/results/pending/
# README.md, "Open leads"). Here, before:
#   tools/device_pack.sh --gzip                       # bin (HEAD)
#   git apply bench/results/run116/forceld.patch
#   tools/device_pack.sh --gzip --into forceld //bench:gdn_bench //gdn:decode_test
#   git apply -R bench/results/run116/forceld.patch
#   bash bench/results/pending/carry.sh forceld       # 63.3 MB
# then the run tool (carry [".device"], timeout 600) runs this file. On an
# H200 run call1.sh (the table and the documented run) first, in its own call.
cd "$(dirname "$0")/../../.." || exit 2
out=${OUT:-/tmp}
t0=$SECONDS
echo "card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
rc=0
OUT="$out" timeout 330 bash bench/ab_on_device.sh --tests forceld --passes 2 \
  bin forceld > "$out/ab_run.log" 2>&1 || rc=1
rm -rf "$out/ab"  # its files are in ab.tgz
tail -45 "$out/ab_run.log"
echo "== A/B done ($((SECONDS - t0)) s)"
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
timeout $((570 - (SECONDS - t0))) .device/bin/gdn_bench --no-micro --tile-table \
  > "$out/tile_table.log" 2>&1 || rc=1
grep -E "^TILETABLE peak|^FLUSHPOLICY" "$out/tile_table.log"
echo "== done ($((SECONDS - t0)) s)"
exit $rc
