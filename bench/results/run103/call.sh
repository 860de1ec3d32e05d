#!/bin/bash
# Thirty-first session's one call that came (after three refused ones), on
# 08e5915's tree with the builds packed in the thirtieth session: bin (the
# kernels of c0ee91a, unchanged through 08e5915) and the pending decode set
# (kpf, tilefirst). Named kind nvidia-h200; an H100 came, so h200_call.sh took
# its other-card path: lifecycle_test (bin), the --flush-cost lines of bin and
# tilefirst, then tilefirst's decode_test and three A/B passes of bin and
# tilefirst (kpf left out: H200_ONLY). Carry [".device"] with
# `bash bench/results/pending/carry.sh kpf tilefirst` (56.9 MiB).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
FLUSH_BUILDS="bin tilefirst" bash bench/results/pending/h200_call.sh --tests tilefirst bin kpf tilefirst
