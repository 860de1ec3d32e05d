#!/bin/bash
# Run 110 call 2 (2026-12-06, thirty-seventh session; named nvidia-h200, got
# an H100): the documented command, whole, on c46e6f7 (the ReplaySSM tile
# table by card: an H100 takes 32-row tiles up to 2048 (row, value head)
# pairs). Here, before:
#   tools/device_pack.sh --gzip
#   bash bench/results/pending/carry.sh                  # bin and lib: 52.1 MB
# then the run tool (carry [".device"], timeout 450) runs this file. (As run,
# the command was this file's last line typed into the run tool.)
cd "$(dirname "$0")/../../.." || exit 2
exec bash bench/results/pending/h200_call.sh --any-card --limit 400
