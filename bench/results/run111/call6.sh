#!/bin/bash
# Run 111 call 6 (thirty-eighth session; named nvidia-h200 after an H100
# refusal): on an H200 the documented run on HEAD (bin, 8736d27's kernels)
# and an A/B of bin and mmareg2 (bench/results/pending/decode/mmareg2.patch)
# with mmareg2's decode_test (h200_call.sh); on any other card the flush-cost
# lines of both and the A/B alone. Here, before: bin, lib and mmareg2 in
# .device (62.3 MB; call5.sh packs mmareg2). Run tool: carry [".device"],
# timeout 600.
cd "$(dirname "$0")/../../.." || exit 2
G=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "card: $G"
if echo "$G" | grep -q H200; then
  exec bash bench/results/pending/h200_call.sh --h200-only --tests mmareg2 \
    --limit 575 bin mmareg2
fi
bash bench/unpack_device.sh > /dev/null 2>&1 || exit 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
out=${OUT:-/tmp}
for b in bin mmareg2; do
  timeout 60 .device/$b/gdn_bench --no-micro --flush-cost > "$out/flush_cost_$b.log" 2>&1
  echo "$b: $(grep 'FLUSHCOST HV=16 B=1 tile auto packed' "$out/flush_cost_$b.log")"
done
bash bench/ab_on_device.sh --tests mmareg2 --passes 3 bin mmareg2 2>&1 | tail -45
