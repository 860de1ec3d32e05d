#!/bin/bash
# Runs one cc_fuzz_test (bazel/fuzz.bzl): fuzz_test_runner.sh <binary> <engine file> <min coverage>
# <max len> <dict or -> <corpus dir>...
#   replay engine:    the binary replays the corpus (+ mutations); must end with "no crash".
#   libFuzzer engine: FUZZ_SECONDS (default 60) of fuzzing from the corpus; must exit 0 and reach
#                     min coverage. New inputs go to a scratch corpus; crash inputs are written to
#                     the test's undeclared outputs (bazel-testlogs/<target>/test.outputs/).
set -uo pipefail
bin="$1"; engine=$(cat "$2"); min_cov="$3"; max_len="$4"; dict="$5"; shift 5
corpus=("$@")
out_dir="${TEST_UNDECLARED_OUTPUTS_DIR:-${TEST_TMPDIR:-/tmp}}"
log="${TEST_TMPDIR:-/tmp}/fuzz.log"

if [ "$engine" = replay ]; then
  "$bin" "${corpus[@]}" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ] || ! grep -q "no crash" "$log"; then
    echo "FAIL: replay of ${corpus[*]} exited $rc"; exit 1
  fi
  exit 0
fi

seconds="${FUZZ_SECONDS:-60}"
scratch="${TEST_TMPDIR:-/tmp}/corpus"
mkdir -p "$scratch"
flags=(-max_total_time="$seconds" -max_len="$max_len" -timeout=20 -rss_limit_mb=2560
       -print_final_stats=1 -artifact_prefix="$out_dir/")
[ "$dict" != "-" ] && flags+=(-dict="$dict")
echo "libFuzzer for ${seconds}s: $bin ${flags[*]} $scratch ${corpus[*]}"
"$bin" "${flags[@]}" "$scratch" "${corpus[@]}" >"$log" 2>&1
rc=$?
# The start and the end, not 60 s of progress lines.
grep -E "INFO: (Seed|Loaded|-max_len)|INITED|DONE|ERROR|WARNING|SUMMARY|stat::|==[0-9]+==|^#[0-9]+ +NEW" "$log" | head -40
grep -E "DONE|stat::" "$log" | tail -8
if [ "$rc" -ne 0 ]; then
  echo "FAIL: libFuzzer exited $rc; the report:"
  grep -v -E "^#[0-9]+ " "$log" | tail -80
  echo "crash input(s) in the test outputs (bazel-testlogs/.../test.outputs/): $(ls "$out_dir" 2>/dev/null | tr '\n' ' ')"
  exit 1
fi
cov_init=$(grep -oE "INITED cov: [0-9]+" "$log" | grep -oE "[0-9]+$" | head -1)
cov_done=$(grep -oE "DONE +cov: [0-9]+" "$log" | grep -oE "[0-9]+$" | tail -1)
ft_init=$(grep -oE "INITED cov: [0-9]+ ft: [0-9]+" "$log" | grep -oE "[0-9]+$" | head -1)
ft_done=$(grep -oE "DONE +cov: [0-9]+ ft: [0-9]+" "$log" | grep -oE "[0-9]+$" | tail -1)
execs=$(grep -oE "stat::number_of_executed_units: [0-9]+" "$log" | grep -oE "[0-9]+$" | head -1)
echo "coverage: ${cov_init:-?} -> ${cov_done:-?} edges, features ${ft_init:-?} -> ${ft_done:-?}, ${execs:-?} executions"
if [ -z "$cov_done" ] || [ "$cov_done" -lt "$min_cov" ]; then
  echo "FAIL: coverage ${cov_done:-none} below the floor $min_cov: the target does not reach the code it fuzzes"
  exit 1
fi
# The run explored beyond its seeds (libFuzzer kept inputs with new features).
if [ -z "$ft_done" ] || [ -z "$ft_init" ] || [ "$ft_done" -le "$ft_init" ]; then
  echo "FAIL: no new coverage features in ${seconds}s (${ft_init:-?} -> ${ft_done:-?}): the mutations do not get anywhere"
  exit 1
fi
exit 0
