#!/bin/bash
# Asserts that the sanitizer of this build reports the canary's bugs and nothing else (canary.cc).
# In a build without sanitizers it only checks that the correct modes run cleanly.
set -uo pipefail
canary="$1"
which=$("$canary" which)
echo "build sanitizer: $which"
fail=0

# expect <mode> <0: must run clean | 1: must fail with this report text> [text]
expect() {
  local mode="$1" want_fail="$2" text="${3:-}"
  local out rc
  out=$("$canary" "$mode" 2>&1)
  rc=$?
  if [ "$want_fail" = 1 ]; then
    if [ $rc -ne 0 ] && grep -q -- "$text" <<<"$out"; then
      echo "ok   $mode: reported ($text)"
    else
      echo "FAIL $mode: expected a report containing '$text', got rc=$rc:"; echo "$out" | head -30
      fail=1
    fi
  else
    if [ $rc -eq 0 ]; then
      echo "ok   $mode: clean"
    else
      echo "FAIL $mode: expected a clean run, got rc=$rc:"; echo "$out" | head -40
      fail=1
    fi
  fi
}

case "$which" in
  asan)
    expect heap-overflow 1 "heap-buffer-overflow"
    expect signed-overflow 1 "signed integer overflow"
    expect rollout-mutex 0
    ;;
  tsan)
    expect race 1 "ThreadSanitizer: data race"
    expect rollout-mutex 0
    expect absl-mutex 1 "ThreadSanitizer: data race"
    ;;
  none)
    expect rollout-mutex 0
    expect absl-mutex 0
    ;;
  *) echo "unknown sanitizer '$which'"; fail=1 ;;
esac
exit $fail
