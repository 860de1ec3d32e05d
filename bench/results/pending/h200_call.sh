#!/bin/bash
# The next H200 call, whole, in one device call: on an H200, the documented
# run on HEAD (bench/run_gdn_on_device.sh: the record), then the pending
# builds' A/B (bench/ab_on_device.sh) with as many passes as the call's time
# leaves. On any other card it runs, instead of the documented run, the GDN
# tests added since the last GPU run (NEW_TESTS, default lifecycle_test:
# seconds) and the batch-1 cost lines of FLUSH_BUILDS (gdn_bench --flush-cost,
# default bin: seconds each), then the A/B less the builds only an
# H200 can judge (H200_ONLY): that card's figures are not the record, but its
# tests and A/B answer what an H100 can. Run 85 did the H200 half by hand in
# 409 s; run 102 took the other path on an H100 in 237 s.
#
# Here, before the call (README.md in this folder packs the builds):
#   tools/device_pack.sh --gzip
#   bash bench/results/pending/carry.sh kpf coefmma
# then the run tool, carry [".device"], timeout 600:
#   bash bench/results/pending/h200_call.sh --h200-only --tests coefmma \
#     --limit 575 bin kpf coefmma
#
# The run tool returns at most eight files from $OUT. On an H200 this leaves
# four: doc.tgz (the documented run's files: tests, benchmark log and JSON,
# smi.csv, torch, sanitizer, sass), doc_run.log (its printed summary), ab.tgz
# (the A/B's logs and clock samples) and ab_run.log (its summary table); on
# another card the tests' logs and flush_cost_BUILD.log instead of the first
# two. The summaries are also printed.
#
# Options: --tests NAME[,NAME] (passed to ab_on_device.sh), --limit S (the
# call's seconds, default 590), --any-card (run on whatever card came: for
# checking this script, not for the record), --h200-only (on any other card
# stop at once, exit 3: a call costs its run time, so a session whose device
# time is short keeps it for a later H200).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 2
tests=""
limit=590
any_card=0
h200_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tests) tests="${2:?--tests needs a build name}"; shift 2 ;;
    --limit) limit="${2:?--limit needs seconds}"; shift 2 ;;
    --any-card) any_card=1; shift ;;
    --h200-only) h200_only=1; shift ;;
    *) break ;;
  esac
done
builds=("$@")
OUT="${OUT:-/tmp/h200_out}"
mkdir -p "$OUT"
t0=$SECONDS
stamp() { echo "[h200_call $((SECONDS - t0)) s] $*"; }

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
stamp "card: $gpu"
if [[ "$gpu" != *H200* && $any_card -eq 0 && $h200_only -eq 1 ]]; then
  stamp "not an H200, --h200-only: nothing run"
  exit 3
fi
if [[ "$gpu" != *H200* && $any_card -eq 0 ]]; then
  # The machine is paid for: the GDN tests new since the last GPU run
  # (seconds), the batch-1 cost lines, then the A/B with the time left; no
  # documented run (not the record's card).
  stamp "not an H200: the newest GDN tests, the flush-cost lines and the A/B (--any-card runs the documented run too)"
  bash bench/unpack_device.sh || exit 2
  export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
  doc_rc=0
  for t in ${NEW_TESTS:-lifecycle_test}; do
    timeout 120 ".device/bin/$t" > "$OUT/$t.log" 2>&1 || doc_rc=1
    stamp "$t: $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/$t.log" | tr '\n' ' ')"
  done
  # The batch-1 cost lines of the builds in FLUSH_BUILDS (default bin, where
  # packed): staged against unstaged ring, by ring fill.
  for b in ${FLUSH_BUILDS:-bin}; do
    [ -x ".device/$b/gdn_bench" ] || continue
    timeout 150 ".device/$b/gdn_bench" --no-micro --flush-cost \
      > "$OUT/flush_cost_$b.log" 2>&1 || doc_rc=1
    stamp "flush-cost of $b:"
    grep FLUSHCOST "$OUT/flush_cost_$b.log"
  done
  # The builds whose question only an H200 answers (H200_ONLY, default kpf
  # and coefmma: kpf passed decode_test and measured level on an H100 in run
  # 101, coefmma was rejected on one in run 81) stay out of this A/B.
  kept=()
  for b in "${builds[@]}"; do
    [[ " ${H200_ONLY:-kpf coefmma} " == *" $b "* ]] || kept+=("$b")
  done
  builds=("${kept[@]}")
  kept_tests=""  # and their tests
  IFS=',' read -r -a named_tests <<< "$tests"
  for b in "${named_tests[@]}"; do
    [[ " ${builds[*]} " == *" $b "* ]] && kept_tests+="${kept_tests:+,}$b"
  done
  tests=$kept_tests
  if [ ${#builds[@]} -lt 2 ]; then
    stamp "no two builds left to compare on this card: no A/B"
    exit $doc_rc
  fi
else
  # 1. The documented run, into $OUT/doc, then one tarball.
  OUT="$OUT/doc" bash bench/run_gdn_on_device.sh > "$OUT/doc_run.log" 2>&1
  doc_rc=$?
  tar czf "$OUT/doc.tgz" -C "$OUT" doc && rm -rf "$OUT/doc"
  stamp "documented run rc=$doc_rc"
  grep -E "^\[|^tests:" "$OUT/doc_run.log"
  sed -n '/^== GDN decode/,$p' "$OUT/doc_run.log" | head -20
  sed -n '/samples: SM clock/,$p' "$OUT/doc_run.log" | head -18
fi

# 2. The A/B, with the passes the call's time leaves: ~28 s per build and
# pass (H100, run 101), ~110 s per build under --tests, 20 s to spare.
if [ ${#builds[@]} -eq 0 ]; then
  stamp "no builds named: no A/B"
  exit $doc_rc
fi
ntests=0
[ -n "$tests" ] && ntests=$(($(tr -cd ',' <<< "$tests" | wc -c) + 1))
left=$((limit - (SECONDS - t0) - 20 - 110 * ntests))
passes=$((left / (28 * ${#builds[@]})))
[ $passes -gt 3 ] && passes=3
if [ $passes -lt 1 ]; then
  stamp "$left s left after the documented run: too little for one A/B pass"
  exit $doc_rc
fi
stamp "A/B: ${builds[*]}, $passes passes${tests:+, tests of $tests}"
ab_args=(--passes "$passes")
[ -n "$tests" ] && ab_args+=(--tests "$tests")
OUT="$OUT" bash bench/ab_on_device.sh "${ab_args[@]}" "${builds[@]}" > "$OUT/ab_run.log" 2>&1
ab_rc=$?
rm -rf "$OUT/ab"  # its files are in ab.tgz
stamp "A/B rc=$ab_rc"
tail -60 "$OUT/ab_run.log"
[ $doc_rc -eq 0 ] && exit $ab_rc
exit $doc_rc
