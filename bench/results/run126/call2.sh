#!/bin/bash
# Run 126 call 2 (forty-eighth session), on any card: call 1 found a cap of
# four CTAs per SM 0.7-1.3 % faster for the ReplaySSM steps at 16/32 B = 128
# and 16/16 B = 256 (kAuto's bv64 tile, five per SM uncapped) and no faster at
# 16/16 B = 128 (bv32). The sweep's every-tile lines (JSON) with the
# ctapad build uncapped, then with GDN_CTAS_PER_SM_REPLAY=4, at B = 128-1024:
# is bv64 at four per SM faster at these batches, and at 16/16 B = 128 than
# kAuto's bv32? (The cap applies to every ReplaySSM tile: the bv8-bv32 lines
# of the capped pass are not a candidate.)
# Here, before: as call 1 (carry bin, lib and ctapad).
cd "$(dirname "$0")/../../.." || exit 2
source bench/results/pending/call_env.sh || exit 2
rc=0
for pass in base cap4; do
  env $([ $pass = cap4 ] && echo GDN_CTAS_PER_SM_REPLAY=4) timeout 200 \
    .device/ctapad/gdn_bench --no-micro --batches=128,256,512,1024 \
    --json="$out/$pass.json" > "$out/$pass.log" 2>&1 || rc=1
  echo "== $pass rc=$rc ($((SECONDS - t0)) s)"
done
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def load(p):
    d = {}
    for r in json.load(open(f"{out}/{p}.json")).get("records", []):
        if r.get("kind") == "replay_fp32" and not r.get("linear_slots") \
                and not r.get("sorted_slots"):
            d.setdefault((r["hv"], r["batch"], r["variant"]), []).append(r)
    return d
b, c = load("base"), load("cap4")
for k in sorted(b):
    if k not in c or not any(t in k[2] for t in ("auto", "bv32", "bv64")):
        continue
    x, y = b[k][0], c[k][0]
    print(f"HV={k[0]} B={k[1]} {k[2]:>14}: cycle {x['cycle_us']:.2f} -> "
          f"{y['cycle_us']:.2f} ({100 * (y['cycle_us'] / x['cycle_us'] - 1):+.2f} %)"
          f" nf {x['nonflush_us']:.2f} -> {y['nonflush_us']:.2f}"
          f" flush {x['flush_us']:.2f} -> {y['flush_us']:.2f}")
PY
grep -h "^ *1[0-9]/\|HV=.*packed auto" "$out/base.log" | head -12
echo "== done rc=$rc ($((SECONDS - t0)) s)"
exit $rc
