#!/bin/bash
# Run 109 call 3 (thirty-fifth session): foldring (the 32-row tile's
# tile-first flush computes its tensor-core product from the ring in global
# memory while the tile is in flight: bench/results/run109/foldring.patch)
# against bin (HEAD with the profile launches, kernels as d89258f). On an
# H200, h200_call.sh runs HEAD's documented run first; on any other card,
# lifecycle_test, the --flush-cost lines of both, foldring's decode_test and
# the A/B. Here, before:
#   tools/device_pack.sh --gzip
#   git apply bench/results/run109/foldring.patch
#   tools/device_pack.sh --gzip --into foldring //bench:gdn_bench //gdn:decode_test
#   git apply -R bench/results/run109/foldring.patch
#   bash bench/results/pending/carry.sh foldring                # 61.6 MB
# then the run tool (carry [".device"], timeout 600) runs this file.
cd "$(dirname "$0")/../../.." || exit 2
FLUSH_BUILDS="bin foldring" exec bash bench/results/pending/h200_call.sh \
  --tests foldring --limit "${LIMIT:-575}" bin foldring
