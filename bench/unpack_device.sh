#!/bin/bash
# On the GPU machine: unpacks the binaries that `tools/device_pack.sh --gzip`
# compressed (.device/*/*.gz), in place. A no-op when there are none; the
# device scripts (run_gdn_on_device.sh, ab_on_device.sh) call it first.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
shopt -s nullglob
for f in .device/*/*.gz; do
  if ! gunzip -f "$f"; then
    echo "unpack_device: cannot unpack $f" >&2
    exit 2
  fi
  chmod +x "${f%.gz}"
done
