#!/bin/bash
# Thirty-first session's last call (after seven more refused ones): 341 s of
# device time were left, so the call was cut at 158 s. An H200 came, so
# h200_call.sh ran the documented run (bench/run_gdn_on_device.sh) on
# c1fdb20's build (bin: every test and gdn_bench); the run tool stopped it
# in the benchmark, after the 16/32 B = 512 line, before memcheck and the
# table of record. The A/B of base (08e5915's gdn_bench) and bin never ran.
# Carry [".device"] with `bash bench/results/pending/carry.sh base`
# (52.1 MiB).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
NEW_TESTS="decode_test lifecycle_test" FLUSH_BUILDS="bin base" bash bench/results/pending/h200_call.sh --limit 200 base bin
