#!/bin/bash
# Run 110 call 1 (2026-12-06, thirty-seventh session; named no kind, got an
# H100): h200_call.sh's other-card path with bin (HEAD 1a401a8) and prewait
# (HEAD with bench/results/run110/prewait.patch). Here, before:
#   tools/device_pack.sh --gzip
#   git apply bench/results/run110/prewait.patch
#   tools/device_pack.sh --gzip --into prewait //bench:gdn_bench //gdn:decode_test
#   git checkout gdn/
#   bash bench/results/pending/carry.sh prewait          # 61.9 MB
# then the run tool (carry [".device"], timeout 600) runs this file. (As run,
# the command was this file's last line typed into the run tool.)
cd "$(dirname "$0")/../../.." || exit 2
FLUSH_BUILDS="bin prewait" exec bash bench/results/pending/h200_call.sh \
  --tests prewait --limit 575 bin prewait
