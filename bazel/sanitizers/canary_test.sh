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

# expect_libs <instrumented | system>: where absl and gRPC are loaded from. tsan_full binaries carry
# an RPATH to .tools/tsan/lib (tools/tsan_libs.sh writes it into .tools/tsan/tsan.bazelrc).
expect_libs() {
  local want="$1" out bad
  out=$("$canary" loaded-libs 2>&1) || { echo "FAIL loaded-libs: rc=$?: $out"; fail=1; return; }
  if [ "$want" = instrumented ]; then
    bad=$(grep -v '^grpc version' <<<"$out" | grep -v '/\.tools/tsan/lib/')
  else
    bad=$(grep -v '^grpc version' <<<"$out" | grep -Ev ' (/usr)?/lib/')
  fi
  if [ -z "$bad" ]; then
    echo "ok   loaded-libs: $want:"; sed 's/^/       /' <<<"$out"
  else
    echo "FAIL loaded-libs: expected the $want absl and gRPC, got:"; echo "$out"
    [ "$want" = instrumented ] &&
      echo "(--config=tsan_full needs the libraries of tools/tsan_libs.sh: run it once; docs/TESTING.md)"
    fail=1
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
    expect_libs system
    ;;
  tsan-full)
    expect race 1 "ThreadSanitizer: data race"
    expect rollout-mutex 0
    # The instrumented libabsl makes absl::Mutex visible: the same correct code is now clean.
    expect absl-mutex 0
    expect_libs instrumented
    ;;
  none)
    expect rollout-mutex 0
    expect absl-mutex 0
    ;;
  *) echo "unknown sanitizer '$which'"; fail=1 ;;
esac
exit $fail
