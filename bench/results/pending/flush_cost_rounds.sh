#!/bin/bash
# On the GPU machine, after bench/unpack_device.sh: `gdn_bench --no-micro
# --flush-cost` of each build, ROUNDS times in turn, printing the FLUSHCOST
# lines that match PATTERN (grep) and packing the logs into $OUT/TARBALL.
#   bash bench/results/pending/flush_cost_rounds.sh TAG ROUNDS PATTERN TARBALL build...
# (run108's call3.sh and call4.sh). TAG prefixes the progress lines.
set -uo pipefail
tag="$1" rounds="$2" pattern="$3" tarball="$4"
shift 4
cd "$(dirname "$0")/../../.." || exit 2
t0=$SECONDS
for r in $(seq 1 "$rounds"); do
  for b in "$@"; do
    timeout 60 ".device/$b/gdn_bench" --no-micro --flush-cost > "$OUT/fc_${b}_$r.log" 2>&1
    echo "[$tag $((SECONDS - t0)) s] $b rc=$?"
    grep "FLUSHCOST" "$OUT/fc_${b}_$r.log" | grep "$pattern" | sed "s/^/  $b: /"
  done
done
tar czf "$OUT/$tarball" -C "$OUT" $(cd "$OUT" && ls fc_*.log) && rm -f "$OUT"/fc_*.log
