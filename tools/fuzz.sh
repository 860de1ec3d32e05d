#!/bin/bash
# Longer fuzzing runs of one cc_fuzz_test target (bazel/fuzz.bzl), with libFuzzer + ASan/UBSan.
#
#   tools/fuzz.sh <target> [seconds=600] [libFuzzer flags...]
#   tools/fuzz.sh //tests/fuzz:request_fuzzer 3600
#   tools/fuzz.sh model:safetensors_fuzzer 600 -jobs=2 -workers=2
#   tools/fuzz.sh //tests/fuzz:reload_config_fuzzer 0 -runs=0     # replay the corpus only
#   FUZZ_MERGE=1 tools/fuzz.sh //tests/fuzz:request_fuzzer 1800    # then merge new coverage into
#                                                                  # the committed corpus (minimised)
#   tools/fuzz.sh <target> repro <crash file>                     # re-run one input, full report
#
# Builds <target>_bin with --config=fuzz (clang, ASan + UBSan + libFuzzer); BAZEL_STARTUP_FLAGS
# is put before the command (e.g. "--output_base=/root/.cache/bazel/ob_fuzz"). The run works on a
# scratch copy under ${FUZZ_WORK:-/tmp/rollout-fuzz}/<name>/ (new inputs in corpus/, crashes in
# artifacts/); the committed corpus is only changed by FUZZ_MERGE=1. A crash prints the command
# that reproduces it; commit the input as <corpus>/regression-<what> and add a unit test.
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -ge 1 ] || { sed -n '2,17p' "$0"; exit 2; }
target="$1"; shift
case "$target" in //*) ;; *) target="//$target" ;; esac
pkg="${target#//}"; pkg="${pkg%%:*}"
name="${target##*:}"
read -r -a startup <<<"${BAZEL_STARTUP_FLAGS:-}"

corpus=$(bazel "${startup[@]}" query --output=build "$target" 2>/dev/null |
         grep -oE '"'"$pkg"'/[^"]*corpus[^"]*"' | tr -d '"' | head -1 || true)
[ -n "$corpus" ] && [ -d "$corpus" ] || { echo "fuzz.sh: no corpus directory found for $target" >&2; exit 1; }
dict="$pkg/$(bazel "${startup[@]}" query --output=build "$target" 2>/dev/null |
             grep -oE '"\$\(location [^)]*\.dict\)"' | sed -E 's/.*location :?([^)]*)\)"/\1/' | head -1 || true)"

bazel "${startup[@]}" build --config=fuzz "${target}_bin"
bin="$(bazel "${startup[@]}" info --config=fuzz bazel-bin)/$pkg/${name}_bin"

work="${FUZZ_WORK:-/tmp/rollout-fuzz}/$name"
mkdir -p "$work/corpus" "$work/artifacts"
flags=(-artifact_prefix="$work/artifacts/" -print_final_stats=1 -timeout=20 -rss_limit_mb=2560)
[ -f "$dict" ] && flags+=(-dict="$dict")

if [ "${1:-}" = repro ]; then
  exec "$bin" "${flags[@]}" "$2"
fi
seconds="${1:-600}"; shift || true
echo "fuzz.sh: $bin for ${seconds}s, corpus $corpus (+ $work/corpus), crashes -> $work/artifacts/"
set +e
"$bin" "${flags[@]}" -max_total_time="$seconds" "$@" "$work/corpus" "$corpus"
rc=$?
set -e
if [ $rc -ne 0 ]; then
  echo "fuzz.sh: FOUND A PROBLEM (exit $rc). Inputs: $(ls "$work"/artifacts/)"
  echo "  reproduce: tools/fuzz.sh $target repro $work/artifacts/<file>"
  echo "  then: cp <file> $corpus/regression-<what>; fix; add a unit test"
  exit $rc
fi
if [ "${FUZZ_MERGE:-0}" = 1 ]; then
  before=$(ls "$corpus" | wc -l)
  "$bin" -merge=1 "${flags[@]}" "$corpus" "$work/corpus"
  echo "fuzz.sh: merged into $corpus: $before -> $(ls "$corpus" | wc -l) files (review before committing)"
fi
