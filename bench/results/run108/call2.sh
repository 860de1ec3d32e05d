#!/bin/bash
# Thirty-fourth session, second call: rowearly's successors against hbase
# (HEAD's gdn_bench):
#   rowearly2 - rowearly with its unrolled passes skipped at n = 0
#               (rowearly2.patch here);
#   rawqk     - rowearly2 with q, k left unscaled on that route: the dots'
#               sums are scaled by rq, rk instead (rawqk.patch here).
# `gdn_bench --no-micro --flush-cost` of the builds twice in turn; then, for
# each variant whose batch-1 cycle estimate (the FLUSHCOST lines: non-flush
# n0/n1/n4/n8/n14 and flush n15 weighted over a ring of 16) is >= 0.5 %
# under hbase at 16/16 or 16/32, its decode_test and A/B passes against
# hbase with the time left. Carry [".device"] with
# `bash bench/results/pending/carry.sh hbase rowearly2 rawqk` (bin parked by hand).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/run108_out}"
mkdir -p "$OUT"
t0=$SECONDS
LIMIT=${LIMIT:-420}
VARIANTS=${VARIANTS:-rowearly2 rawqk}
echo "[run108 0 s] card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)"
bash bench/unpack_device.sh || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
for r in 1 2; do
  for b in hbase $VARIANTS; do
    timeout 60 .device/$b/gdn_bench --no-micro --flush-cost > "$OUT/fc_${b}_$r.log" 2>&1
    echo "[run108 $((SECONDS - t0)) s] $b rc=$?"
    grep "FLUSHCOST" "$OUT/fc_${b}_$r.log" | grep "B=1 tile auto " | sed "s/^/  $b: /"
  done
done
# Batch-1 cycle estimate per build and shape (mean of the two runs): the
# non-flush steps n = 0..14 interpolated linearly between the measured fills,
# plus the flush at n = 15, over 16.
pick=$(python3 - "$OUT" hbase $VARIANTS <<'PY'
import re, sys, glob
out, names = sys.argv[1], sys.argv[2:]
def est(line):
    nf = dict((int(a), float(b)) for a, b in re.findall(r"n(\d+) ([\d.]+)", line.split("| flush")[0].split("non-flush")[1]))
    fl = float(re.search(r"flush .* n15 ([\d.]+)", line).group(1))
    xs = sorted(nf); tot = 0.0
    for n in range(15):
        lo = max(x for x in xs if x <= n); hi = min(x for x in xs if x >= n)
        tot += nf[lo] if lo == hi else nf[lo] + (nf[hi] - nf[lo]) * (n - lo) / (hi - lo)
    return (tot + fl) / 16
res = {}
for nm in names:
    for f in glob.glob(f"{out}/fc_{nm}_*.log"):
        for line in open(f):
            m = re.match(r"FLUSHCOST HV=(\d+) B=1 tile auto packed", line)
            if m:
                res.setdefault((nm, m.group(1)), []).append(est(line))
keep = []
for nm in names:
    row = []
    for hv in ("32", "16"):
        v = res.get((nm, hv)); b = res.get(("hbase", hv))
        if not v or not b:
            row.append(f"{hv}: -"); continue
        mv, mb = sum(v) / len(v), sum(b) / len(b)
        row.append(f"16/{hv} {mv:.3f} us ({100 * (mv / mb - 1):+.1f} %)")
        if nm != "hbase" and mv <= mb * 0.995 and nm not in keep:
            keep.append(nm)
    print(f"# {nm}: " + ", ".join(row), file=sys.stderr)
print(" ".join(keep))
PY
)
echo "[run108 $((SECONDS - t0)) s] kept for the A/B: ${pick:-none}"
tar czf "$OUT/fc.tgz" -C "$OUT" $(cd "$OUT" && ls fc_*.log) && rm -f "$OUT"/fc_*.log
[ -z "$pick" ] && exit 0
tests=$(echo $pick | tr ' ' ',')
nb=$(( $(echo $pick | wc -w) + 1 ))
left=$((LIMIT - (SECONDS - t0) - 100 * (nb - 1) - 10))
passes=$((left / (26 * nb)))
[ $passes -gt 3 ] && passes=3
if [ $passes -lt 1 ]; then echo "[run108] $left s left: no A/B"; exit 0; fi
OUT="$OUT" bash bench/ab_on_device.sh --tests "$tests" --passes $passes hbase $pick > "$OUT/ab_run.log" 2>&1
echo "[run108 $((SECONDS - t0)) s] A/B ($passes passes) rc=$?"
rm -rf "$OUT/ab"
tail -45 "$OUT/ab_run.log"
