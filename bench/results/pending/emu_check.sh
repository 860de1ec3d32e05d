#!/bin/bash
# Runs the kernel tests of each pending patch of a set (sets.sh: emu_tests) on the CPU
# emulation (gdn/emu/README.md): HEAD first, then each patch applied alone
# (reverted with git apply -R after each). No GPU needed. From the repository root:
#   bash bench/results/pending/emu_check.sh decode    # ~1 min per build
#   bash bench/results/pending/emu_check.sh prefill   # ~10 s per build
# One line per build ("<name>: passed" or what failed); exits 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/../../.."
pending=bench/results/pending
source "$pending/sets.sh"
pending_set "${1:-}" ||
  { echo "usage: bash $pending/emu_check.sh prefill|decode" >&2; exit 2; }
require_clean_sources emu_check.sh
failed=0
check() {  # name
  local log
  log=$(mktemp)
  if bazel test --test_output=errors "${emu_tests[@]}" > "$log" 2>&1; then
    echo "$1: passed"
  else
    echo "$1: FAILED (log: $log)"
    failed=1
  fi
}
check HEAD
for v in "${variants[@]}"; do
  if ! git apply "$dir/$v.patch"; then
    echo "$v: does not apply"
    failed=1
    continue
  fi
  check "$v"
  git apply -R "$dir/$v.patch"
done
exit $failed
