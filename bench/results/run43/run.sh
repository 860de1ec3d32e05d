#!/bin/bash
# Run 43 (eleventh session), one device call: the shared-memory ring reads build
# (.device/bin) against main (.device/main): its decode tests, a 3-pass A/B of
# gdn_bench --no-micro --replay-only.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/run43}"
mkdir -p "$OUT/r"
bash bench/unpack_device.sh || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
T0=$SECONDS
timeout 200 .device/bin/decode_test > "$OUT/r/decode_test.log" 2>&1
echo "decode_test rc=$? $((SECONDS - T0)) s"; tail -3 "$OUT/r/decode_test.log"
OUT="$OUT/r" bash bench/ab_on_device.sh --passes 3 main bin
echo "ab done $((SECONDS - T0)) s"
tar czf "$OUT/run43.tgz" -C "$OUT" r
echo "total $((SECONDS - T0)) s"
