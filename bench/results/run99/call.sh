#!/bin/bash
# Twenty-eighth session's second call. On an H200: the documented run on
# HEAD (the record). On any other card: hmaj's A/B (the packed step's
# blocks head-major) and the micro pass's slot-order lines (_run16, _run1).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
G=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$G"
if echo "$G" | grep -q H200; then
  bash bench/run_gdn_on_device.sh 2>&1 | tail -45
else
  bash bench/ab_on_device.sh --tests hmaj --passes 3 dbase hmaj 2>&1 | tail -40
  .device/dbase/gdn_bench --micro > "$OUT/micro_dbase.log" 2>&1
  grep -E "copy_memcpy|rmw_slots_.m_b(256|1024)( |_contig|_pairs|_run)" "$OUT/micro_dbase.log"
fi
