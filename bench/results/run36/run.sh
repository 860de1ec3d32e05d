#!/bin/bash
# Run 36 (ninth session): the documented command on main with the bf16-ring
# precomputed route landed (.device/bin), then a 3-pass A/B of
# gdn_bench --replay-only against a diagnostic build whose replay kernels hold
# no flush code (.device/nfonly: flush rows do nothing, so only its non-flush
# steps time correctly): how much the shared kernel's flush path costs the
# non-flush steps.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/run36}"
T0=$SECONDS
for f in .device/*/*.gz; do gunzip -f "$f" && chmod +x "${f%.gz}"; done
mkdir -p "$OUT/doc" "$OUT/ab"
OUT="$OUT/doc" bash bench/run_gdn_on_device.sh
echo "[$((SECONDS - T0)) s] documented command done"
OUT="$OUT/ab" bash bench/ab_on_device.sh --passes 3 bin nfonly
echo "[$((SECONDS - T0)) s] ab done"
grep -h "BF16" "$OUT"/ab/ab/bin_p*.log | head -8
tar czf "$OUT/run36.tgz" -C "$OUT" doc ab
