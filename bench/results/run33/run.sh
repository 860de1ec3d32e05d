#!/bin/bash
# Run 33: order effects in the A/B method. main's gdn_bench twice (.device/base, .device/base2 =
# the same file) and wt_p2t (.device/p2t), in rotating order over four passes.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
OUT="${OUT:-/tmp/out}"; R=/tmp/r33; mkdir -p "$OUT" $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/gpu.txt 2>&1
B() { local name=$1; shift; local s=$SECONDS; timeout 60 "$@" --no-micro --replay-only > "$R/$name.log" 2>&1; echo "$name rc=$? $((SECONDS-s))s"; }
i=0
for order in "base base2 p2t" "p2t base base2" "base2 p2t base" "base p2t base2"; do
  i=$((i+1)); pos=0
  for v in $order; do pos=$((pos+1)); B ${v}_p${i}_pos${pos} .device/$v/gdn_bench; done
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> $R/gpu.txt 2>&1
for f in $(ls $R/*.log | sort -t_ -k2); do echo "== $(basename $f .log)"; grep -h "^REPLAY" $f | awk '$3 ~ /B=(128|512|1024)$/ {print $2,$3,$5,$8,$9,$10,$11}'; done
tar czf "$OUT/r33.tgz" -C /tmp r33
