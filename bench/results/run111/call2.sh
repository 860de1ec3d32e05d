#!/bin/bash
# Run 111 call 2 (2026-12-06, thirty-eighth session; named nvidia-h200, got
# an H100): the documented command, whole, on 0478b75 (every narrow-memory table: the ReplaySSM tile
# up to 2048 pairs, the packed step's 8-row tiles with kLaunch below 192 and
# whole heads at 192-256 pairs). Here, before:
#   tools/device_pack.sh --gzip
#   bash bench/results/pending/carry.sh                  # bin and lib: 52.1 MB
# then the run tool (carry [".device"], timeout 450) runs this file. (As run,
# the command was this file's last line typed into the run tool.)
cd "$(dirname "$0")/../../.." || exit 2
exec bash bench/results/pending/h200_call.sh --any-card --limit 400
