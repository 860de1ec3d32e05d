#!/bin/bash
# Run 48 (eleventh session), one device call: ncu with per-instruction (SASS) counters over the
# shipped code's (23de99f) fused non-flush and flush kernels at 16/16 B = 8 (launches 3-4 of
# `gdn_bench --profile=16/8`), for where the small-batch instruction stream goes.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
OUT="${OUT:-/tmp/run48}"
mkdir -p "$OUT/r"
bash bench/unpack_device.sh || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout 150 "$NCU" --set full --import-source no -k regex:GdnDecodeKernel --launch-skip 2 \
  --launch-count 2 -o "$OUT/r/nf_f_16_8" .device/bin/gdn_bench --profile=16/8 > "$OUT/r/ncu.log" 2>&1
echo "ncu rc=$?"; tail -3 "$OUT/r/ncu.log"
"$NCU" --import "$OUT/r/nf_f_16_8.ncu-rep" --page source --print-source sass --csv \
  > "$OUT/r/source_sass.csv" 2> "$OUT/r/source_err.txt"
echo "source rc=$? $(wc -l < "$OUT/r/source_sass.csv") lines"; head -c 600 "$OUT/r/source_err.txt"
gzip -f "$OUT/r/source_sass.csv"
ls -la "$OUT/r"
