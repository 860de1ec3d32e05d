#!/bin/bash
# Thirtieth session's one call that came (after ten refused calls), on
# f660c1e's tree with the builds packed on c0ee91a (bin) and the pending
# decode set (kpf, tfirst, tfrule). Named kind nvidia-h200; an H100 came, so
# h200_call.sh took its other-card path: lifecycle_test (bin), the
# --flush-cost lines of bin and tfirst, then tfrule's decode_test and the A/B
# of bin and tfrule (kpf left out: H200_ONLY). Carry [".device"] with
# `bash bench/results/pending/carry.sh kpf tfirst tfrule` (61.0 MiB).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
# (FLUSH_BUILDS was the script's default then.)
FLUSH_BUILDS="bin tfirst" bash bench/results/pending/h200_call.sh --limit 380 --tests tfrule bin kpf tfrule
