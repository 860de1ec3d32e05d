#!/bin/bash
# Run 46 (eleventh session), one device call: two variants of the fused route's
# non-flush path on top of b72cf59 (main): "dots" reads the staged k rows of the
# coefficient dots from shared memory directly (dots.patch), "rows" the staged d
# entries of the row loop (rows.patch). Decode tests of dots, then a 3-pass A/B.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/run46}"
mkdir -p "$OUT/r"
bash bench/unpack_device.sh || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
T0=$SECONDS
timeout 200 .device/dots/decode_test > "$OUT/r/decode_test_dots.log" 2>&1
echo "decode_test dots rc=$? $((SECONDS - T0)) s"; tail -1 "$OUT/r/decode_test_dots.log"
OUT="$OUT/r" bash bench/ab_on_device.sh --passes 3 main dots rows
echo "ab done $((SECONDS - T0)) s"
tar czf "$OUT/run46.tgz" -C "$OUT" r
