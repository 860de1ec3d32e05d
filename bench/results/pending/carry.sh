#!/bin/bash
# Keeps in .device/ only what the next device call needs, so that the
# repository and .device/ stay under the run tool's 64 MiB carry: lib, bin and
# the builds named here; every other build folder waits in .device-parked/
# (git-ignored) and comes back when a later call names it. From the
# repository root, before each call:
#   bash bench/results/pending/carry.sh                          # the documented run
#   bash bench/results/pending/carry.sh d78 coefmma leank        # an A/B call
# Prints the carry's size, and fails if it is over the run tool's limit.
set -euo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p .device .device-parked
keep=" lib bin $* "
for d in .device/*/; do
  name=$(basename "$d")
  [[ "$keep" == *" $name "* ]] && continue
  rm -rf ".device-parked/$name"
  mv "$d" ".device-parked/$name"
done
moved_in=()
for name in "$@"; do
  [ -d ".device/$name" ] && continue
  if [ -d ".device-parked/$name" ]; then
    mv ".device-parked/$name" ".device/$name"
    moved_in+=("$name")
  else
    echo "carry.sh: no build $name (pack.sh packs the pending sets)" >&2
    exit 1
  fi
done
# bin should be the build of the sources here: warn when its stamp
# (tools/device_pack.sh writes it) differs from the tree's gdn/ and bench/.
if [ -d .device/bin ] &&
  [ "$(cat .device/bin/sources.stamp 2>/dev/null)" != "$(tools/gdn_sources_stamp.sh)" ]; then
  echo "carry.sh: warning: .device/bin was not built from the gdn/ and bench/ sources here (tools/device_pack.sh --gzip repacks it)" >&2
fi
tracked=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
device=$(du -sb .device | cut -f1)
names=$(cd .device && printf '%s ' */ | tr -d /)
total=$((tracked + device))
echo "carry: ${names}— $(awk -v b=$total 'BEGIN { printf "%.1f", b / 1e6 }') MB of 64"
# The run tool refuses a working tree over its 64 MiB limit (tracked files and
# carry), counted otherwise than du -b: 66.1 MB here was refused on 2026-12-06
# and 61.0 MB went, so keep under 64,000,000 bytes.
# Over it, the builds this call brought back are parked again, so that a
# call made anyway is not refused for the size of the working tree.
if [ $total -gt 64000000 ]; then
  for name in "${moved_in[@]}"; do
    mv ".device/$name" ".device-parked/$name"
  done
  echo "carry.sh: over the run tool's limit (64 MB by this count): name fewer builds${moved_in[*]:+ (parked again: ${moved_in[*]})}" >&2
  exit 1
fi
