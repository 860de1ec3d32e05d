#!/bin/bash
# Prints one hash of the GDN kernel and benchmark sources as they are in the
# working tree (every tracked file under gdn/ and bench/, bench/results
# aside): tools/device_pack.sh writes it beside a build it packs
# (.device/NAME/sources.stamp), and bench/results/pending/carry.sh compares
# .device/bin's with the tree's before a device call.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -z -- gdn bench ':(exclude)bench/results' | xargs -0 sha1sum |
  sha1sum | cut -c1-40
