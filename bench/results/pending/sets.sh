# The two sets of pending A/B builds (README.md here), for pack.sh and
# emu_check.sh (sourced). pending_set prefill|decode sets:
#   dir       the set's patches (each applied alone, reverted by git apply -R);
#   base      its unpatched build;    variants its patches, in A/B order;
#   test      the GPU kernel test;    emu_tests the kernel tests on the CPU emulation
#                                     (an array: the set's own test first);
#   tested    the builds the device call tests (space-delimited).
# Returns 1 for an unknown set.
pending_set() {
  local pending=bench/results/pending
  case "$1" in
    prefill)
      # Its patches (unroll4, state_lean, chunk_ldv4, all) shipped as `all`
      # in eaa6470 (run 75, docs/benchmarks/gdn_history.md): only HEAD is left.
      dir=$pending base=base
      test=//gdn:prefill_test emu_tests=(//gdn:prefill_emu_test)
      variants=()
      tested=""
      ;;
    decode)
      dir=$pending/decode base=dbase
      # layer_decode: the conv -> decode pair, whose PDL contract the
      # emulation checks (gdn/emu/README.md); lifecycle: the kernels as an
      # engine drives them (prefill, two layers, fold, fork, second turn).
      test=//gdn:decode_test
      emu_tests=(//gdn:decode_emu_test //gdn:layer_decode_emu_test
        //gdn:lifecycle_emu_test)
      # The previous sets ran in runs 81-82 and 84 (docs/benchmarks/gdn_history.md):
      # regfold8 shipped in 692959f; coefmma, leank, rowpipe and lkrp are in
      # the history at 2b4831d, regfold32 at 7436207; mmailp shipped (run 85);
      # foldnf and dotpair (runs 86-87) are in bench/results/run86, run87;
      # kfirst, bv16w4 and bv16b1 (run 88) in bench/results/run88;
      # coefpdl shipped and knokeep was rejected (run 94, both patches in
      # bench/results/run94); smemcap shipped (run 97, bench/results/run97).
      # kpf and coef5 (twenty-seventh session) wait for an H200: the 16/32
      # B = 1024 point (README.md).
      # hmaj (the packed step head-major) was rejected in run 99
      # (bench/results/run99); coef5 shipped after run 101 (its patch is in
      # bench/results/run101). kpf and coefmma (rebuilt on HEAD: the
      # precomputed route's flush on tensor cores) wait for an H200
      # (README.md).
      # tfirst (twenty-ninth session) and tfrule (tfirst with batch-1 steps
      # unstaged by the launcher) were rejected in run 102 (both patches in
      # bench/results/run102). kpf's decode_test passed on an H100 (run
      # 101): packed without it, so that the set fits the carry.
      # tilefirst (thirtieth session: the staged kernels copy the state tile
      # before the ring) was measured in run 103: batch 1 -2.1 %, B = 8 up
      # to +2.7 %; it shipped as ReplayCopyOrder (kAuto: tile first up to 32
      # pairs), its patch is in bench/results/run103.
      # regdots (thirty-first session: tile first, the coefficient dots read
      # their k rows from global memory) was rejected in run 105, its patch is
      # in bench/results/run105.
      # bulk (thirty-ninth session: the batch-1 two-warp tiles' state tile as
      # one bulk copy on an mbarrier) was rejected in run 112, its patch is in
      # bench/results/run112.
      # noscale (thirty-ninth session: q and k stay raw, their norm scales go
      # on the row sums, the coefficients and d) was rejected in run 113
      # (H200: B >= 128 cycles +1.4-3.2 %), its patch is in
      # bench/results/run113.
      # cap4 (forty-eighth session: kAuto caps the fused route's staged
      # fp32 bv64 ReplaySSM kernel at four CTAs per SM on a narrow-memory
      # card) shipped after run 127's A/B (H100), its patch is in
      # bench/results/run127.
      variants=(kpf coefmma)
      tested=" coefmma "
      ;;
    *)
      return 1
      ;;
  esac
}

# Exits 2 (naming the caller, $1) unless gdn/ and bench/ are unchanged
# (bench/results aside): the builds read the whole tree, and each patch is
# applied to it and reverted with git apply -R.
require_clean_sources() {
  git diff --quiet -- gdn bench ':(exclude)bench/results' ||
    { echo "$1: local changes under gdn/ or bench/ (bench/results aside)" >&2; exit 2; }
}
