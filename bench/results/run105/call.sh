#!/bin/bash
# Thirty-second session's first device call (after two refused ones): named
# nvidia-h200, an H100 came, so h200_call.sh took its other-card path: HEAD's
# three GPU tests (bin: b22352b), the --flush-cost lines of base (08e5915's
# gdn_bench: c0ee91a's kernels), bin and regdots, then three A/B passes of
# base, bin and regdots with regdots' decode_test. 419 s.
# Carry [".device"] with `bash bench/results/pending/carry.sh base regdots`
# (61.6 MiB).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
NEW_TESTS="decode_test lifecycle_test layer_decode_test" FLUSH_BUILDS="base bin regdots" bash bench/results/pending/h200_call.sh --tests regdots --limit 575 base bin regdots
