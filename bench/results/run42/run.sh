#!/bin/bash
# Run 42 (eleventh session), one device call: the per-row commit groups build
# (.device/bin) against main (.device/main): its decode tests, a 3-pass A/B of
# gdn_bench --no-micro --replay-only, then ncu over the build's small-batch launches
# (--profile=16/8 and --profile=32/1) and the SASS of the fused flush kernel.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/run42}"
mkdir -p "$OUT/r"
bash bench/unpack_device.sh || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
T0=$SECONDS
timeout 200 .device/bin/decode_test > "$OUT/r/decode_test.log" 2>&1
echo "decode_test rc=$? $((SECONDS - T0)) s"; tail -3 "$OUT/r/decode_test.log"
OUT="$OUT/r" bash bench/ab_on_device.sh --passes 3 main bin
echo "ab done $((SECONDS - T0)) s"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ]; then
  for prof in 16/8 32/1; do
    timeout 150 "$NCU" --set full -k regex:GdnDecodeKernel .device/bin/gdn_bench --profile=$prof \
      > "$OUT/r/ncu_${prof/\//_}.txt" 2>&1
    echo "ncu $prof rc=$? $((SECONDS - T0)) s"
  done
else
  echo "no ncu"
fi
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
[ -n "$CUOBJ" ] && "$CUOBJ" -sass .device/bin/gdn_bench 2>/dev/null |
  awk '/Function : .*GdnDecodeKernelINS1_4TileILi4ELi2ELi6EEELNS1_10DecodeModeE1EfLb1E/{p=1} p&&/Function : /&&!/ILi4ELi2ELi6EEELNS1_10DecodeModeE1EfLb1E/{p=0} p' \
  > "$OUT/r/sass_fused_bv32_staged.txt"
wc -l "$OUT/r/sass_fused_bv32_staged.txt"
tar czf "$OUT/run42.tgz" -C "$OUT" r
echo "total $((SECONDS - T0)) s"
